"""The cutoff index (store.cutoff_index): each reference's head depth and
retention class, and the branches deleted within gc's grace period, so that
a read at a commit finds the references that could retain it by index
look-ups; filled here from the references, the reflog and the policies.

Revision ID: 0011
Revises: 0010
"""

import time

import sqlalchemy as sa
from alembic import op

from store.cutoff_index import rebuild
from store.retention import grace_setting
from store.schema import KEEP_ALL

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

_HASH = sa.String(64).with_variant(sa.String(64, collation="C"), "postgresql")


def upgrade() -> None:
    op.add_column("refs", sa.Column("head_depth", sa.BigInteger(), nullable=False,
                                    server_default="0"))
    op.add_column("refs", sa.Column("keep_commits", sa.BigInteger(), nullable=False,
                                    server_default=str(KEEP_ALL)))
    op.add_column("refs", sa.Column("keep_us", sa.BigInteger(), nullable=True))
    op.create_index("ix_refs_count", "refs", ["keep_commits", "head_depth"])
    op.create_index("ix_refs_keep", "refs", ["keep_us", "head_depth"])
    op.create_table(
        "deleted_refs",
        sa.Column("name", sa.String(255), primary_key=True),
        sa.Column("type", sa.String(6), nullable=False),
        sa.Column("head", _HASH, nullable=False),
        sa.Column("deleted_us", sa.BigInteger(), nullable=False),
        sa.Column("head_depth", sa.BigInteger(), nullable=False),
        sa.Column("keep_commits", sa.BigInteger(), nullable=False),
        sa.Column("keep_us", sa.BigInteger(), nullable=True),
    )
    op.create_index("ix_deleted_refs_count", "deleted_refs", ["keep_commits", "head_depth"])
    op.create_index("ix_deleted_refs_keep", "deleted_refs", ["keep_us", "head_depth"])
    now_us = time.time_ns() // 1000
    rebuild(op.get_bind(), now_us - int(grace_setting() * 1_000_000))


def downgrade() -> None:
    op.drop_index("ix_deleted_refs_keep", "deleted_refs")
    op.drop_index("ix_deleted_refs_count", "deleted_refs")
    op.drop_table("deleted_refs")
    op.drop_index("ix_refs_keep", "refs")
    op.drop_index("ix_refs_count", "refs")
    with op.batch_alter_table("refs") as batch:
        batch.drop_column("keep_us")
        batch.drop_column("keep_commits")
        batch.drop_column("head_depth")
