"""Principals, API keys, grants and protected references, and the shared
token-signing key (authentication and authorization).

Revision ID: 0003
Revises: 0002
"""

import secrets

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

BIGID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    state = op.create_table(
        "auth_state",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("generation", sa.BigInteger(), nullable=False),
        sa.Column("signing_key", sa.Text(), nullable=False),
    )
    # One row, written here so that every replica finds the same key.
    op.bulk_insert(state, [{"id": 1, "generation": 1,
                            "signing_key": secrets.token_urlsafe(48)}])
    op.create_table(
        "principals",
        sa.Column("name", sa.String(128), primary_key=True),
        sa.Column("roles", sa.Text(), nullable=False),
        sa.Column("created_us", sa.BigInteger(), nullable=False),
        sa.Column("revoked_us", sa.BigInteger()),
    )
    op.create_table(
        "api_keys",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("principal", sa.String(128), nullable=False),
        sa.Column("secret_hash", sa.Text(), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("created_us", sa.BigInteger(), nullable=False),
        sa.Column("revoked_us", sa.BigInteger()),
    )
    op.create_table(
        "grants",
        sa.Column("id", BIGID, primary_key=True, autoincrement=True),
        sa.Column("grantee", sa.String(140), nullable=False),
        sa.Column("privilege", sa.String(32), nullable=False),
        sa.Column("refs", sa.String(255), nullable=False),
        sa.Column("namespace", sa.Text(), nullable=False),
        sa.Column("created_us", sa.BigInteger(), nullable=False),
    )
    op.create_table(
        "protected_refs",
        sa.Column("pattern", sa.String(255), primary_key=True),
        sa.Column("created_us", sa.BigInteger(), nullable=False),
    )


def downgrade() -> None:
    for table in ("protected_refs", "grants", "api_keys", "principals", "auth_state"):
        op.drop_table(table)
