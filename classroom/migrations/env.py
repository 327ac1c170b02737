"""Alembic's environment for the poll's schema: runs on the connection classroom.store.upgrade passes in."""
from alembic import context

from classroom.store import metadata

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
