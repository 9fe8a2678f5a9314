"""What reads what: one row per (object read, view, view version's metadata
file), so "what reads X" is an index look-up, not a scan of every view.

Revision ID: 0004
Revises: 0003
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "view_edges",
        sa.Column("base_key", sa.Text(), primary_key=True),
        sa.Column("view_key", sa.Text(), primary_key=True),
        sa.Column("location", sa.Text(), primary_key=True),
    )


def downgrade() -> None:
    op.drop_table("view_edges")
