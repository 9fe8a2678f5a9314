"""Opening a catalog created by an older schema: converted when it can be,
refused with a message when it cannot, never half-converted."""

from pathlib import Path

import pytest
from alembic import command
from alembic.config import Config
from sqlalchemy import text

import store.migrate
from core.commits import NO_ANCESTOR
from core.errors import IncompatibleStoreError
from store import Store
from store.db import Database
from tests.store.helpers import K, put_new, table, with_ns


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
