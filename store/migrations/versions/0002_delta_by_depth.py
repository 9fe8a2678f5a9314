"""Commits record their depth since the last materialized index root instead
of carrying their delta; packs are found by a range on the hash instead of a
loc column and its index.

Revision ID: 0002
Revises: 0001

Only a catalog with no commits yet (the root alone, as ``sapwood init``
leaves it) can be converted: the pre-release format 1 hashed commits over
their stored deltas, and those hashes cannot be re-derived. A catalog with
history is refused with a message rather than half-converted.
"""

import sqlalchemy as sa
from alembic import op

from core.errors import IncompatibleStoreError

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    bind = op.get_bind()
    written = bind.execute(sa.text("SELECT count(*) FROM commits WHERE parent IS NOT NULL"))
    if written.scalar_one():
        raise IncompatibleStoreError(
            "this catalog was written by a pre-release Sapwood (storage format 1) and "
            "cannot be upgraded: create a new catalog (sapwood init --database …)")
    op.drop_index("ix_commits_loc", table_name="commits")
    with op.batch_alter_table("commits") as batch:
        batch.drop_column("delta")
        batch.drop_column("loc")
        batch.add_column(sa.Column("depth", sa.Integer(), nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("commits") as batch:
        batch.drop_column("depth")
        batch.add_column(sa.Column("delta", sa.Text()))
        batch.add_column(sa.Column("loc", sa.String(16), nullable=False, server_default=""))
    op.create_index("ix_commits_loc", "commits", ["loc"])
