"""Content-aware merges with real Spark writing through the Iceberg REST
catalog on branches: appends on both sides (and a column added on one) merge
into main with every row, Spark time travel to either branch's snapshots and
PyIceberg reading what Spark reads; a delete, an overwrite, a compaction or
two different schema changes are refused with the reason, main unmoved."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import httpx
import pytest

import spark as sw
from tests.server import Server
from tests.spark.conftest import rows

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def _head(http: httpx.Client, ref: str = "main") -> str:
    r = http.get(f"/api/v2/trees/{ref}")
    assert r.status_code == 200, r.text
    return r.json()["reference"]["hash"]


def _merge(http: httpx.Client, source: str, **extra: Any) -> httpx.Response:
    return http.post(f"/api/v2/trees/main@{_head(http)}/history/merge",
                     json={"fromRefName": source, **extra})


def _detail(answer: dict[str, Any], key: str) -> dict[str, Any]:
    return next(d for d in answer["details"] if ".".join(d["key"]["elements"]) == key)


def _table(spark: SparkSession, ns: str, values: str) -> str:
    """``ns.orders`` on main holding ``values``; its name."""
    spark.sql(f"CREATE NAMESPACE sapwood.{ns}")
    spark.sql(f"CREATE TABLE sapwood.{ns}.orders (id BIGINT, item STRING) USING iceberg")
    spark.sql(f"INSERT INTO sapwood.{ns}.orders VALUES {values}")
    return f"{ns}.orders"


def _branches(spark: SparkSession, server: Server, *names: str) -> None:
    """Branches from main, each a Spark catalog of the same name."""
    for n in names:
        sw.create_branch(server.base, n)
        sw.add_catalog(spark, n, server.base, n)


def _snapshot(http: httpx.Client, ref: str, table: str) -> int:
    ns, name = table.split(".")
    r = http.get(f"/iceberg/{ref}/v1/namespaces/{ns}/tables/{name}")
    assert r.status_code == 200, r.text
    return r.json()["metadata"]["current-snapshot-id"]


def _ids(spark: SparkSession, sql: str) -> list[int]:
    return [r[0] for r in rows(spark, sql)]


def _pyiceberg(server: Server, table: str) -> list[tuple[Any, ...]]:
    arrow = server.catalog().load_table(table).scan().to_arrow()
    return sorted(tuple(r.values()) for r in arrow.to_pylist())


def test_appends_on_both_branches_merge(spark: SparkSession, server: Server,
                                        http: httpx.Client) -> None:
    t = _table(spark, "sales", "(1, 'base'), (2, 'base'), (3, 'base')")
    _branches(spark, server, "app_a", "app_b")
    snaps: dict[str, list[int]] = {"app_a": [], "app_b": []}
    for i in range(2):
        spark.sql(f"INSERT INTO app_a.{t} VALUES ({100 + 10 * i}, 'a'), ({101 + 10 * i}, 'a')")
        snaps["app_a"].append(_snapshot(http, "app_a", t))
        spark.sql(f"INSERT INTO app_b.{t} VALUES "
                  + ", ".join(f"({200 + 10 * i + j}, 'b')" for j in range(3)))
        snaps["app_b"].append(_snapshot(http, "app_b", t))
    a_ids, b_ids = [100, 101, 110, 111], [200, 201, 202, 210, 211, 212]

    r = _merge(http, "app_a")
    assert r.status_code == 200 and r.json()["wasApplied"], r.text
    r = _merge(http, "app_b")
    assert r.status_code == 200 and r.json()["wasApplied"], r.text
    d = _detail(r.json(), t)
    assert d["outcome"] == "MERGED", d
    assert d["combined"]["rows"] == {"source": 6, "target": 4}, d

    assert rows(spark, f"SELECT count(*) FROM sapwood.{t}") == [(3 + 4 + 6,)]
    assert _ids(spark, f"SELECT id FROM sapwood.{t}") == [1, 2, 3, *a_ids, *b_ids]
    # Time travel on main to each branch's snapshots reads what the branch had then.
    for snap, want in ((snaps["app_a"][0], a_ids[:2]), (snaps["app_a"][1], a_ids),
                       (snaps["app_b"][0], b_ids[:3]), (snaps["app_b"][1], b_ids)):
        assert _ids(spark, f"SELECT id FROM sapwood.{t} VERSION AS OF {snap}") == \
            [1, 2, 3, *want], snap
    assert _pyiceberg(server, t) == rows(spark, f"SELECT * FROM sapwood.{t}")


@pytest.mark.parametrize("first", ["a", "b"])
def test_a_column_added_on_one_branch_merges(spark: SparkSession, server: Server,
                                             http: httpx.Client, first: str) -> None:
    """Branch a adds ``qty``; whichever branch is merged first, rows written
    without it read it as null afterwards."""
    ns = f"sales_qty_{first}"
    t = _table(spark, ns, "(1, 'base'), (2, 'base')")
    a, b = f"qty_{first}_a", f"qty_{first}_b"
    _branches(spark, server, a, b)
    spark.sql(f"ALTER TABLE {a}.{t} ADD COLUMN qty INT")
    spark.sql(f"INSERT INTO {a}.{t} VALUES (10, 'a', 5)")
    spark.sql(f"INSERT INTO {a}.{t} VALUES (11, 'a', 6)")
    spark.sql(f"INSERT INTO {b}.{t} VALUES (20, 'b')")
    spark.sql(f"INSERT INTO {b}.{t} VALUES (21, 'b')")

    for source in (a, b) if first == "a" else (b, a):
        r = _merge(http, source)
        assert r.status_code == 200 and r.json()["wasApplied"], r.text
    d = _detail(r.json(), t)
    assert d["outcome"] == "MERGED", d
    if first == "b":
        assert d["combined"]["taken"] == {"source": ["schema"]}, d
    want = [(1, "base", None), (2, "base", None), (10, "a", 5), (11, "a", 6),
            (20, "b", None), (21, "b", None)]
    assert rows(spark, f"SELECT id, item, qty FROM sapwood.{t}") == want
    assert _pyiceberg(server, t) == want


# What one branch does, and words the refusal must hold (the reason, and the
# snapshot summary's operation and counts it quotes).
REFUSED: dict[str, tuple[str, tuple[str, ...]]] = {
    "delete": ("DELETE FROM {a}.{t} WHERE id = 2",
               ("the source removed or rewrote rows", "deleted-data-files=1")),
    "overwrite": ("INSERT OVERWRITE {a}.{t} VALUES (9, 'new')",
                  ("the source removed or rewrote rows", ": overwrite,", "deleted-records=3")),
    "compaction": ("CALL {a}.system.rewrite_data_files(table => '{t}', "
                   "options => map('min-input-files', '2'))",
                   ("the source rewrote data files", "replace, a compaction")),
    "schema": ("ALTER TABLE {a}.{t} ADD COLUMN x INT",
               ("both sides changed the schema differently",)),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_what_cannot_be_combined_is_refused(spark: SparkSession, server: Server,
                                            http: httpx.Client, case: str) -> None:
    ns = f"refused_{case}"
    # Two small files in the base, so the compaction has something to do.
    t = _table(spark, ns, "(1, 'base'), (2, 'base')")
    spark.sql(f"INSERT INTO sapwood.{t} VALUES (3, 'base')")
    a, b = f"{case}_a", f"{case}_b"
    _branches(spark, server, a, b)
    sql, reason = REFUSED[case]
    done = spark.sql(sql.format(a=a, t=t)).collect()
    if case == "compaction":
        assert done[0]["rewritten_data_files_count"] >= 2, done
    if case == "schema":
        spark.sql(f"ALTER TABLE {b}.{t} ADD COLUMN y INT")
    else:
        spark.sql(f"INSERT INTO {b}.{t} VALUES (50, 'b')")
    assert _merge(http, b).json()["wasApplied"]

    before = _head(http)
    r = _merge(http, a)
    assert r.status_code == 409, r.text
    assert all(w in r.text for w in reason), r.text
    assert _head(http) == before
    r = _merge(http, a, returnConflictAsResult=True)
    assert r.status_code == 200, r.text
    d = _detail(r.json(), t)
    assert d["outcome"] == "CONFLICT", d
    assert all(w in d["conflict"]["message"] for w in reason), d
    assert not r.json()["wasApplied"]
    assert _head(http) == before
    assert rows(spark, f"SELECT count(*) FROM sapwood.{t}") == [(3 if case == "schema" else 4,)]
