"""Idempotency keys (store.idempotency): one row per (principal, key) with
the request's digest and its answer, written with the commit it made.

Revision ID: 0007
Revises: 0006
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

HASH = sa.String(64).with_variant(sa.String(64, collation="C"), "postgresql")


def upgrade() -> None:
    op.create_table(
        "idempotency",
        sa.Column("principal", sa.Text(), primary_key=True),
        sa.Column("request_key", sa.String(64), primary_key=True),
        sa.Column("fingerprint", sa.String(64), nullable=False),
        sa.Column("status", sa.Integer(), nullable=False),
        sa.Column("media_type", sa.Text(), nullable=True),
        sa.Column("body", sa.LargeBinary(), nullable=False),
        sa.Column("commit_hash", HASH, nullable=True),
        sa.Column("expires_us", sa.BigInteger(), nullable=False),
    )
    op.create_index("ix_idempotency_expires_us", "idempotency", ["expires_us"])


def downgrade() -> None:
    op.drop_index("ix_idempotency_expires_us", table_name="idempotency")
    op.drop_table("idempotency")
