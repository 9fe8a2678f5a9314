"""Retention policies (store.retention): how much of each branch's history
the catalog keeps, in the order they are matched; and an index of the
reflog's deletions (the branches deleted within gc's grace period, which
still retain their history).

Revision ID: 0010
Revises: 0009
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "retention_policies",
        sa.Column("position", sa.Integer(), primary_key=True),
        sa.Column("refs", sa.String(255), nullable=False),
        sa.Column("keep", sa.String(64), nullable=True),
        sa.Column("keep_commits", sa.Integer(), nullable=True),
    )
    op.create_index("ix_reflog_deleted", "reflog", ["at_us"],
                    sqlite_where=sa.text("new_hash IS NULL"),
                    postgresql_where=sa.text("new_hash IS NULL"))


def downgrade() -> None:
    op.drop_index("ix_reflog_deleted", "reflog")
    op.drop_table("retention_policies")
