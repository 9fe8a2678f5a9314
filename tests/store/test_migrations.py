"""Opening a catalog created by an older schema: converted when it can be,
refused with a message when it cannot, never half-converted."""

from pathlib import Path

import pytest
from alembic import command
from alembic.config import Config
from sqlalchemy import Connection, text

import store.migrate
from core.commits import NO_ANCESTOR
from core.errors import IncompatibleStoreError
from store import Store
from store.db import Database
from tests.fixtures import database_url
from tests.store.helpers import K, put_new, table, with_ns


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Nothing in it: these tests make the older schemas themselves (the
    suite's other databases start migrated, tests/fixtures.py)."""
    return database_url(request, request.param, tmp_path, migrated=False)


def _format_1(url: str, with_history: bool) -> None:
    """A catalog as the first pre-release left it (schema revision 0001)."""
    db = Database(url)
    cfg = Config()
    cfg.set_main_option("script_location",
                        str(Path(store.migrate.__file__).parent / "migrations"))
    with db.write() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0001")
        rows = [(NO_ANCESTOR, None)] + ([("ab" * 32, NO_ANCESTOR)] if with_history else [])
        for h, parent in rows:
            conn.execute(text(
                "INSERT INTO commits (hash, parent, generation, created_us, message, "
                "properties, operations, loc) VALUES (:h, :p, 0, 0, '', '{}', '[]', :loc)"),
                {"h": h, "p": parent, "loc": h[:16]})
        conn.execute(text("INSERT INTO refs VALUES ('main', 'BRANCH', :h, 0)"),
                     {"h": rows[-1][0]})
    db.dispose()


def test_an_empty_old_catalog_is_converted(store_url: str):
    _format_1(store_url, with_history=False)
    s = Store(store_url)
    try:
        assert s.get_reference("main").hash == NO_ANCESTOR
        with_ns(s, "main", "ns")
        put_new(s, "main", ("ns.t", table("t")))
        assert s.content("main", K("ns.t")).metadata_location == "t"
    finally:
        s.close()


def test_an_old_catalog_with_history_is_refused_untouched(store_url: str):
    _format_1(store_url, with_history=True)
    with pytest.raises(IncompatibleStoreError, match="storage format 1"):
        Store(store_url)
    db = Database(store_url)
    try:
        with db.read() as conn:
            version = conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
            columns = conn.execute(text("SELECT * FROM commits")).keys()
        assert version == "0001" and "delta" in columns and "depth" not in columns
    finally:
        db.dispose()


def test_the_change_index_is_filled_for_a_catalog_written_before_it(store_url: str):
    """Migration 0005 on a catalog of the previous version: its commits (with
    branches, a merge, a rename and a transplant) get exactly the rows the
    writer gives new commits, and the audit and log answer as before."""
    from core.commits import CommitMeta, Delete, Put
    from store.fsck import fsck
    from tests.store.helpers import update

    s = Store(store_url)
    try:
        with_ns(s, "main", "ns")
        put_new(s, "main", ("ns.t", table("t0")), ("ns.u", table("u0")), author="ana")
        s.create_reference("dev")
        for i in range(5):
            update(s, "dev", "ns.t", metadata_location=f"dev{i}")
        cur = s.content("dev", K("ns.u"))
        s.commit("dev", [Delete(K("ns.u"), expected=cur), Put(K("ns.w"), cur)],
                 CommitMeta("rename u", author="bo"))
        update(s, "main", "ns.u", metadata_location="main1")
        s.create_reference("side")
        put_new(s, "side", ("ns.x", table("x0")))
        s.transplant([s.get_reference("side").hash], "main")
        s.merge("dev", "main", raise_on_conflict=False)
        tid = s.content("main", K("ns.t")).id
        before_lineage = [c.hash for c in s.lineage("main", tid)]
        before_log = [c.hash for c in s.log("main", key=K("ns.t")).items]
        with s.db.read() as conn:
            rows = {t: sorted(map(tuple, conn.execute(text(f"SELECT * FROM {t}"))))
                    for t in ("ancestry", "changes")}
        assert len(rows["changes"]) > 20
        with s.db.write() as conn:  # back to the previous version's schema
            conn.execute(text("DROP TABLE changes"))
            conn.execute(text("DROP TABLE ancestry"))
            conn.execute(text("DROP TABLE locations"))  # revision 0006's
            conn.execute(text("DROP TABLE idempotency"))  # revision 0007's
            conn.execute(text("DROP TABLE events"))  # revision 0008's
            conn.execute(text("DROP TABLE webhooks"))  # revision 0009's
            conn.execute(text("DROP TABLE retention_policies"))  # revision 0010's
            conn.execute(text("DROP INDEX ix_reflog_deleted"))  # revision 0010's
            drop_cutoff_index(conn)  # revision 0011's
            conn.execute(text("DROP TABLE imported_commits"))  # revision 0013's
            conn.execute(text("UPDATE alembic_version SET version_num = '0004'"))
    finally:
        s.close()
    s = Store(store_url)
    try:
        with s.db.read() as conn:
            assert {t: sorted(map(tuple, conn.execute(text(f"SELECT * FROM {t}"))))
                    for t in ("ancestry", "changes")} == rows
        assert [c.hash for c in s.lineage("main", tid)] == before_lineage
        assert [c.hash for c in s.log("main", key=K("ns.t")).items] == before_log
        assert fsck(s).ok
    finally:
        s.close()


def drop_cutoff_index(conn: Connection) -> None:
    """Back to the schema before revision 0011 (store.cutoff_index)."""
    conn.execute(text("DROP TABLE deleted_refs"))
    for index in ("ix_refs_count", "ix_refs_keep"):
        conn.execute(text(f"DROP INDEX {index}"))
    for column in ("head_depth", "keep_commits", "keep_us"):
        conn.execute(text(f"ALTER TABLE refs DROP COLUMN {column}"))
