"""Format v3 tables with real Spark (Iceberg 1.10) through the REST catalog
on branches: deletion vectors written on a branch and read there, as of an
earlier instant and on main after the merge; a v2 table with data upgraded
by ``ALTER TABLE`` (on main, and on a branch merged into main); and, on
SQLite and PostgreSQL, row lineage that survives content-aware merges of
appends on three branches and a transplant (the ranges of main's snapshots
disjoint, Spark's ``_row_id`` unique), and gc, fsck --files, restore and
revert on a v3 table with deletion vectors."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest

import spark as sw
from tests.api.test_gc_warehouse import age
from tests.fixtures import BACKENDS, server_fixture
from tests.http import http_client
from tests.server import Server
from tests.spark.conftest import module_session, rows

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

V3_MOR = ("USING iceberg TBLPROPERTIES ('format-version'='3', "
          "'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read')")


def _head(http: httpx.Client, ref: str = "main") -> str:
    r = http.get(f"/api/v2/trees/{ref}")
    assert r.status_code == 200, r.text
    return r.json()["reference"]["hash"]


def _merge(http: httpx.Client, source: str) -> dict[str, Any]:
    r = http.post(f"/api/v2/trees/main@{_head(http)}/history/merge",
                  json={"fromRefName": source})
    assert r.status_code == 200 and r.json()["wasApplied"], r.text
    return r.json()


def _meta(http: httpx.Client, ref: str, table: str) -> dict[str, Any]:
    ns, name = table.split(".")
    r = http.get(f"/iceberg/{ref}/v1/namespaces/{ns}/tables/{name}")
    assert r.status_code == 200, r.text
    return r.json()["metadata"]


def _head_time(http: httpx.Client, ref: str) -> str:
    """The instant of ``ref``'s head commit (microseconds): ``ref*instant``
    reads exactly that commit."""
    r = http.get(f"/api/v2/trees/{ref}/history", params={"maxRecords": 1})
    assert r.status_code == 200, r.text
    return str(r.json()["logEntries"][0]["commitMeta"]["commitTime"])


def _lineage(meta: dict[str, Any]) -> list[dict[str, Any]]:
    """The snapshots of the current one's ancestry, newest first."""
    by_id = {s["snapshot-id"]: s for s in meta["snapshots"]}
    out, cur = [], meta.get("current-snapshot-id")
    while cur is not None and cur in by_id:
        out.append(by_id[cur])
        cur = by_id[cur].get("parent-snapshot-id")
    return out


def test_deletion_vectors_on_a_branch(spark: SparkSession, server: Server,
                                      http: httpx.Client) -> None:
    """Acceptance 2: a v3 table made on branch ``dv``; a merge-on-read DELETE
    writes a Puffin deletion vector; the rows read right on the branch, as of
    the instant before the delete, and on main after the merge."""
    sw.create_branch(server.base, "dv")
    sw.add_catalog(spark, "dv", server.base, "dv")
    spark.sql("CREATE NAMESPACE dv.dvs")
    spark.sql(f"CREATE TABLE dv.dvs.t (id BIGINT, s STRING) {V3_MOR}")
    spark.sql("INSERT INTO dv.dvs.t VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd'), (5, 'e')")
    before = _head_time(http, "dv")
    spark.sql("DELETE FROM dv.dvs.t WHERE id IN (2, 4)")
    deletes = rows(spark, "SELECT content, file_format, record_count FROM dv.dvs.t.delete_files")
    # One vector per data file it deletes from (Spark may write the rows in two files).
    assert {(c, f) for c, f, _ in deletes} == {(1, "PUFFIN")}
    assert sum(n for _, _, n in deletes) == 2
    meta = _meta(http, "dv", "dvs.t")
    assert meta["format-version"] == 3 and meta["next-row-id"] == 5
    kept = [(1, "a"), (3, "c"), (5, "e")]
    assert rows(spark, "SELECT * FROM dv.dvs.t") == kept
    sw.add_catalog(spark, "dv_then", server.base, "dv", as_of=before)
    assert rows(spark, "SELECT id FROM dv_then.dvs.t") == [(i,) for i in range(1, 6)]
    assert http.get("/iceberg/v1/namespaces/dvs/tables/t").status_code == 404
    _merge(http, "dv")
    assert rows(spark, "SELECT * FROM sapwood.dvs.t") == kept
    # PyIceberg reads the deletion vector too.
    got = server.catalog().load_table("dvs.t").scan().to_arrow()
    assert sorted(zip(got["id"].to_pylist(), got["s"].to_pylist(), strict=True)) == kept
    # The commit event counts the deletion vector; the UI's page shows the row ids.
    events = http.get("/api/v2/events", params={"key": "dvs.t", "ref": "dv",
                                                "maxRecords": 100}).json()["events"]
    summaries = [op.get("summary", {}) for e in events for c in e["data"]["commits"]
                 for op in c["operations"]]
    assert any(s.get("added-dvs") == str(len(deletes)) and s.get("operation") == "delete"
               for s in summaries), summaries
    page = http.get("/ui/object/main/dvs.t").text
    assert '<span id="next-row-id">5</span>' in page and "added-dvs" in page


def test_duckdb_reads_the_v3_table_spark_wrote_on_a_branch(spark: SparkSession,
                                                           server: Server) -> None:
    """DuckDB 1.4.4's iceberg extension, attached to the branch: it reads
    the v3 table and applies the deletion vector (docs/iceberg-rest.md)."""
    import duckdb

    from tests.duckdb_ext import duckdb_extensions

    sw.create_branch(server.base, "duck")
    sw.add_catalog(spark, "duck", server.base, "duck")
    spark.sql("CREATE NAMESPACE duck.ducks")
    spark.sql(f"CREATE TABLE duck.ducks.t (id BIGINT) {V3_MOR}")
    spark.sql("INSERT INTO duck.ducks.t VALUES (1), (2), (3)")
    spark.sql("DELETE FROM duck.ducks.t WHERE id = 2")
    con = duckdb.connect(config={"extension_directory": duckdb_extensions()})
    con.execute("LOAD iceberg")
    con.execute(f"ATTACH '' AS cat (TYPE iceberg, ENDPOINT '{server.base}/iceberg/duck', "
                "AUTHORIZATION_TYPE 'none')")
    assert sorted(con.execute("SELECT id FROM cat.ducks.t").fetchall()) == [(1,), (3,)]


def test_deletion_vectors_merge_unless_both_sides_changed_the_file(
        spark: SparkSession, server: Server, http: httpx.Client) -> None:
    """A branch's deletion vector merges with main's append; a vector on a
    data file main deleted from too, or one that replaced a vector the merge
    base had, is a conflict naming the file, main unmoved."""
    t = "sapwood.dvm.t"
    spark.sql("CREATE NAMESPACE sapwood.dvm")
    spark.sql(f"CREATE TABLE {t} (id BIGINT) {V3_MOR}")

    def insert(table: str, *ids: int) -> None:  # one data file each
        values = ", ".join(f"({i})" for i in ids)
        spark.sql(f"INSERT INTO {table} SELECT /*+ REPARTITION(1) */ * FROM VALUES {values} "
                  "AS v(id)")

    def branch(name: str) -> str:
        sw.create_branch(server.base, name)
        sw.add_catalog(spark, name, server.base, name)
        return f"{name}.dvm.t"

    def refused(source: str, *words: str) -> None:
        before = _head(http)
        r = http.post(f"/api/v2/trees/main@{before}/history/merge",
                      json={"fromRefName": source})
        assert r.status_code == 409 and all(w in r.text for w in words), r.text
        assert _head(http) == before

    insert(t, 1, 2, 3)  # data file A
    insert(t, 4, 5, 6)  # data file B
    a = branch("dva")
    spark.sql(f"DELETE FROM {a} WHERE id = 1")
    insert(t, 7, 8)
    d = next(x for x in _merge(http, "dva")["details"] if x["key"]["elements"] == ["dvm", "t"])
    assert d["outcome"] == "MERGED" and d["combined"]["deletionVectors"] == {
        "source": 1, "deletedRows": 1}, d
    assert rows(spark, f"SELECT id FROM {t}") == [(i,) for i in range(2, 9)]
    assert rows(spark, f"SELECT file_format FROM {t}.delete_files") == [("PUFFIN",)]
    # Both sides delete rows of data file B.
    b = branch("dvb")
    spark.sql(f"DELETE FROM {b} WHERE id = 5")
    spark.sql(f"DELETE FROM {t} WHERE id = 4")
    b_file = rows(spark, f"SELECT _file FROM {t} WHERE id = 6")[0][0]
    refused("dvb", "both sides deleted rows of data file", b_file.split("/")[-1])
    # The branch deletes more rows of A, whose vector the merge base had.
    c = branch("dvc")
    spark.sql(f"DELETE FROM {c} WHERE id = 2")
    insert(t, 9)
    refused("dvc", "the source replaced the merge base's delete file", ".puffin")
    assert rows(spark, f"SELECT id FROM {t}") == [(i,) for i in (2, 3, 5, 6, 7, 8, 9)]


def test_upgrade_a_v2_table_with_data(spark: SparkSession, server: Server,
                                      http: httpx.Client) -> None:
    """Acceptance 4: ``ALTER TABLE … SET TBLPROPERTIES ('format-version'='3')``
    keeps the rows (without row ids), sets next-row-id, and later appends
    (numbering the older rows too, as the spec says) read. Upgraded on a
    branch while main appends as v2, the merge makes main's table v3."""
    spark.sql("CREATE NAMESPACE sapwood.up")
    spark.sql("CREATE TABLE sapwood.up.t (id BIGINT) USING iceberg "
              "TBLPROPERTIES ('format-version'='2')")
    spark.sql("INSERT INTO sapwood.up.t VALUES (1), (2)")
    spark.sql("ALTER TABLE sapwood.up.t SET TBLPROPERTIES ('format-version'='3')")
    meta = _meta(http, "main", "up.t")
    assert meta["format-version"] == 3 and meta["next-row-id"] == 0
    assert rows(spark, "SELECT id, _row_id FROM sapwood.up.t") == [(1, None), (2, None)]
    spark.sql("INSERT INTO sapwood.up.t VALUES (3)")
    meta = _meta(http, "main", "up.t")
    last = _lineage(meta)[0]
    assert (last["first-row-id"], last["added-rows"]) == (0, 3) and meta["next-row-id"] == 3
    assert rows(spark, "SELECT id FROM sapwood.up.t") == [(1,), (2,), (3,)]
    assert len({r for (r,) in rows(spark, "SELECT _row_id FROM sapwood.up.t")}) == 3

    spark.sql("CREATE TABLE sapwood.up.b (id BIGINT) USING iceberg "
              "TBLPROPERTIES ('format-version'='2')")
    spark.sql("INSERT INTO sapwood.up.b VALUES (1), (2)")
    sw.create_branch(server.base, "up_b")
    sw.add_catalog(spark, "up_b", server.base, "up_b")
    spark.sql("ALTER TABLE up_b.up.b SET TBLPROPERTIES ('format-version'='3')")
    spark.sql("INSERT INTO up_b.up.b VALUES (3)")  # numbers rows 0-2 on the branch
    spark.sql("INSERT INTO sapwood.up.b VALUES (4)")  # v2: no row ids
    d = next(x for x in _merge(http, "up_b")["details"] if x["key"]["elements"] == ["up", "b"])
    # Every row main holds unnumbered (1, 2, 4) and the branch's (3), past the branch's ids.
    assert d["outcome"] == "MERGED" and d["combined"]["rowIds"] == {"first": 3, "added": 4}, d
    meta = _meta(http, "main", "up.b")
    assert meta["format-version"] == 3 and meta["next-row-id"] == 7
    got = rows(spark, "SELECT id, _row_id FROM sapwood.up.b")
    assert [i for i, _ in got] == [1, 2, 3, 4]
    assert sorted(r for _, r in got) == [3, 4, 5, 6]


# -- acceptance 3 and 5: merges and maintenance on both backends --------------------------------
backend_server = server_fixture(BACKENDS, prefix="v3-maint")


@pytest.fixture(scope="module")
def maint(spark_jvm: SparkSession, backend_server: Server) -> Iterator[SparkSession]:
    yield module_session(spark_jvm, backend_server.base, catalog="maint")


def test_row_lineage_survives_merges(maint: SparkSession, backend_server: Server) -> None:
    """Acceptance 3: main and branches a and b each append to one v3 table
    (each numbering from the next-row-id they forked with); both merged into
    main: main's snapshots number disjoint ranges, next-row-id is past them,
    and Spark's ``_row_id`` is unique over the rows."""
    spark, server = maint, backend_server
    http = http_client(base_url=server.base, timeout=60)
    spark.sql("CREATE NAMESPACE maint.lin")
    spark.sql("CREATE TABLE maint.lin.t (id BIGINT) USING iceberg "
              "TBLPROPERTIES ('format-version'='3')")
    spark.sql("INSERT INTO maint.lin.t VALUES (1), (2), (3)")
    for b in ("lin_a", "lin_b"):
        sw.create_branch(server.base, b)
        sw.add_catalog(spark, b, server.base, b)
    spark.sql("INSERT INTO lin_a.lin.t VALUES (10), (11)")
    spark.sql("INSERT INTO lin_b.lin.t VALUES (20), (21), (22)")
    spark.sql("INSERT INTO maint.lin.t VALUES (4)")
    # Before the merges, the three sides numbered the same ids from 3.
    assert {(_lineage(_meta(http, ref, "lin.t"))[0]["first-row-id"])
            for ref in ("main", "lin_a", "lin_b")} == {3}
    for b in ("lin_a", "lin_b"):
        d = next(x for x in _merge(http, b)["details"] if x["key"]["elements"] == ["lin", "t"])
        assert d["outcome"] == "MERGED", d
    assert d["combined"]["rowIds"] == {"first": 7, "added": 3}, d
    meta = _meta(http, "main", "lin.t")
    ranges = sorted((s["first-row-id"], s["first-row-id"] + s["added-rows"])
                    for s in _lineage(meta))
    assert ranges == [(0, 3), (3, 4), (5, 7), (7, 10)]
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(ranges))
    assert meta["next-row-id"] == 10
    ids = rows(spark, "SELECT _row_id, id FROM maint.lin.t")
    assert sorted(i for _, i in ids) == [1, 2, 3, 4, 10, 11, 20, 21, 22]
    assert len({r for r, _ in ids}) == 9
    assert sorted(ids) == [(0, 1), (1, 2), (2, 3), (3, 4), (5, 10), (6, 11),
                           (7, 20), (8, 21), (9, 22)]
    # A branch's own snapshot joins main's list as it was, and reads as it did there.
    a_snap = _lineage(_meta(http, "lin_a", "lin.t"))[0]
    assert a_snap in meta["snapshots"]
    assert rows(spark, f"SELECT _row_id, id FROM maint.lin.t VERSION AS OF "
                       f"{a_snap['snapshot-id']}") == [(0, 1), (1, 2), (2, 3), (3, 10), (4, 11)]
    # Spark writes on from there.
    spark.sql("INSERT INTO maint.lin.t VALUES (5)")
    assert _meta(http, "main", "lin.t")["next-row-id"] == 11
    assert rows(spark, "SELECT _row_id FROM maint.lin.t WHERE id = 5") == [(10,)]
    # A transplant re-bases alike: lin_a's later append, picked onto main.
    spark.sql("INSERT INTO lin_a.lin.t VALUES (12)")
    r = http.post(f"/api/v2/trees/main@{_head(http)}/history/transplant",
                  json={"hashesToTransplant": [_head(http, "lin_a")]})
    assert r.status_code == 200 and r.json()["wasApplied"], r.text
    assert rows(spark, "SELECT _row_id FROM maint.lin.t WHERE id = 12") == [(11,)]
    assert _meta(http, "main", "lin.t")["next-row-id"] == 12
    assert len({r for (r,) in rows(spark, "SELECT _row_id FROM maint.lin.t")}) == 11
    http.close()


def _puffins(location: str) -> set[str]:
    return {str(p) for p in Path(location.removeprefix("file://")).rglob("*.puffin")}


def _ids(server: Server, at: str | None = None) -> list[int]:
    t = server.catalog().load_table("mnt.t")
    scan = t.scan(snapshot_id=int(at)) if at else t.scan()
    return sorted(scan.to_arrow()["id"].to_pylist())


def _fsck(http: httpx.Client) -> dict[str, Any]:
    r = http.get("/api/v2/admin/fsck", params={"files": "true", "graceSeconds": 0})
    assert r.status_code == 200, r.text
    return r.json()


def test_gc_fsck_restore_revert_keep_deletion_vectors(maint: SparkSession,
                                                     backend_server: Server) -> None:
    server = backend_server
    http = http_client(base_url=server.base, timeout=60)
    maint.sql("CREATE NAMESPACE maint.mnt")
    maint.sql(f"CREATE TABLE maint.mnt.t (id BIGINT) {V3_MOR}")
    maint.sql("INSERT INTO maint.mnt.t VALUES (1), (2), (3), (4), (5), (6)")
    maint.sql("DELETE FROM maint.mnt.t WHERE id = 2")
    first_delete = _head(http)
    snap_one = _meta(http, "main", "mnt.t")["current-snapshot-id"]
    maint.sql("INSERT INTO maint.mnt.t VALUES (7)")
    maint.sql("DELETE FROM maint.mnt.t WHERE id IN (3, 7)")
    meta = _meta(http, "main", "mnt.t")
    puffins = _puffins(meta["location"])
    assert len(puffins) == 2  # the second vector of the first file replaces the first
    assert _ids(server) == [1, 4, 5, 6]
    # fsck --files: nothing missing; a deletion vector taken away is reported as one.
    assert _fsck(http)["ok"] is True
    gone = sorted(puffins)[0]
    saved = Path(gone).read_bytes()
    Path(gone).unlink()
    report = _fsck(http)
    assert report["ok"] is False
    assert {(m["kind"], m["path"]) for m in report["warehouse"]["missing"]} == {
        ("deletion-vector", gone)}
    Path(gone).write_bytes(saved)
    # gc: a deleted branch's table goes; every file of main's history stays.
    store_side = "maint_scratch"
    sw.create_branch(server.base, store_side)
    scratch = server.catalog(store_side).create_table(
        "mnt.scratch", server.catalog().load_table("mnt.t").schema())
    http.delete(f"/api/v2/trees/{store_side}@{_head(http, store_side)}")
    age(server, 7200)  # every file past gc's write window
    r = http.post("/api/v2/admin/gc", params={"graceSeconds": 0, "writeWindowSeconds": 10})
    assert r.status_code == 200 and r.json()["warehouse"]["removed_files"] > 0, r.text
    assert not Path(scratch.location().removeprefix("file://")).exists() or not any(
        Path(scratch.location().removeprefix("file://")).rglob("*.json"))
    assert _puffins(meta["location"]) == puffins
    assert _fsck(http)["ok"] is True
    assert _ids(server) == [1, 4, 5, 6] and _ids(server, str(snap_one)) == [1, 3, 4, 5, 6]
    # Restore the table as it was after the first delete; revert that restore.
    r = http.post(f"/api/v2/trees/main@{_head(http)}/history/restore",
                  json={"source": f"@{first_delete}", "keys": [{"elements": ["mnt", "t"]}]})
    assert r.status_code == 200, r.text
    restored = r.json()["hash"]
    assert _ids(server) == [1, 3, 4, 5, 6]
    assert rows(maint, "SELECT id FROM maint.mnt.t") == [(1,), (3,), (4,), (5,), (6,)]
    assert _meta(http, "main", "mnt.t")["next-row-id"] == meta["next-row-id"]
    r = http.post(f"/api/v2/trees/main@{_head(http)}/history/revert",
                  json={"commits": [restored]})
    assert r.status_code == 200, r.text
    assert _ids(server) == [1, 4, 5, 6]
    maint.sql("INSERT INTO maint.mnt.t VALUES (8)")  # numbering goes on past every id
    after = _meta(http, "main", "mnt.t")
    assert _lineage(after)[0]["first-row-id"] == meta["next-row-id"]
    assert _ids(server) == [1, 4, 5, 6, 8]
    assert _fsck(http)["ok"] is True
    http.close()
