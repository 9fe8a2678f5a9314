"""The headers of a kept answer (store.idempotency): a replay carries the
first answer's ETag (and any Location) as well as its status, media type
and body. Rows kept before have none.

Revision ID: 0012
Revises: 0011
"""

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("idempotency", sa.Column("headers", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("idempotency") as batch:
        batch.drop_column("headers")
