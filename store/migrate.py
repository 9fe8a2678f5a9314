"""Schema migrations (Alembic), run on open. Concurrent openers serialise on a
lock (PostgreSQL advisory lock; SQLite's write lock), so the schema is
created exactly once."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import Connection, insert, select, text

from core.commits import DEFAULT_BRANCH, NO_ANCESTOR, RefType
from store.changes import root_ancestry
from store.db import Database
from store.events import EventLog
from store.schema import ANCESTRY, COMMITS, REFLOG, REFS

_LOCK_ID = 0x5A9_0001


def upgrade(db: Database) -> None:
    cfg = Config()
    cfg.set_main_option("script_location", str(Path(__file__).parent / "migrations"))
    with db.write() as conn:
        if db.dialect == "postgresql":
            conn.execute(text("SELECT pg_advisory_xact_lock(:id)"), {"id": _LOCK_ID})
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "head")


def schema_problem(db: Database) -> str | None:
    """Why the database is not ready for this version (None: it is): its
    schema revision must be the newest this version knows."""
    from alembic.script import ScriptDirectory

    cfg = Config()
    cfg.set_main_option("script_location", str(Path(__file__).parent / "migrations"))
    head = ScriptDirectory.from_config(cfg).get_current_head()
    with db.read() as conn:
        now = conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
    if now != head:
        return f"the schema is at revision {now}, this version needs {head}"
    return None


def bootstrap(db: Database, now_us: int) -> None:
    """The empty root commit and the default branch, if absent."""
    with db.write() as conn:
        if db.dialect == "postgresql":
            conn.execute(text("SELECT pg_advisory_xact_lock(:id)"), {"id": _LOCK_ID})
        _ensure_root(conn)
        if conn.execute(select(REFS.c.name).where(REFS.c.name == DEFAULT_BRANCH)).first():
            return
        if conn.execute(select(REFLOG.c.id).where(REFLOG.c.ref == DEFAULT_BRANCH)).first():
            return  # main existed once and was removed by hand: do not resurrect it silently
        conn.execute(insert(REFS).values(name=DEFAULT_BRANCH, type=RefType.BRANCH.value,
                                         head=NO_ANCESTOR, created_us=now_us))
        conn.execute(insert(REFLOG).values(ref=DEFAULT_BRANCH, ref_type=RefType.BRANCH.value,
                                           old_hash=None, new_hash=NO_ANCESTOR, at_us=now_us,
                                           principal=None, reason="create"))
        EventLog(db).append_conn(conn, "create", DEFAULT_BRANCH, RefType.BRANCH, None,
                                 NO_ANCESTOR, now_us, None)


def _ensure_root(conn: Connection) -> None:
    if not conn.execute(select(ANCESTRY.c.hash).where(ANCESTRY.c.hash == NO_ANCESTOR)).first():
        conn.execute(insert(ANCESTRY).values(dict(zip(
            [c.name for c in ANCESTRY.c], root_ancestry().row(), strict=True))))
    if conn.execute(select(COMMITS.c.hash).where(COMMITS.c.hash == NO_ANCESTOR)).first():
        return
    conn.execute(insert(COMMITS).values(
        hash=NO_ANCESTOR, parent=None, merge_parents=None, generation=0, created_us=0,
        author=None, committer=None, message="", properties="{}", operations="[]", root=None,
        depth=0))
