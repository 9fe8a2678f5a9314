"""The commits an import brought (store.imports): the source's hash of
each (a Nessie commit's) and the commit it became here, so an interrupted
import continues where it stopped and a second one adds only what is new.

Revision ID: 0013
Revises: 0012
"""

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None

_HASH = sa.String(64).with_variant(sa.String(64, collation="C"), "postgresql")


def upgrade() -> None:
    op.create_table(
        "imported_commits",
        sa.Column("source_hash", sa.String(128), primary_key=True),
        sa.Column("hash", _HASH, nullable=False),
    )
    op.create_index("ix_imported_commits_hash", "imported_commits", ["hash"])


def downgrade() -> None:
    op.drop_index("ix_imported_commits_hash", "imported_commits")
    op.drop_table("imported_commits")
