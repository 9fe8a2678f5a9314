"""Materialized views, the pure parts: the metadata document and its two
halves, the freshness rules, and which SQL refreshes incrementally."""

from __future__ import annotations

import pytest
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType
from pyiceberg.view.metadata import SQLViewRepresentation, ViewVersion

from core.errors import InvalidInputError
from core.mv.freshness import TableNow, changed_at, freshness
from core.mv.metadata import (
    BaseTable,
    MaterializedViewMetadata,
    Refresh,
    new_mv_metadata,
    table_part,
    view_part,
    with_table,
)
from core.sql.incremental import plan_incremental

SCHEMA = Schema(NestedField(7, "k", StringType(), required=False),
                NestedField(9, "n", LongType(), required=False))


def mv(**props: str) -> MaterializedViewMetadata:
    version = ViewVersion(version_id=1, schema_id=0, timestamp_ms=1, summary={},
                          representations=[SQLViewRepresentation(
                              type="sql", sql="SELECT k, count(*) AS n FROM ns.t GROUP BY k",
                              dialect="spark")], default_namespace=["ns"])
    return new_mv_metadata("file:///w/ns/mv", SCHEMA, version, dict(props), 1_000)


def refreshed(m: MaterializedViewMetadata, snapshots: dict[str, int], version: int = 1,
              views: dict[str, int] | None = None) -> MaterializedViewMetadata:
    r = Refresh(refresh_id=1, version_id=version, timestamp_ms=2_000, source_commit="h",
                base_tables={k: BaseTable(identifier=k, snapshot_reference=s,
                                          properties={"content-id": f"id-{k}"})
                             for k, s in snapshots.items()}, views=views or {})
    return with_table(m, table_part(m), r, 2_000)


def now(snapshot: int, log: tuple[tuple[int, int], ...] = (), key: str = "ns.t") -> TableNow:
    return TableNow(f"id-{key}", snapshot, log, 5_000)


def test_one_schema_list_serves_both_halves_and_round_trips() -> None:
    m = mv()
    assert [f.field_id for f in m.schemas[0].fields] == [1, 2]  # fresh ids, as for tables
    assert view_part(m).versions[0].schema_id == table_part(m).current_schema_id == 0
    assert str(table_part(m).table_uuid) == view_part(m).view_uuid == m.uuid
    assert MaterializedViewMetadata.model_validate_json(m.to_json()) == m
    assert (m.current_refresh_id, m.refreshes, m.current_snapshot_id) == (None, [], None)


def test_max_staleness_is_checked() -> None:
    assert mv(**{"max-staleness-ms": "250"}).max_staleness_ms() == 250
    with pytest.raises(InvalidInputError, match="max-staleness-ms"):
        mv(**{"max-staleness-ms": "-1"})


def test_fresh_then_stale_since_the_first_snapshot_after_the_one_read() -> None:
    m = refreshed(mv(), {"ns.t": 10})
    f = freshness(m, {"ns.t": now(10, ((10, 100),))}, {}, [], 9_000)
    assert (f.status, f.reasons, f.servable(0)) == ("fresh", [], True)
    f = freshness(m, {"ns.t": now(12, ((10, 100), (11, 4_000), (12, 6_000)))}, {}, [], 9_000)
    assert f.status == "stale" and f.reasons == ["table ns.t changed since the refresh"]
    assert f.stale_for_ms == 5_000 and f.bases[0].changed_at_ms == 4_000
    assert not f.servable(4_999) and f.servable(5_000)


def test_changed_at_without_the_snapshot_read_in_the_log() -> None:
    assert changed_at(3, now(9, ((8, 700), (9, 900)))) == 900
    assert changed_at(3, now(9, ())) == 5_000  # the table's last update


def test_another_query_is_never_served() -> None:
    base = refreshed(mv(), {"ns.t": 10})
    replaced = base.model_copy(update={"current_version_id": 2})
    f = freshness(replaced, {"ns.t": now(10)}, {}, [], 9_000)
    assert f.status == "stale" and f.reasons[0].startswith("the definition changed")
    assert f.stale_for_ms is None and not f.servable(10**12)
    nested = refreshed(mv(), {"ns.t": 10}, views={"ns.v": 1})
    f = freshness(nested, {"ns.t": now(10)}, {"ns.v": 2}, [], 9_000)
    assert f.reasons == ["view ns.v changed since the refresh (version 1 → 2)"]
    assert not f.servable(10**12)
    f = freshness(base, {"ns.t": now(10), "ns.u": now(1, key="ns.u")}, {}, [], 9_000)
    assert f.reasons == ["table ns.u is now read by the view"]
    recreated = TableNow("another", 10)
    f = freshness(base, {"ns.t": recreated}, {}, [], 9_000)
    assert f.reasons == ["table ns.t was dropped and created again"]


def test_never_refreshed_and_invalid() -> None:
    f = freshness(mv(), {"ns.t": now(3)}, {}, [], 9_000)
    assert (f.status, f.reasons, f.servable(10**12)) == ("stale", ["never refreshed"], False)
    assert [(b.identifier, b.snapshot_read, b.snapshot_now) for b in f.bases] == \
        [("ns.t", None, 3)]
    f = freshness(refreshed(mv(), {"ns.t": 1}), {"ns.t": None}, {}, ["table ns.t dropped"], 9)
    assert (f.status, f.reasons, f.servable(10**12)) == ("invalid", ["table ns.t dropped"],
                                                         False)


@pytest.mark.parametrize(("sql", "columns", "shape"), [
    ("SELECT id, v FROM ns.t WHERE v = 'a'", ["id", "v"], "append"),
    ("SELECT t.id + 1 AS x FROM t", ["x"], "append"),
    ("SELECT k, sum(x) AS s, count(*) AS c, min(x) mn, max(x) AS mx FROM ns.t GROUP BY k",
     ["k", "s", "c", "mn", "mx"], "aggregate"),
    ("SELECT count(*) AS c FROM ns.t", ["c"], "aggregate"),
    ("SELECT upper(k) AS uk, sum(x) AS s FROM ns.t GROUP BY upper(k)", ["uk", "s"],
     "aggregate"),
])
def test_incremental_shapes(sql: str, columns: list[str], shape: str) -> None:
    plan = plan_incremental(sql, "spark", columns)
    assert plan.shape == shape, plan.why
    assert "__sapwood_delta" in plan.delta_sql and "ns.t" not in plan.delta_sql
    assert bool(plan.merge_sql) == (shape == "aggregate")


def test_the_merge_adds_counts_and_keeps_extremes() -> None:
    plan = plan_incremental("SELECT k, count(*) AS c, min(x) AS lo, count(x) AS n FROM ns.t "
                            "WHERE x > 0 GROUP BY k", "spark", ["k", "c", "lo", "n"])
    # Appended rows as partial values, merged with the stored groups in one GROUP BY.
    assert plan.delta_sql == ("SELECT k AS `k`, 1 AS `c`, x AS `lo`, IF(x IS NULL, 0, 1) AS `n` "
                              "FROM __sapwood_delta AS t WHERE x > 0")
    assert plan.merge_sql == (
        "SELECT `k`, SUM(`c`) AS `c`, MIN(`lo`) AS `lo`, SUM(`n`) AS `n` FROM "
        "(SELECT * FROM __sapwood_stored "
        "UNION ALL SELECT * FROM __sapwood_delta_result) AS __sapwood_both GROUP BY `k`")


@pytest.mark.parametrize(("sql", "why"), [
    ("SELECT k, avg(x) AS a FROM ns.t GROUP BY k", "output a is not a group key"),
    ("SELECT a.k FROM ns.t a JOIN ns.u b ON a.k = b.k", "a join"),
    ("SELECT k, count(DISTINCT x) AS c FROM ns.t GROUP BY k", "is not a group key"),
    ("SELECT * FROM ns.t", "one expression per column"),
    ("SELECT k FROM (SELECT k FROM ns.t)", "exactly one table"),
    ("SELECT k, sum(x) / count(x) AS a FROM ns.t GROUP BY k", "output a"),
    ("SELECT k, rand() AS r FROM ns.t", "non-deterministic"),
    ("WITH a AS (SELECT 1) SELECT k FROM ns.t", "WITH"),
    ("SELECT k FROM ns.t WHERE k IN (SELECT k FROM ns.u)", "exactly one table"),
    ("SELECT k, sum(x) AS s FROM ns.t GROUP BY k HAVING sum(x) > 1", "HAVING"),
    ("SELECT k FROM ns.t UNION ALL SELECT k FROM ns.u", "not a single SELECT"),
    ("SELECT k FROM ns.t ORDER BY k LIMIT 5", "LIMIT"),
    ("SELECT DISTINCT k FROM ns.t", "DISTINCT"),
    ("SELECT k, row_number() OVER (ORDER BY k) AS r FROM ns.t", "window"),
    ("SELEC k", "not a single SELECT"),
    ("SELECT k FROM (", "cannot parse"),
])
def test_everything_else_is_refreshed_in_full(sql: str, why: str) -> None:
    columns = ["k", "a", "c", "r", "s"][: 2 if "," in sql.split("FROM")[0] else 1]
    plan = plan_incremental(sql, "spark", columns)
    assert plan.shape is None and why in plan.why, plan
