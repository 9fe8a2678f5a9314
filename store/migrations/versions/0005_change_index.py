"""The change index (store.changes): each commit's place on its first-parent
chain, and posting lists of the commits that changed a key, a content id or
were made by an author; filled here for every commit already stored.

Revision ID: 0005
Revises: 0004
"""

import sqlalchemy as sa
from alembic import op

from store.changes import backfill
from store.commit_records import COMMIT_COLUMNS, record_from_row
from store.schema import ANCESTRY, CHANGES

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

_HASH = sa.String(64).with_variant(sa.String(64, collation="C"), "postgresql")
_CHUNK = 5_000


def upgrade() -> None:
    op.create_table(
        "ancestry",
        sa.Column("hash", _HASH, primary_key=True),
        sa.Column("parent", _HASH),
        sa.Column("depth", sa.BigInteger()),
        sa.Column("created_us", sa.BigInteger()),
        sa.Column("jump", _HASH),
        sa.Column("jump_depth", sa.BigInteger()),
        sa.Column("jump_created_us", sa.BigInteger()),
        # SQLite: one B-tree (the key) instead of a rowid table plus its key
        # index, so a commit dirties half the pages (its cost is the WAL write).
        sqlite_with_rowid=False,
    )
    op.create_table(
        "changes",
        sa.Column("term", sa.Text(), primary_key=True),
        sa.Column("generation", sa.BigInteger(), primary_key=True),
        sa.Column("hash", _HASH, primary_key=True),
        sa.Column("depth", sa.BigInteger()),
        sa.Column("created_us", sa.BigInteger()),
        sa.Column("kind", sa.String(1)),
        sqlite_with_rowid=False,
    )
    conn = op.get_bind()
    records = [record_from_row(r) for r in conn.execute(sa.select(*COMMIT_COLUMNS))]
    if not records:
        return
    anc: list[dict[str, object]] = []
    rows: list[dict[str, object]] = []
    names = [c.name for c in CHANGES.c]
    for a, posting in backfill(records):
        anc.append(dict(zip([c.name for c in ANCESTRY.c], a.row(), strict=True)))
        rows += [dict(zip(names, r, strict=True)) for r in posting]
        if len(rows) >= _CHUNK or len(anc) >= _CHUNK:
            _flush(conn, anc, rows)
    _flush(conn, anc, rows)


def _flush(conn: sa.Connection, anc: list[dict[str, object]],
           rows: list[dict[str, object]]) -> None:
    if anc:
        conn.execute(ANCESTRY.insert(), anc)
        anc.clear()
    if rows:
        conn.execute(CHANGES.insert(), rows)
        rows.clear()


def downgrade() -> None:
    op.drop_table("changes")
    op.drop_table("ancestry")
