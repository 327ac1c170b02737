"""The class poll's tables: sessions, questions, students, answers, submissions.

Revision ID: 0001
Revises:
"""
import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create the five tables (see classroom/store.py for what each holds)."""
    op.create_table(
        "poll_session",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("code", sa.String(8), nullable=False, unique=True),
        sa.Column("teacher_key_hash", sa.String(64), nullable=False, index=True),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("expires_at", sa.Float, nullable=False, index=True),
        sa.Column("question_seq", sa.Integer, nullable=False, server_default="0"),
        sa.Column("state", sa.String(10), nullable=False, server_default="idle"),
    )
    op.create_table(
        "poll_question",
        sa.Column("session_id", sa.String(32), sa.ForeignKey("poll_session.id", ondelete="CASCADE"),
                  primary_key=True),
        sa.Column("seq", sa.Integer, primary_key=True),
        sa.Column("spec", sa.Text, nullable=False),
        sa.Column("asked_at", sa.Float, nullable=False),
    )
    op.create_table(
        "poll_student",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("session_id", sa.String(32), sa.ForeignKey("poll_session.id", ondelete="CASCADE"),
                  nullable=False, index=True),
        sa.Column("nickname", sa.String(24), nullable=False, server_default=""),
        sa.Column("joined_at", sa.Float, nullable=False),
    )
    op.create_table(
        "poll_answer",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("session_id", sa.String(32), sa.ForeignKey("poll_session.id", ondelete="CASCADE"),
                  nullable=False),
        sa.Column("question_seq", sa.Integer, nullable=False),
        sa.Column("student_id", sa.String(32), nullable=False),
        sa.Column("text", sa.String(32), nullable=False),
        sa.Column("value", sa.Float, nullable=False),
        sa.Column("unit", sa.String(12), nullable=False),
        sa.Column("answered_at", sa.Float, nullable=False),
        sa.UniqueConstraint("session_id", "question_seq", "student_id", name="uq_poll_answer_one_per_student"),
    )
    op.create_table(
        "poll_submit",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("student_id", sa.String(32), nullable=False, index=True),
        sa.Column("at", sa.Float, nullable=False, index=True),
    )


def downgrade() -> None:
    """Drop the five tables."""
    for name in ("poll_submit", "poll_answer", "poll_student", "poll_question", "poll_session"):
        op.drop_table(name)
