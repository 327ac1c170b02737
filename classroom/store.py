"""Storage of the class poll: the database engine, its tables and their migrations.

SQLite is the default (a file ``data/poll.sqlite`` beside the app, or under ``EXPLORER_DATA_DIR``), in
WAL mode so that every Streamlit process of one machine reads while one writes. Several machines share
one PostgreSQL database: ``EXPLORER_POLL_DATABASE_URL=postgresql+psycopg://user:password@host/db``
(psycopg 3). The schema is created and upgraded by Alembic at the first use in each process (the
migration scripts are in classroom/migrations/versions), under a lock so that processes starting together
do not race: a file lock for SQLite, an advisory lock for PostgreSQL.

Times are seconds since the epoch (float, UTC). SQLAlchemy 2 Core; no ORM.
"""
from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa
from filelock import FileLock

ROOT = Path(__file__).resolve().parent.parent
MIGRATIONS = Path(__file__).resolve().parent / "migrations"
URL_ENV = "EXPLORER_POLL_DATABASE_URL"
DATA_DIR_ENV = "EXPLORER_DATA_DIR"

metadata = sa.MetaData()
#: One class session: a join code for students, the hash of the teacher's key, the current question.
sessions = sa.Table(
    "poll_session", metadata,
    sa.Column("id", sa.String(32), primary_key=True),
    sa.Column("code", sa.String(8), nullable=False, unique=True),
    sa.Column("teacher_key_hash", sa.String(64), nullable=False, index=True),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("expires_at", sa.Float, nullable=False, index=True),
    sa.Column("question_seq", sa.Integer, nullable=False, server_default="0"),
    sa.Column("state", sa.String(10), nullable=False, server_default="idle"),
)
#: Every question asked in a session (seq 1, 2, ...), its spec as JSON (classroom.questions).
questions = sa.Table(
    "poll_question", metadata,
    sa.Column("session_id", sa.String(32), sa.ForeignKey("poll_session.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("seq", sa.Integer, primary_key=True),
    sa.Column("spec", sa.Text, nullable=False),
    sa.Column("asked_at", sa.Float, nullable=False),
)
#: A student who joined: a random id that only their browser holds, an optional nickname.
students = sa.Table(
    "poll_student", metadata,
    sa.Column("id", sa.String(32), primary_key=True),
    sa.Column("session_id", sa.String(32), sa.ForeignKey("poll_session.id", ondelete="CASCADE"), nullable=False,
              index=True),
    sa.Column("nickname", sa.String(24), nullable=False, server_default=""),
    sa.Column("joined_at", sa.Float, nullable=False),
)
#: One answer per student per question (the unique constraint), changed in place until answering closes.
answers = sa.Table(
    "poll_answer", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("session_id", sa.String(32), sa.ForeignKey("poll_session.id", ondelete="CASCADE"), nullable=False),
    sa.Column("question_seq", sa.Integer, nullable=False),
    sa.Column("student_id", sa.String(32), nullable=False),
    sa.Column("text", sa.String(32), nullable=False),
    sa.Column("value", sa.Float, nullable=False),
    sa.Column("unit", sa.String(12), nullable=False),
    sa.Column("answered_at", sa.Float, nullable=False),
    sa.UniqueConstraint("session_id", "question_seq", "student_id", name="uq_poll_answer_one_per_student"),
)
#: When each browser last submitted (the per-minute bound); rows older than an hour are purged.
submits = sa.Table(
    "poll_submit", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("student_id", sa.String(32), nullable=False, index=True),
    sa.Column("at", sa.Float, nullable=False, index=True),
)


def default_url() -> str:
    """The database URL: ``EXPLORER_POLL_DATABASE_URL`` if set, else the SQLite file data/poll.sqlite
    (under ``EXPLORER_DATA_DIR`` if set, else beside app.py), shared by every process of the machine."""
    url = os.environ.get(URL_ENV, "").strip()
    if url:
        return url
    folder = Path(os.environ.get(DATA_DIR_ENV, "").strip() or ROOT / "data")
    return f"sqlite:///{folder / 'poll.sqlite'}"


def _sqlite_setup(engine: sa.Engine) -> None:
    # The driver's own transaction handling is off; SQLAlchemy's begin emits BEGIN, or BEGIN IMMEDIATE for a
    # writer (execution option immediate=True): a deferred transaction that reads then writes fails at once
    # with SQLITE_BUSY when another process committed in between, an immediate one waits (busy_timeout).
    @sa.event.listens_for(engine, "connect")
    def _connect(dbapi_conn, _record):
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA synchronous=NORMAL")
        cur.execute("PRAGMA busy_timeout=10000")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.close()

    @sa.event.listens_for(engine, "begin")
    def _begin(conn):
        conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get("immediate") else "BEGIN")


@dataclass
class Store:
    """An engine on the poll's database, its schema at the newest migration.

    ``reader()`` opens a read transaction, ``writer()`` a write transaction (SQLite: BEGIN IMMEDIATE, one
    writer at a time across processes; PostgreSQL: READ COMMITTED, rows locked where the rules need it).
    """

    url: str
    engine: sa.Engine

    @property
    def dialect(self) -> str:
        """"sqlite" or "postgresql"."""
        return self.engine.dialect.name

    def reader(self):
        """A connection in a transaction, for reads (context manager)."""
        return self.engine.begin()

    def writer(self):
        """A connection in a transaction that will write (context manager)."""
        return self.engine.execution_options(immediate=True).begin()


def upgrade(engine: sa.Engine) -> None:
    """Bring the schema to the newest migration (Alembic ``upgrade head``), serialised across processes."""
    from alembic import command
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as conn:
        if engine.dialect.name == "postgresql":
            conn.execute(sa.text("SELECT pg_advisory_xact_lock(280028)"))  # held until this transaction ends
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "head")


def open_store(url: str | None = None) -> Store:
    """A new Store on ``url`` (default ``default_url()``), migrated.

    Raises:
        ValueError: a URL that is neither sqlite nor postgresql, or one SQLAlchemy cannot parse.
    """
    url = url or default_url()
    try:
        parsed = sa.make_url(url)
    except sa.exc.ArgumentError:
        raise ValueError("the poll's database URL is not a URL (expected sqlite:///path or "
                         "postgresql+psycopg://user:password@host/db)") from None
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        path = parsed.database
        if not path or path == ":memory:":
            raise ValueError("the poll needs a SQLite file that every process shares, not an in-memory database")
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        engine = sa.create_engine(parsed, connect_args={"timeout": 10.0})
        _sqlite_setup(engine)
        with FileLock(path + ".migrate.lock", timeout=60):
            upgrade(engine)
    elif backend == "postgresql":
        if parsed.get_driver_name() in ("", "psycopg2"):
            parsed = parsed.set(drivername="postgresql+psycopg")
        engine = sa.create_engine(parsed, pool_pre_ping=True, pool_size=5, max_overflow=5)
        upgrade(engine)
    else:
        raise ValueError(f"the poll's database must be sqlite or postgresql, got {backend!r}")
    return Store(url=url, engine=engine)


_stores: dict[str, Store] = {}
_lock = threading.Lock()


def get_store(url: str | None = None) -> Store:
    """The process's Store for ``url`` (default ``default_url()``): opened and migrated once, then shared."""
    url = url or default_url()
    with _lock:
        if url not in _stores:
            _stores[url] = open_store(url)
        return _stores[url]
