"""Materialized views with real Spark on a real ``sapwood serve``: a refresh
pins one commit and Spark then reads the stored rows (its plan scans the
view's storage) until a base table moves, when it runs the view's SQL;
merges carry a refresh, time travel reads each instant's rows, a replace or
a dropped base shows in the freshness, and an append-only base is refreshed
incrementally from exactly the files appended."""

from __future__ import annotations

import re
import threading
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

import pyarrow as pa
import pytest

import spark as sw
from spark.client import Versioning
from spark.errors import CatalogError
from spark.mviews import create_materialized_view, freshness, refresh
from spark.session import ref_spec
from tests.server import Server
from tests.spark.conftest import rows
from tests.zygote_client import run as sapwood

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

JOIN = ("SELECT c.region, sum(o.amt) AS total, count(*) AS n FROM orders o "
        "JOIN customers c ON o.cust = c.cust GROUP BY c.region")
OLD = [("eu", 30, 2), ("us", 5, 1)]
NEW = [("eu", 30, 2), ("us", 105, 2)]


def _branch(spark: SparkSession, server: Server, name: str) -> str:
    """A branch from main, and a Spark catalog of the same name on it."""
    Versioning(server.base).create_branch(name)
    return sw.add_catalog(spark, name, server.base, name)


def _tables(spark: SparkSession, cat: str, ns: str, props: str = "") -> None:
    spark.sql(f"CREATE NAMESPACE {cat}.{ns}" + (f" WITH DBPROPERTIES ({props})" if props else ""))
    spark.sql(f"CREATE TABLE {cat}.{ns}.orders (id BIGINT, cust BIGINT, amt BIGINT) USING iceberg")
    spark.sql(f"CREATE TABLE {cat}.{ns}.customers (cust BIGINT, region STRING) USING iceberg")
    spark.sql(f"INSERT INTO {cat}.{ns}.orders VALUES (1, 1, 10), (2, 1, 20), (3, 2, 5)")
    spark.sql(f"INSERT INTO {cat}.{ns}.customers VALUES (1, 'eu'), (2, 'us')")


def _read(spark: SparkSession, sql: str) -> tuple[list[tuple], list[str]]:
    """The rows, and the tables the executed plan scans."""
    df = spark.sql(sql)
    got = sorted(tuple(r) for r in df.collect())
    plan = df._jdf.queryExecution().executedPlan().toString()
    return got, sorted(set(re.findall(r"BatchScan ([\w.]+)", plan)))


def _direct(spark: SparkSession, cat: str, ns: str, sql: str) -> list[tuple]:
    """The view's SQL run as a query in ``cat.ns``."""
    spark.sql(f"USE {cat}.{ns}")
    try:
        return rows(spark, sql)
    finally:
        spark.sql("USE sapwood")


def _instant() -> datetime:
    """A moment strictly between the commits before and after it."""
    time.sleep(0.02)
    now = datetime.now(UTC)
    time.sleep(0.02)
    return now


def _mv(server: Server, ref: str, key: str) -> dict[str, Any]:
    return Versioning(server.base).call("GET", f"/api/v2/trees/{ref}/materialized-views/{key}")


def _history(server: Server, ref: str) -> list[dict[str, Any]]:
    v, out, token = Versioning(server.base), [], None
    while True:
        page = v.call("GET", f"/api/v2/trees/{ref}/history",
                      params={"fetch": "ALL", **({"pageToken": token} if token else {})})
        out += page["logEntries"]
        token = page.get("token")
        if not page["hasMore"]:
            return out


def test_stored_rows_are_served_while_fresh_and_the_sql_runs_once_stale(spark, server):
    b, ns, uri = _branch(spark, server, "etl"), "mvf", server.base
    _tables(spark, b, ns)
    key, mv = f"{ns}.mv", f"{b}.{ns}.mv"
    created = create_materialized_view(spark, uri, key, JOIN, ref=b)
    assert [c["name"] for c in created["columns"]] == ["region", "total", "n"]
    never = freshness(uri, key, b)
    assert never["status"] == "stale" and "never refreshed" in " ".join(never["reasons"])
    assert not never["servedFromStorage"]

    plan = refresh(spark, uri, key, ref=b)
    assert plan["kind"] == "full" and plan["pinnedReference"] == f"{b}@{plan['hash']}"
    assert set(plan["baseTables"]) == {f"{ns}.orders", f"{ns}.customers"}
    f = freshness(uri, key, b)
    assert f["status"] == "fresh" and f["servedFromStorage"] and f["reasons"] == []
    assert f["refresh"]["sourceCommit"] == plan["hash"]
    assert _read(spark, f"SELECT * FROM {mv}") == (OLD, [mv])

    spark.sql(f"INSERT INTO {b}.{ns}.orders VALUES (4, 2, 100)")
    f = freshness(uri, key, b)
    assert f["status"] == "stale" and not f["servedFromStorage"]
    assert any(f"{ns}.orders" in r for r in f["reasons"]), f["reasons"]
    by = {t["identifier"]: t for t in f["baseTables"]}
    assert by[f"{ns}.orders"]["snapshotRead"] == plan["baseTables"][f"{ns}.orders"]
    assert by[f"{ns}.orders"]["snapshotRead"] != by[f"{ns}.orders"]["snapshotCurrent"]
    assert not by[f"{ns}.orders"]["fresh"] and by[f"{ns}.customers"]["fresh"]
    assert _direct(spark, b, ns, JOIN) == NEW
    assert _read(spark, f"SELECT * FROM {mv}") == (
        NEW, [f"{b}.{ns}.customers", f"{b}.{ns}.orders"])

    lax = sw.add_catalog(spark, "etl_lax", uri, b, max_staleness_ms=10**9)
    assert _read(spark, f"SELECT * FROM {lax}.{key}") == (OLD, [f"{lax}.{key}"])

    again = refresh(spark, uri, key, ref=b)
    assert again["kind"] == "full" and again["hash"] != plan["hash"]
    assert freshness(uri, key, b)["status"] == "fresh"
    assert _read(spark, f"SELECT * FROM {mv}") == (NEW, [mv])
    assert _read(spark, f"SELECT * FROM {lax}.{key}") == (NEW, [f"{lax}.{key}"])


def test_a_refresh_reads_every_base_at_its_pinned_commit_under_a_concurrent_writer(
        spark, server):
    b, ns, uri = _branch(spark, server, "etl_race"), "mvrace", server.base
    _tables(spark, b, ns)
    key = f"{ns}.mv"
    create_materialized_view(spark, uri, key, JOIN, ref=b)
    orders = server.catalog(b).load_table(f"{ns}.orders")
    arrow = orders.schema().as_arrow()
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["plan"] = refresh(spark, uri, key, ref=b)
        except BaseException as e:  # reported by the main thread
            out["error"] = e

    worker = threading.Thread(target=run)
    worker.start()
    appended = 0
    while worker.is_alive():
        orders.append(pa.table({"id": [1000 + appended], "cust": [2], "amt": [1]},
                               schema=arrow))
        appended += 1
        time.sleep(0.05)
    worker.join()
    assert "error" not in out, out.get("error")
    plan = out["plan"]
    record = _mv(server, b, key)["refreshes"][-1]
    src, read = record["source-commit"], record["base-tables"]
    assert src == plan["hash"] and record["refresh-kind"] == "full"
    for table in ("orders", "customers"):
        at_pin = server.catalog(f"{b}@{src}").load_table(f"{ns}.{table}").current_snapshot()
        assert read[f"{ns}.{table}"]["snapshot-reference"] == at_pin.snapshot_id
        assert plan["baseTables"][f"{ns}.{table}"] == at_pin.snapshot_id
    head = server.catalog(b).load_table(f"{ns}.orders").current_snapshot().snapshot_id
    raced = head != read[f"{ns}.orders"]["snapshot-reference"]
    note = f"{appended} appends, raced={raced} (some landed after the pin)"

    pinned = sw.add_catalog(spark, "etl_race_pin", uri, f"{b}@{src}")
    expected = _direct(spark, pinned, ns, JOIN)
    lax = sw.add_catalog(spark, "etl_race_lax", uri, b, max_staleness_ms=10**9)
    assert _read(spark, f"SELECT * FROM {lax}.{key}") == (expected, [f"{lax}.{key}"]), note
    f = freshness(uri, key, b)
    assert f["refresh"]["sourceCommit"] == src, note
    if raced:
        assert f["status"] == "stale", note
        assert f["reasons"] == [f"table {ns}.orders changed since the refresh"], note
        assert _direct(spark, b, ns, JOIN) != expected, note
    else:
        assert f["status"] == "fresh", note
        assert _direct(spark, b, ns, JOIN) == expected, note


def test_a_merged_refresh_is_fresh_on_main_and_each_instant_reads_its_rows(spark, server):
    b, ns, uri = _branch(spark, server, "etl_merge"), "mvmerge", server.base
    _tables(spark, b, ns)
    key, mv = f"{ns}.mv", f"sapwood.{ns}.mv"
    create_materialized_view(spark, uri, key, JOIN, ref=b)
    on_etl = refresh(spark, uri, key, ref=b)
    Versioning(uri).merge(b, into="main")

    f = freshness(uri, key, "main")
    assert f["status"] == "fresh" and f["servedFromStorage"], f
    assert f["refresh"]["sourceCommit"] == on_etl["hash"]
    assert len(_mv(server, "main", key)["refreshes"]) == 1
    assert _read(spark, f"SELECT * FROM {mv}") == (OLD, [mv])

    t1 = _instant()
    spark.sql(f"INSERT INTO sapwood.{ns}.orders VALUES (4, 2, 100)")
    assert refresh(spark, uri, key)["kind"] == "full"
    t2 = _instant()
    assert freshness(uri, key, ref_spec("main", t1))["status"] == "fresh"
    assert freshness(uri, key, ref_spec("main", t2))["status"] == "fresh"
    for name, at, want in (("main_mv_t1", t1, OLD), ("main_mv_t2", t2, NEW)):
        sw.add_catalog(spark, name, uri, "main", as_of=at)
        assert _read(spark, f"SELECT * FROM {name}.{key}") == (want, [f"{name}.{key}"]), name
    assert OLD != NEW


def test_replace_makes_it_stale_and_drops_are_one_commit_or_refused(spark, server):
    b, ns, uri = _branch(spark, server, "etl_ddl"), "mvddl", server.base
    _tables(spark, b, ns)
    key, mv = f"{ns}.mv", f"{b}.{ns}.mv"
    create_materialized_view(spark, uri, key, JOIN, ref=b)
    refresh(spark, uri, key, ref=b)
    version = _mv(server, b, key)["versionId"]
    new_sql = JOIN.replace("sum(o.amt)", "max(o.amt)")
    spark.sql(f"USE {b}.{ns}")
    try:
        spark.sql(f"CREATE OR REPLACE VIEW {mv} AS {new_sql}")
    finally:
        spark.sql("USE sapwood")
    assert _mv(server, b, key)["versionId"] != version
    f = freshness(uri, key, b)
    assert f["status"] == "stale" and any("definition" in r for r in f["reasons"]), f
    want = [("eu", 20, 2), ("us", 5, 1)]
    assert _direct(spark, b, ns, new_sql) == want
    assert _read(spark, f"SELECT * FROM {mv}") == (
        want, [f"{b}.{ns}.customers", f"{b}.{ns}.orders"])
    plan = refresh(spark, uri, key, ref=b)
    assert plan["kind"] == "full" and "definition" in plan["reason"]
    assert freshness(uri, key, b)["status"] == "fresh"
    assert _read(spark, f"SELECT * FROM {mv}") == (want, [mv])

    assert "mv" in [r[1] for r in rows(spark, f"SHOW VIEWS IN {b}.{ns}")]
    before = _history(server, b)
    spark.sql(f"DROP VIEW {mv}")
    after = _history(server, b)
    assert len(after) == len(before) + 1
    assert after[1]["commitMeta"]["hash"] == before[0]["commitMeta"]["hash"]
    assert [(o["type"], o["key"]["elements"]) for o in after[0]["operations"]] == [
        ("DELETE", [ns, "mv"])]
    assert "mv" not in [r[1] for r in rows(spark, f"SHOW VIEWS IN {b}.{ns}")]
    with pytest.raises(CatalogError) as gone:
        freshness(uri, key, b)
    assert gone.value.status == 404

    # Lenient (the default): the drop goes through, the view is invalid.
    create_materialized_view(spark, uri, f"{ns}.lenient", JOIN, ref=b)
    refresh(spark, uri, f"{ns}.lenient", ref=b)
    spark.sql(f"DROP TABLE {b}.{ns}.customers")
    f = freshness(uri, f"{ns}.lenient", b)
    assert f["status"] == "invalid" and not f["servedFromStorage"], f
    invalid = Versioning(uri).call("GET", f"/api/v2/trees/{b}/views",
                                   params={"status": "invalid"})["views"]
    assert [v["key"] for v in invalid] == [[ns, "lenient"]], invalid

    # Strict: dropping a table the view reads is refused; nothing changes.
    strict = "mvstrict"
    _tables(spark, b, strict, "'sapwood.view-invalidation' = 'strict'")
    create_materialized_view(spark, uri, f"{strict}.mv", JOIN, ref=b)
    refresh(spark, uri, f"{strict}.mv", ref=b)
    head = Versioning(uri).head(b)
    with pytest.raises(Exception, match=r"(?s)Cannot drop table .*orders.*invalid"):
        spark.sql(f"DROP TABLE {b}.{strict}.orders")
    assert Versioning(uri).head(b) == head
    assert rows(spark, f"SELECT count(*) FROM {b}.{strict}.orders") == [(3,)]
    assert freshness(uri, f"{strict}.mv", b)["status"] == "fresh"


def _files(spark: SparkSession, table: str) -> set[str]:
    return {urlparse(r[0]).path for r in rows(spark, f"SELECT file_path FROM {table}.files")}


def test_appends_refresh_incrementally_from_exactly_the_appended_files(spark, server):
    b, ns, uri = _branch(spark, server, "etl_inc"), "mvinc", server.base
    spark.sql(f"CREATE NAMESPACE {b}.{ns}")
    spark.sql(f"CREATE TABLE {b}.{ns}.o (id BIGINT, cust BIGINT, amt BIGINT) USING iceberg")
    for values in ("(1, 1, 10), (2, 1, 5)", "(3, 2, 30)", "(4, 2, 2)"):
        spark.sql(f"INSERT INTO {b}.{ns}.o VALUES {values}")
    sqls = {"big": "SELECT id, amt FROM o WHERE amt >= 10",
            "agg": "SELECT cust, sum(amt) AS s, count(*) AS n, min(amt) AS lo, "
                   "max(amt) AS hi FROM o GROUP BY cust",
            "mean": "SELECT cust, avg(amt) AS a FROM o GROUP BY cust"}
    for name, sql in sqls.items():
        create_materialized_view(spark, uri, f"{ns}.{name}", sql, ref=b)
        assert refresh(spark, uri, f"{ns}.{name}", ref=b)["kind"] == "full"
    before = _files(spark, f"{b}.{ns}.o")
    spark.sql(f"INSERT INTO {b}.{ns}.o VALUES (5, 1, 7), (6, 1, 70)")
    spark.sql(f"INSERT INTO {b}.{ns}.o VALUES (7, 3, 11)")
    every = _files(spark, f"{b}.{ns}.o")
    added = every - before
    assert before <= every and len(added) >= 2

    plan = refresh(spark, uri, f"{ns}.big", ref=b, report_files=True)
    assert plan["kind"] == "incremental", plan["reason"]
    assert {urlparse(p).path for p in plan["filesRead"]} == added
    assert added < every
    create_materialized_view(spark, uri, f"{ns}.big_full", sqls["big"], ref=b)
    assert refresh(spark, uri, f"{ns}.big_full", ref=b, mode="full")["kind"] == "full"
    big = _direct(spark, b, ns, sqls["big"])
    assert big == [(1, 10), (3, 30), (6, 70), (7, 11)]
    for name in ("big", "big_full"):
        assert freshness(uri, f"{ns}.{name}", b)["status"] == "fresh", name
        assert _read(spark, f"SELECT * FROM {b}.{ns}.{name}") == (big, [f"{b}.{ns}.{name}"])

    plan = refresh(spark, uri, f"{ns}.agg", ref=b)
    assert plan["kind"] == "incremental", plan["reason"]
    assert _mv(server, b, f"{ns}.agg")["refreshes"][-1]["refresh-kind"] == "incremental"
    agg = _direct(spark, b, ns, sqls["agg"])
    assert agg == [(1, 92, 4, 5, 70), (2, 32, 2, 2, 30), (3, 11, 1, 11, 11)]
    assert _read(spark, f"SELECT * FROM {b}.{ns}.agg") == (agg, [f"{b}.{ns}.agg"])

    plan = refresh(spark, uri, f"{ns}.mean", ref=b)
    assert plan["kind"] == "full" and "not a group key or sum/count/min/max" in plan["reason"]
    assert _mv(server, b, f"{ns}.mean")["refreshes"][-1]["refresh-kind"] == "full"
    mean = _direct(spark, b, ns, sqls["mean"])
    assert _read(spark, f"SELECT * FROM {b}.{ns}.mean") == (mean, [f"{b}.{ns}.mean"])


def test_the_cli_refreshes_with_its_own_spark(spark: SparkSession, server: Server) -> None:
    """``sapwood mv refresh`` (a local Spark session of its own) lands a refresh."""

    cat = _branch(spark, server, "etl_cli")
    _tables(spark, cat, "mvcli")
    r = sapwood(["mv", "create", "mvcli.mv", "--branch", "etl_cli",
                 "--sql", "SELECT cust, sum(amt) AS total FROM mvcli.orders GROUP BY cust"],
                timeout=60, env={"SAPWOOD_URI": server.base})
    assert r.returncode == 0, r.stdout + r.stderr
    r = sapwood(["mv", "refresh", "mvcli.mv", "--branch", "etl_cli"], timeout=300,
                env={"SAPWOOD_URI": server.base})
    assert r.returncode == 0, r.stdout + r.stderr
    assert "mvcli.mv: full refresh (never refreshed)" in r.stdout, r.stdout
    assert freshness(server.base, "mvcli.mv", "etl_cli")["status"] == "fresh"
    got, scanned = _read(spark, f"SELECT * FROM {cat}.mvcli.mv")
    assert got == [(1, 30), (2, 5)] and scanned == [f"{cat}.mvcli.mv"]


class _Orchestrator:
    """A webhook receiver as an orchestrator would run one: it answers each
    delivery at once and refreshes, on its own thread with the Spark helper,
    the materialized views it manages whose base tables a merge into main
    touched. ``done`` is set after each refresh (the test waits on it: no
    polling)."""

    def __init__(self, spark: SparkSession, uri: str, manages: dict[str, set[str]]) -> None:
        import queue
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.spark, self.uri, self.manages = spark, uri, manages
        self.work: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.events: list[dict[str, Any]] = []
        self.refreshed: list[tuple[str, dict[str, Any]]] = []
        self.done = threading.Event()
        me = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                import json

                me.work.put(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}/hook"
        threading.Thread(target=self.http.serve_forever, daemon=True).start()
        self.worker = threading.Thread(target=self._run, daemon=True)
        self.worker.start()

    def _run(self) -> None:
        while (event := self.work.get()) is not None:
            self.events.append(event)
            touched = {".".join(op["key"]) for c in event["data"]["commits"]
                       for op in c["operations"]}
            for mv, bases in self.manages.items():
                if touched & bases:
                    self.refreshed.append((mv, refresh(self.spark, self.uri, mv)))
            self.done.set()

    def close(self) -> None:
        self.work.put(None)
        self.http.shutdown()
        self.worker.join(60)


def test_a_webhook_on_merges_into_main_keeps_a_materialized_view_fresh(spark, server):
    """Issue 26, acceptance 3: a webhook on merges into main that touch a
    base table of an MV; the receiver refreshes the MV; the MV is fresh on
    main afterwards. Its refresh is an OpenLineage run in the feed."""
    from tests.openlineage_parse import parse

    uri, ns = server.base, "orch"
    _tables(spark, "sapwood", ns)
    spark.sql(f"CREATE TABLE sapwood.{ns}.other (id BIGINT) USING iceberg")
    key = f"{ns}.mv"
    bases = {f"{ns}.orders", f"{ns}.customers"}
    create_materialized_view(spark, uri, key, JOIN)
    refresh(spark, uri, key)
    assert freshness(uri, key)["status"] == "fresh"
    v = Versioning(uri)
    orchestrator = _Orchestrator(spark, uri, {key: bases})
    try:
        hook = v.call("POST", "/api/v2/webhooks", json={
            "url": orchestrator.url, "types": ["dev.sapwood.merge"], "refs": ["main"],
            "keys": sorted(bases | {f"{ns}.other"})})
        # A merge that touches no base table: delivered, nothing refreshed.
        b = _branch(spark, server, "orch_other")
        spark.sql(f"INSERT INTO {b}.{ns}.other VALUES (1)")
        v.merge("orch_other", into="main")
        assert orchestrator.done.wait(120)
        orchestrator.done.clear()
        assert orchestrator.refreshed == [] and freshness(uri, key)["status"] == "fresh"
        # A merge that changes a base table: the MV is refreshed on main.
        b = _branch(spark, server, "orch_etl")
        spark.sql(f"INSERT INTO {b}.{ns}.orders VALUES (4, 2, 100)")
        merged = v.merge("orch_etl", into="main").hash
        assert orchestrator.done.wait(300)
        ((mv, plan),) = orchestrator.refreshed
        # It read main as the merge left it (the merged rows are in the MV).
        assert mv == key and plan["kind"] in ("full", "incremental")
        assert plan["pinnedReference"] == f"main@{merged}"
        f = freshness(uri, key)
        assert f["status"] == "fresh" and f["servedFromStorage"]
        assert _read(spark, f"SELECT * FROM sapwood.{key}") == (NEW, [f"sapwood.{key}"])
        assert [e["type"] for e in orchestrator.events] == ["dev.sapwood.merge"] * 2
        assert all(e["subject"] == "main" for e in orchestrator.events)
        state = v.call("GET", f"/api/v2/webhooks/{hook['id']}")
        assert state["delivered"] == 2 and state["failures"] == 0
        v.call("DELETE", f"/api/v2/webhooks/{hook['id']}")
    finally:
        orchestrator.close()
    # The refresh, as OpenLineage: inputs at the snapshots it read.
    lineage = v.call("GET", "/api/v2/events", params={
        "types": "dev.sapwood.openlineage", "ref": "main", "after": 0, "maxRecords": 1000})
    runs = [r for e in lineage["events"] for r in e["data"]["runEvents"]
            if r["job"]["name"] == f"{key} (refresh)"]
    assert len(runs) == 2  # the first refresh and the orchestrated one
    last = parse(runs[-1])
    assert {d.name: d.facets["version"].datasetVersion for d in last.inputs or []} == {
        t: str(s) for t, s in plan["baseTables"].items()}
    (out,) = last.outputs or []
    assert out.name == key and out.facets["version"].datasetVersion == str(
        _mv(server, "main", key)["refreshes"][-1]["snapshot-id"])


def test_a_restored_materialized_view_is_fresh_only_if_its_bases_are_as_then(spark, server):
    """Issue 27: a materialized view restored from before a replace comes
    back as it was (definition, storage, refresh): fresh while its base
    tables are as at the source, stale once they have moved."""
    b, ns, uri = _branch(spark, server, "mv_restore"), "mvrestore", server.base
    _tables(spark, b, ns)
    key = f"{ns}.mv"
    create_materialized_view(spark, uri, key, JOIN, ref=b)
    refresh(spark, uri, key, ref=b)
    fresh_at = _instant()
    v = Versioning(uri)
    other = "SELECT region, count(*) AS n FROM customers GROUP BY region"
    spark.sql(f"USE {b}.{ns}")
    spark.sql(f"CREATE OR REPLACE VIEW {b}.{key} AS {other}")
    spark.sql("USE sapwood")
    assert freshness(uri, key, b)["status"] == "stale"
    done = v.restore([key], ref_spec(b, fresh_at), branch=b)
    assert done["keys"][0]["action"] == "restored" and done["keys"][0]["type"] == \
        "MATERIALIZED_VIEW"
    f = freshness(uri, key, b)
    assert f["status"] == "fresh" and f["servedFromStorage"], f
    assert _read(spark, f"SELECT * FROM {b}.{key}") == (OLD, [f"{b}.{key}"])
    # Once a base table moves, the same restore brings it back stale.
    spark.sql(f"INSERT INTO {b}.{ns}.orders VALUES (4, 2, 100)")
    spark.sql(f"USE {b}.{ns}")
    spark.sql(f"CREATE OR REPLACE VIEW {b}.{key} AS {other}")
    spark.sql("USE sapwood")
    v.restore([key], ref_spec(b, fresh_at), branch=b)
    f = freshness(uri, key, b)
    assert f["status"] == "stale" and any(f"{ns}.orders" in r for r in f["reasons"]), f
