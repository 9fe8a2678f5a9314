"""The change feed's outbox (store.events): one row per landed change,
written in the change's transaction.

Revision ID: 0008
Revises: 0007
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

HASH = sa.String(64).with_variant(sa.String(64, collation="C"), "postgresql")


def upgrade() -> None:
    op.create_table(
        "events",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), primary_key=True,
                  autoincrement=True),
        sa.Column("seq", sa.BigInteger(), nullable=True, unique=True),
        sa.Column("txid", sa.BigInteger(), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("ref", sa.String(255), nullable=False),
        sa.Column("ref_type", sa.String(6), nullable=False),
        sa.Column("old_hash", HASH, nullable=True),
        sa.Column("new_hash", HASH, nullable=True),
        sa.Column("at_us", sa.BigInteger(), nullable=False),
        sa.Column("principal", sa.Text(), nullable=True),
        sa.Column("data", sa.Text(), nullable=False),
    )
    op.create_index("ix_events_at_us", "events", ["at_us"])
    # The sequencer's work list (PostgreSQL): events not yet given a place.
    op.create_index("ix_events_unsequenced", "events", ["txid", "id"],
                    postgresql_where=sa.text("seq IS NULL"),
                    sqlite_where=sa.text("seq IS NULL"))


def downgrade() -> None:
    op.drop_index("ix_events_unsequenced", table_name="events")
    op.drop_index("ix_events_at_us", table_name="events")
    op.drop_table("events")
