"""Materialized views over HTTP, on SQLite and PostgreSQL: the metadata file
(read from disk), freshness as base tables move, the two forms loadTable and
loadView answer, replace, drop, invalidation, merges, time travel, the
refresh's consistency rules, and bad input. Refreshes here are done by
PyIceberg (a second engine): it reads the base tables through a catalog
pinned at the plan's ``branch@hash`` and overwrites the storage through it
with the ``Sapwood-Refresh`` header, as the Spark helper does."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlparse

import pyarrow as pa
import pyarrow.compute as pc
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType

from catalog.maintenance.gc import live_files
from catalog.metadata.files import MetadataFiles
from core.content import parse_content
from tests.api.test_rest_http import V1, err, unchanged
from tests.api.test_view_analysis_http import make

SCHEMA = Schema(NestedField(1, "id", LongType(), required=False),
                NestedField(2, "v", StringType(), required=False))
SQL = "SELECT id, v FROM {ns}.t WHERE v = 'a'"
# The fields of the proposal's table (Iceberg issue #6420), in its order.
PROPOSAL_FIELDS = [
    "format-version", "location", "uuid", "versions", "current-version-id", "version-log",
    "last-sequence-number", "last-updated-ms", "last-column-id", "schemas",
    "current-schema-id", "partition-specs", "default-spec-id", "last-partition-id",
    "sort-orders", "default-sort-order-id", "refreshes", "current-refresh-id", "snapshots",
    "current-snapshot-id", "snapshot-log", "properties", "metadata-log", "refs", "statistics"]


def mv_path(ref: str, key: str, tail: str = "") -> str:
    return f"/api/v2/trees/{quote(ref, safe='')}/materialized-views/{key}{tail}"


def base_table(server, ns: str, ref: str = "main", rows: int = 3):  # type: ignore[no-untyped-def]
    t = server.catalog(ref).create_table(f"{ns}.t", SCHEMA)
    append(t, rows)
    return t


def append(t, n: int, start: int = 0) -> None:  # type: ignore[no-untyped-def]
    t.refresh()
    ids = list(range(start, start + n))
    t.append(pa.table({"id": pa.array(ids, pa.int64()),
                       "v": pa.array(["a" if i % 2 == 0 else "b" for i in ids])},
                      schema=t.schema().as_arrow()))


def create(http, ns: str, name: str = "mv", sql: str = SQL, ref: str = "main",
           **props: str) -> dict[str, Any]:
    r = http.post(mv_path(ref, "")[:-1], json={
        "key": {"elements": [ns, name]}, "sql": sql.format(ns=ns), "defaultNamespace": [ns],
        "properties": props})
    assert r.status_code == 200, r.text
    return r.json()


def refresh(server, http, key: str, ref: str = "main",  # type: ignore[no-untyped-def]
            plan: dict[str, Any] | None = None, kind: str = "full") -> dict[str, Any]:
    """What the Spark helper does, with PyIceberg and pyarrow as the engine:
    the filter view's rows computed from the base table at the pinned commit."""
    plan = plan or http.get(mv_path(ref, key, "/refresh-plan")).json()
    cat = server.catalog(plan["pinnedReference"],
                         **{"header.Sapwood-Refresh": str(plan["versionId"])})
    (base,) = plan["baseTables"]
    rows = cat.load_table(base).scan().to_arrow()
    rows = rows.filter(pc.equal(rows["v"], "a")).select(["id", "v"])
    storage = cat.load_table(key)
    storage.overwrite(rows.cast(storage.schema().as_arrow()),
                      snapshot_properties={"sapwood.refresh": kind})
    return plan


def fresh(http, key: str, ref: str = "main") -> dict[str, Any]:
    r = http.get(mv_path(ref, key, "/freshness"))
    assert r.status_code == 200, r.text
    return r.json()


def load_table(http, ns: str, name: str, ref: str = "main", **headers: str):  # type: ignore[no-untyped-def]
    return http.get(f"/iceberg/{quote(ref, safe='')}/v1/namespaces/{ns}/tables/{name}",
                    headers=headers)


def v2err(r, code: int, words: str) -> None:  # type: ignore[no-untyped-def]
    """A refusal of the versioning API (Nessie's error shape)."""
    assert r.status_code == code, r.text
    assert words in r.json()["message"], r.text


def head(http, ref: str = "main") -> str:
    return http.get(f"/api/v2/trees/{ref}").json()["reference"]["hash"]


def test_the_metadata_file_carries_every_field_of_the_proposal(server, http, ns) -> None:
    base_table(server, ns)
    create(http, ns)
    refresh(server, http, f"{ns}.mv")
    loc = http.get(mv_path("main", f"{ns}.mv")).json()["metadataLocation"]
    doc = json.loads(Path(urlparse(loc).path).read_text())  # the file, not the API
    assert list(doc) == PROPOSAL_FIELDS
    assert doc["format-version"] == 1 and doc["current-version-id"] == 1
    (r,) = doc["refreshes"]
    assert doc["current-refresh-id"] == r["refresh-id"] == 1
    assert r["version-id"] == 1 and r["sequence-number"] == doc["last-sequence-number"]
    t = server.catalog().load_table(f"{ns}.t")
    assert r["base-tables"] == {f"{ns}.t": {
        "type": "iceberg-metastore", "identifier": f"{ns}.t",
        "snapshot-reference": t.current_snapshot().snapshot_id,
        "properties": {"content-id": http.get(f"/api/v2/trees/main/contents/{ns}.t")
                       .json()["content"]["id"]}}}
    assert doc["current-snapshot-id"] == r["snapshot-id"]
    assert doc["refs"]["main"]["snapshot-id"] == r["snapshot-id"]
    assert doc["versions"][0]["representations"][0]["sql"] == SQL.format(ns=ns)
    # Garbage collection keeps what the storage reads: its data files are live.
    content = parse_content(http.get(f"/api/v2/trees/main/contents/{ns}.mv").json()["content"])
    live = live_files(MetadataFiles(), [content])
    stored = server.catalog().load_table(f"{ns}.mv").scan().plan_files()
    assert stored and all(urlparse(f.file.file_path).path in live for f in stored)


def test_freshness_follows_the_base_table_and_decides_the_form(server, http, ns) -> None:
    t = base_table(server, ns)
    create(http, ns)
    f = fresh(http, f"{ns}.mv")
    assert (f["status"], f["reasons"], f["servedFromStorage"]) == \
        ("stale", ["never refreshed"], False)
    err(load_table(http, ns, "mv"), 404, "NoSuchTableException")
    assert http.get(f"{V1}/namespaces/{ns}/views/mv").status_code == 200  # the view form
    assert [i["name"] for i in http.get(f"{V1}/namespaces/{ns}/views").json()["identifiers"]] \
        == ["mv"]
    refresh(server, http, f"{ns}.mv")
    f = fresh(http, f"{ns}.mv")
    assert (f["status"], f["servedFromStorage"]) == ("fresh", True)
    stored = load_table(http, ns, "mv")
    assert stored.status_code == 200
    assert stored.json()["metadata"]["current-snapshot-id"] == f["refresh"]["snapshotId"]
    read = t.current_snapshot().snapshot_id
    append(t, 2, start=10)
    f = fresh(http, f"{ns}.mv")
    assert f["status"] == "stale" and f["reasons"] == [f"table {ns}.t changed since the refresh"]
    (b,) = f["baseTables"]
    assert (b["snapshotRead"], b["fresh"]) == (read, False)
    assert b["snapshotCurrent"] == server.catalog().load_table(f"{ns}.t").current_snapshot()\
        .snapshot_id
    assert 0 <= b["changedAgoMs"] < 60_000 and f["staleForMs"] >= 0
    err(load_table(http, ns, "mv"), 404, "NoSuchTableException")
    # A reader that accepts staleness gets the stored rows.
    assert load_table(http, ns, "mv", **{"Sapwood-Max-Staleness-Ms": "600000"}).status_code == 200
    err(load_table(http, ns, "mv", **{"Sapwood-Max-Staleness-Ms": "0"}), 404,
        "NoSuchTableException")
    # So does every reader once the view itself allows it.
    r = http.put(mv_path("main", f"{ns}.mv"), json={"properties": {"max-staleness-ms": "600000"}})
    assert r.status_code == 200, r.text
    assert load_table(http, ns, "mv").status_code == 200
    refresh(server, http, f"{ns}.mv")
    assert fresh(http, f"{ns}.mv")["status"] == "fresh"
    rows = server.catalog().load_table(f"{ns}.mv").scan().to_arrow()
    assert sorted(rows["id"].to_pylist()) == [0, 2, 10]


def test_replace_is_stale_until_refreshed_and_drop_is_one_commit(server, http, ns) -> None:
    base_table(server, ns)
    create(http, ns, **{"max-staleness-ms": "600000"})
    refresh(server, http, f"{ns}.mv")
    r = http.put(mv_path("main", f"{ns}.mv"), json={
        "sql": f"SELECT id, v FROM {ns}.t WHERE v = 'a' AND id > 0", "defaultNamespace": [ns]})
    assert r.status_code == 200, r.text and r.json()["versionId"] == 2
    f = fresh(http, f"{ns}.mv")
    assert f["status"] == "stale" and f["reasons"][0].startswith("the definition changed")
    # No staleness bound admits another query's rows.
    assert f["staleForMs"] is None
    err(load_table(http, ns, "mv"), 404, "NoSuchTableException")
    plan = http.get(mv_path("main", f"{ns}.mv", "/refresh-plan")).json()
    assert (plan["kind"], plan["versionId"]) == ("full", 2)
    refresh(server, http, f"{ns}.mv")
    assert fresh(http, f"{ns}.mv")["status"] == "fresh"
    before = head(http)
    assert http.delete(mv_path("main", f"{ns}.mv")).status_code == 204
    log = http.get("/api/v2/trees/main/history", params={"maxRecords": 2}).json()["logEntries"]
    assert log[0]["commitMeta"]["message"] == f"drop materialized view {ns}.mv"
    assert log[0]["commitMeta"]["parentCommitHashes"] == [before]  # one commit
    v2err(http.get(mv_path("main", f"{ns}.mv")), 404, "does not exist")
    err(http.get(f"{V1}/namespaces/{ns}/views/mv"), 404, "NoSuchViewException")
    assert http.get(f"{V1}/namespaces/{ns}/views").json()["identifiers"] == []


def test_time_travel_answers_with_the_refresh_current_then(server, http, ns) -> None:
    t = base_table(server, ns)
    create(http, ns)
    time.sleep(0.01)
    t1 = int(time.time() * 1000)
    refresh(server, http, f"{ns}.mv")
    time.sleep(0.01)
    t2 = int(time.time() * 1000)
    first = fresh(http, f"{ns}.mv")["refresh"]["snapshotId"]
    append(t, 2, start=20)
    refresh(server, http, f"{ns}.mv")
    time.sleep(0.01)
    t3 = int(time.time() * 1000)
    assert fresh(http, f"{ns}.mv", f"main*{t1}")["status"] == "stale"
    err(load_table(http, ns, "mv", f"main*{t1}"), 404, "NoSuchTableException")
    at2 = fresh(http, f"{ns}.mv", f"main*{t2}")
    assert (at2["status"], at2["refresh"]["refreshId"], at2["atMs"]) == ("fresh", 1, t2)
    assert load_table(http, ns, "mv", f"main*{t2}").json()["metadata"][
        "current-snapshot-id"] == first
    at3 = fresh(http, f"{ns}.mv", f"main*{t3}")
    assert (at3["status"], at3["refresh"]["refreshId"]) == ("fresh", 2)
    cat2 = server.catalog(f"main*{t2}")
    assert sorted(cat2.load_table(f"{ns}.mv").scan().to_arrow()["id"].to_pylist()) == [0, 2]
    cat3 = server.catalog(f"main*{t3}")
    assert sorted(cat3.load_table(f"{ns}.mv").scan().to_arrow()["id"].to_pylist()) == [0, 2, 20]


def test_a_merge_brings_the_base_snapshots_and_freshness_to_main(server, http, ns) -> None:
    branch = f"etl_{ns}"[:60]
    r = http.post("/api/v2/trees", params={"name": branch, "type": "BRANCH"},
                  json={"type": "BRANCH", "name": "main", "hash": head(http)})
    assert r.status_code == 200, r.text
    base_table(server, ns, ref=branch)
    create(http, ns, ref=branch)
    refresh(server, http, f"{ns}.mv", ref=branch)
    assert fresh(http, f"{ns}.mv", branch)["status"] == "fresh"
    r = http.post(f"/api/v2/trees/main@{head(http)}/history/merge", json={
        "fromRefName": branch, "fromHash": head(http, branch)})
    assert r.status_code == 200, r.text
    f = fresh(http, f"{ns}.mv")
    assert f["status"] == "fresh" and f["refresh"]["sourceCommit"] != head(http)
    assert load_table(http, ns, "mv").status_code == 200


def test_refresh_refused_when_the_definition_moved_fine_when_a_base_did(server, http, store,
                                                                        ns) -> None:
    t = base_table(server, ns)
    create(http, ns)
    plan = http.get(mv_path("main", f"{ns}.mv", "/refresh-plan")).json()
    pinned_snapshot = t.current_snapshot().snapshot_id
    append(t, 2, start=30)  # a base moves after the pin: fine
    refresh(server, http, f"{ns}.mv", plan=plan)
    f = fresh(http, f"{ns}.mv")
    assert f["refresh"]["sourceCommit"] == plan["hash"]
    assert f["baseTables"][0]["snapshotRead"] == pinned_snapshot
    assert f["status"] == "stale"
    lax = server.catalog(**{"header.Sapwood-Max-Staleness-Ms": "600000"})
    rows = lax.load_table(f"{ns}.mv").scan().to_arrow()
    assert sorted(rows["id"].to_pylist()) == [0, 2]  # exactly the pinned snapshot's rows
    plan = http.get(mv_path("main", f"{ns}.mv", "/refresh-plan")).json()
    r = http.put(mv_path("main", f"{ns}.mv"), json={
        "sql": f"SELECT id, v FROM {ns}.t", "defaultNamespace": [ns]})
    assert r.status_code == 200, r.text
    with unchanged(store):
        try:
            refresh(server, http, f"{ns}.mv", plan=plan)
            raise AssertionError("a refresh of a replaced definition landed")
        except Exception as e:  # PyIceberg's CommitFailedException
            assert "its definition changed since the refresh began" in str(e) or \
                "computed version 1" in str(e), e


def test_a_dropped_base_makes_it_invalid_or_is_refused(server, http, store, ns) -> None:
    base_table(server, ns)
    create(http, ns)
    refresh(server, http, f"{ns}.mv")
    assert http.delete(f"{V1}/namespaces/{ns}/tables/t").status_code == 204  # lenient
    f = fresh(http, f"{ns}.mv")
    assert (f["status"], f["reasons"]) == ("invalid", [f"table {ns}.t dropped"])
    err(load_table(http, ns, "mv"), 404, "NoSuchTableException")
    invalid = http.get("/api/v2/trees/main/views", params={"status": "invalid"}).json()
    assert [v["type"] for v in invalid["views"] if v["key"] == [ns, "mv"]] == \
        ["MATERIALIZED_VIEW"]
    strict = f"{ns}_s"
    r = http.post(f"{V1}/namespaces", json={"namespace": [strict], "properties": {
        "sapwood.view-invalidation": "strict"}})
    assert r.status_code == 200, r.text
    base_table(server, strict)
    create(http, strict)
    with unchanged(store):
        r = http.delete(f"{V1}/namespaces/{strict}/tables/t")
        err(r, 409, "CommitFailedException")
        assert f"{strict}.mv (table {strict}.t dropped)" in r.json()["error"]["message"]
    assert http.delete(f"{V1}/namespaces/{strict}/tables/t",
                       params={"cascade": "true"}).status_code == 204
    v2err(http.get(mv_path("main", f"{strict}.mv")), 404, "does not exist")


def test_lineage_dependents_audit_and_cycles_cover_mvs(server, http, ns) -> None:
    base_table(server, ns)
    create(http, ns)
    refresh(server, http, f"{ns}.mv")
    deps = http.get(f"/api/v2/trees/main/contents/{ns}.t/dependents").json()["dependents"]
    assert [(d["key"], d["type"]) for d in deps] == [([ns, "mv"], "MATERIALIZED_VIEW")]
    cols = http.get(f"/api/v2/trees/main/views/{ns}.mv/lineage").json()["columns"]
    assert [(c["name"], c["origins"][0]["table"]) for c in cols] == \
        [("id", [ns, "t"]), ("v", [ns, "t"])]
    r = http.put(mv_path("main", f"{ns}.mv"), json={
        "sql": f"SELECT id, v FROM {ns}.t", "defaultNamespace": [ns]})
    assert r.status_code == 200, r.text
    audit = http.get(f"/api/v2/trees/main/views/{ns}.mv/history").json()
    assert audit["type"] == "MATERIALIZED_VIEW"
    assert [v["versionId"] for v in audit["versions"]] == [1, 2]
    assert [(r["refreshId"], r["versionId"], r["kind"]) for r in audit["refreshes"]] == \
        [(1, 1, "full")]
    make(http, ns, "over", f"SELECT id FROM {ns}.mv")
    r = http.put(mv_path("main", f"{ns}.mv"), json={
        "sql": f"SELECT id, 'a' AS v FROM {ns}.over", "defaultNamespace": [ns]})
    v2err(r, 400, f"{ns}.mv → {ns}.over → {ns}.mv")


def test_bad_input_is_refused_and_changes_nothing(server, http, store, ns) -> None:
    base_table(server, ns)
    create(http, ns)
    key = {"elements": [ns, "bad"]}
    with unchanged(store):
        for body, code, words in [
            ({"key": key, "sql": "SELEC nope"}, 400, "the spark SQL is not a query"),
            ({"key": key, "sql": "SELECT FROM WHERE", "schema": {
                "type": "struct", "schema-id": 0, "fields": [
                    {"id": 1, "name": "x", "type": "long", "required": False}]}},
             400, "must be analysed"),
            ({"key": key, "sql": "SELECT 1 AS x", "schema": {"type": "struct"}}, 400,
             "the schema's columns (none) are not the query's (x)"),
            ({"key": key, "sql": "SELECT 1 AS x", "schema": {"fields": "x"}}, 400,
             "Invalid schema"),
            ({"key": key, "sql": f"SELECT * FROM {ns}.missing"}, 400, "does not exist"),
            ({"key": key, "sql": "SELECT 1 AS x", "dialect": "klingon"}, 400, "dialect"),
            ({"key": {"elements": [ns, "mv"]}, "sql": "SELECT 1 AS x"}, 409, "exists"),
            ({"key": key, "sql": f"SELECT id FROM {ns}.t",
              "properties": {"max-staleness-ms": "soon"}}, 400, "max-staleness-ms"),
            ({"key": {"elements": ["nowhere", "x"]}, "sql": "SELECT 1 AS x"}, 404, "nowhere"),
        ]:
            v2err(http.post("/api/v2/trees/main/materialized-views", json=body), code, words)
        plan = http.get(mv_path("main", f"{ns}.mv", "/refresh-plan")).json()
        pinned = f"/iceberg/{quote(plan['pinnedReference'], safe='')}/v1/namespaces/{ns}"
        r = http.post(f"{pinned}/tables/mv", json={"requirements": [], "updates": []},
                      headers={"Sapwood-Refresh": "one"})
        err(r, 400, "BadRequestException")
        r = http.post(f"{V1}/namespaces/{ns}/tables/mv", json={"requirements": [],
                                                               "updates": []},
                      headers={"Sapwood-Refresh": "1"})
        err(r, 400, "BadRequestException")
        assert "pinned at branch@hash" in r.json()["error"]["message"]
        r = http.post(f"{V1}/namespaces/{ns}/tables/mv", json={"requirements": [],
                                                               "updates": []})
        err(r, 400, "BadRequestException")
        assert "is a materialized view" in r.json()["error"]["message"]
        v2err(http.get(mv_path("main", f"{ns}.mv", "/refresh-plan"), params={"mode": "lazy"}),
              400, "Invalid refresh mode")
        v2err(http.get(mv_path(f"main*{int(time.time() * 1000)}", f"{ns}.mv",
                               "/refresh-plan")), 400, "a refresh lands on a branch")
        v2err(http.get(mv_path("main", f"{ns}.t", "/freshness")), 404, "does not exist")
        err(load_table(http, ns, "mv", **{"Sapwood-Max-Staleness-Ms": "-1"}), 400,
            "BadRequestException")
        v2err(http.put(mv_path("main", f"{ns}.mv"), json={}), 400, "Nothing to replace")


def test_the_web_ui_shows_freshness_and_refreshes(server, http, ns) -> None:
    t = base_table(server, ns)
    create(http, ns)
    page = http.get(f"/ui/object/main/{ns}.mv")
    assert page.status_code == 200, page.text
    assert f"Materialized view {ns}.mv" in page.text and "never refreshed" in page.text
    refresh(server, http, f"{ns}.mv")
    append(t, 1, start=40)
    page = http.get(f"/ui/object/main/{ns}.mv").text
    assert "<strong>stale</strong>: table" in page and "readers run the SQL" in page
    assert '<td>1</td><td>1</td><td>full</td>' in page  # the refresh's row


def test_the_iceberg_view_routes_alter_and_rename_it(server, http, ns) -> None:
    """What Spark sends for ALTER VIEW … SET TBLPROPERTIES and … RENAME TO."""
    base_table(server, ns)
    create(http, ns)
    refresh(server, http, f"{ns}.mv")
    uuid = http.get(f"{V1}/namespaces/{ns}/views/mv").json()["metadata"]["view-uuid"]
    r = http.post(f"{V1}/namespaces/{ns}/views/mv", json={
        "requirements": [{"type": "assert-view-uuid", "uuid": uuid}],
        "updates": [{"action": "set-properties", "updates": {"max-staleness-ms": "5000"}}]})
    assert r.status_code == 200, r.text
    assert r.json()["metadata"]["properties"]["max-staleness-ms"] == "5000"
    f = fresh(http, f"{ns}.mv")
    assert (f["maxStalenessMs"], f["status"]) == (5000, "fresh")  # properties alone: still fresh
    r = http.post(f"{V1}/views/rename", json={"source": {"namespace": [ns], "name": "mv"},
                                              "destination": {"namespace": [ns], "name": "mv2"}})
    assert r.status_code == 204, r.text
    assert fresh(http, f"{ns}.mv2")["status"] == "fresh"
    assert load_table(http, ns, "mv2").status_code == 200
    err(http.get(f"{V1}/namespaces/{ns}/views/mv"), 404, "NoSuchViewException")
