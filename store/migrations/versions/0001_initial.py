"""The commit-log store: commits (with their packs), refs, reflog.

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

HASH = sa.String(64).with_variant(sa.String(64, collation="C"), "postgresql")


def upgrade() -> None:
    op.create_table(
        "commits",
        sa.Column("hash", HASH, primary_key=True),
        sa.Column("parent", HASH),
        sa.Column("merge_parents", sa.Text()),
        sa.Column("generation", sa.BigInteger(), nullable=False),
        sa.Column("created_us", sa.BigInteger(), nullable=False),
        sa.Column("author", sa.Text()),
        sa.Column("committer", sa.Text()),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("properties", sa.Text(), nullable=False),
        sa.Column("operations", sa.Text(), nullable=False),
        sa.Column("root", HASH),
        sa.Column("root_loc", sa.String(32)),
        sa.Column("delta", sa.Text()),
        sa.Column("loc", sa.String(16), nullable=False),
        sa.Column("pack", sa.LargeBinary()),
    )
    op.create_index("ix_commits_loc", "commits", ["loc"])
    op.create_table(
        "packs",
        sa.Column("loc", sa.String(32), primary_key=True),
        sa.Column("data", sa.LargeBinary(), nullable=False),
    )
    op.create_table(
        "refs",
        sa.Column("name", sa.String(255), primary_key=True),
        sa.Column("type", sa.String(6), nullable=False),
        sa.Column("head", HASH, nullable=False),
        sa.Column("created_us", sa.BigInteger(), nullable=False),
    )
    op.create_table(
        "reflog",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
                  primary_key=True, autoincrement=True),
        sa.Column("ref", sa.String(255), nullable=False),
        sa.Column("ref_type", sa.String(6), nullable=False),
        sa.Column("old_hash", HASH),
        sa.Column("new_hash", HASH),
        sa.Column("at_us", sa.BigInteger(), nullable=False),
        sa.Column("principal", sa.Text()),
        sa.Column("reason", sa.Text(), nullable=False),
    )
    op.create_index("ix_reflog_ref_at", "reflog", ["ref", "at_us", "id"])


def downgrade() -> None:
    op.drop_index("ix_reflog_ref_at", table_name="reflog")
    op.drop_index("ix_commits_loc", table_name="commits")
    for table in ("reflog", "refs", "packs", "commits"):
        op.drop_table(table)
