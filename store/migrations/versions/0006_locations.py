"""Who owns which storage location (store.locations): one row per claim
(location, content id), so a commit can refuse a location that overlaps
another object's on any reference. Catalogs from before start empty; the
next ``sapwood gc`` fills in the claims of the objects it finds.

Revision ID: 0006
Revises: 0005
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "locations",
        sa.Column("path", sa.Text(), primary_key=True),
        sa.Column("content_id", sa.Text(), primary_key=True),
    )


def downgrade() -> None:
    op.drop_table("locations")
