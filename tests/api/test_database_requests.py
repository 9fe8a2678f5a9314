"""What a commit costs the database (issue 48): a table commit and a view
replace, counted by the drivers' own trace hooks (SQLite's statements,
PostgreSQL's round trips), stay under a bound. What it costs the storage
is tests/api/test_storage_requests.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField
from sqlalchemy import event
from sqlalchemy.pool import Pool


class Traced:
    """What the database driver sends, through its own trace hooks, on every
    connection a pool opens while it listens (the store's dedicated
    connections' raw cursors included): on SQLite every statement
    (sqlite3's trace callback), on PostgreSQL every round trip (libpq's
    protocol trace: a simple query, or an extended query's Sync)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.files: list[Any] = []
        self.sqlite: list[str] = []

    def __call__(self, conn: Any, _record: Any) -> None:
        if hasattr(conn, "set_trace_callback"):
            conn.set_trace_callback(self.sqlite.append)
            return
        from psycopg.pq import Trace

        f = open(self.folder / f"pq{len(self.files)}.trace", "w")  # noqa: SIM115
        self.files.append(f)
        conn.pgconn.trace(f.fileno())
        conn.pgconn.set_trace_flags(Trace.SUPPRESS_TIMESTAMPS | Trace.REGRESS_MODE)

    def sent(self) -> list[list[str]]:
        """Statements (SQLite) or round trips (PostgreSQL) so far, in order,
        per connection (SQLite's all in one list)."""
        if not self.files:
            return [list(self.sqlite)]
        out = []
        for f in self.files:
            f.flush()
            trips, sent = [], ""
            for line in Path(f.name).read_text().splitlines():
                parts = line.split("\t")
                if parts[0] != "F" or len(parts) < 3:
                    continue
                if parts[2] in ("Parse", "Bind", "Query"):
                    sent += " ".join(parts[2:])[:120] + "; "
                if parts[2] in ("Query", "Sync"):
                    trips.append(sent)
                    sent = ""
            out.append(trips)
        return out

    def close(self) -> None:
        for f in self.files:
            f.close()


def test_database_requests_per_commit_stay_bounded(store_url: str, tmp_path: Path) -> None:
    """One table commit and one view replace in process, with a file
    warehouse: the statements (SQLite) or round trips (PostgreSQL) the
    store sends for each."""
    from pyiceberg.table.update import SetPropertiesUpdate
    from pyiceberg.view.metadata import SQLViewRepresentation, ViewVersion

    from catalog.commands import NewTable, NewView, TableCommit, ViewCommit
    from catalog.kernel import Who
    from catalog.services import open_services
    from catalog.settings import CatalogSettings
    from catalog.targets import target
    from core.keys import ContentKey
    from core.refs import parse_ref
    from core.views import SetProperties
    from store import Store

    traced = Traced(tmp_path)
    # Every connection of every pool opened from here on, before the store
    # opens its first.
    event.listen(Pool, "connect", traced)
    store = Store(store_url)
    try:
        warehouse = tmp_path / "warehouse"
        warehouse.mkdir()
        services = open_services(store, CatalogSettings(store.db.url, warehouse.as_uri()))
        main, ns, who = parse_ref("main"), ContentKey(["ns"]), Who("tester")
        schema = Schema(NestedField(1, "n", LongType(), required=False))
        services.namespaces.create(main, ns, {}, who)
        services.tables.create(main, ns, NewTable("t", schema), who)
        version = ViewVersion(version_id=1, schema_id=0, timestamp_ms=1, default_namespace=["ns"],
                              representations=[SQLViewRepresentation(
                                  type="sql", sql="SELECT 1 AS n", dialect="spark")])
        services.views.create(main, ns, NewView("v", schema, version), who)
        table, view = target(main, ns, "t"), target(main, ns, "v")
        acts = {
            "table": lambda i: services.tables.commit(table, TableCommit(
                updates=[SetPropertiesUpdate(updates={"a": str(i)})]), who),
            "view": lambda i: services.views.replace(view, ViewCommit(
                updates=[SetProperties(updates={"a": str(i)})]), who)}
        # Warm: what is done once per process is not per commit (psycopg
        # prepares a statement on its 5th use, in a round trip of its own).
        for i in range(6):
            for act in acts.values():
                act(i)
        counts: dict[str, list[str]] = {}
        for name, act in acts.items():
            before = traced.sent()
            act(6)
            after = traced.sent()
            counts[name] = [line for i, lines in enumerate(after)
                            for line in lines[len(before[i]) if i < len(before) else 0:]]
    finally:
        store.close()
        event.remove(Pool, "connect", traced)
        traced.close()
    # Today on SQLite: the reference's head read, then one transaction
    # (BEGIN, the commit, its ancestry row, three change-index rows, the
    # reference's move, its reflog row, the feed's event, COMMIT). On
    # PostgreSQL: the head read and the commit's one statement.
    bound = 11 if store.db.dialect == "sqlite" else 2
    assert len(counts["table"]) <= bound, counts["table"]
    assert len(counts["view"]) <= bound, counts["view"]
