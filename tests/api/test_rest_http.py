"""Raw HTTP: Spark's request sequences (SPARK_NOTES) and every status/message
row of REST_NOTES, each failure leaving the branch as it was."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import httpx

from core.commits import RefType
from tests.api import spark_bodies as sb

V1 = "/iceberg/v1"


def err(r: httpx.Response, code: int, type_: str, message: str | None = None) -> None:
    assert r.status_code == code, r.text
    e = r.json()["error"]
    assert (e["code"], e["type"]) == (code, type_), e
    if message is not None:
        assert e["message"] == message, e


@contextmanager
def unchanged(store) -> Iterator[None]:  # type: ignore[no-untyped-def]
    """The block's failed requests must not move main."""
    before = store.get_reference("main").hash
    yield
    assert store.get_reference("main").hash == before


def make_table(http: httpx.Client, ns: str, name: str) -> dict:
    r = http.post(f"{V1}/namespaces/{ns}/tables", json=sb.create_table(name))
    assert r.status_code == 200, r.text
    return r.json()


def make_view(http: httpx.Client, ns: str, name: str, sql: str = "SELECT 1", **kw) -> dict:
    r = http.post(f"{V1}/namespaces/{ns}/views", json=sb.create_view(name, sql, **kw))
    assert r.status_code == 200, r.text
    return r.json()


# -- Spark's sequences ---------------------------------------------------------------
def test_create_namespace_sequence(http, store) -> None:
    err(http.get(f"{V1}/namespaces/spark_ns"), 404, "NoSuchNamespaceException",
        "Namespace does not exist: spark_ns")
    r = http.post(f"{V1}/namespaces", json={"namespace": ["spark_ns"], "properties": {}})
    assert r.status_code == 200 and r.json() == {"namespace": ["spark_ns"], "properties": {}}
    assert store.log("main").items[0].message == "create namespace spark_ns"


def test_create_table_insert_metrics_sequence(http, ns) -> None:
    err(http.get(f"{V1}/namespaces/{ns}/tables/t", params={"snapshots": "all"}), 404,
        "NoSuchTableException", f"Table does not exist: {ns}.t")
    created = make_table(http, ns, "t")
    meta = created["metadata"]
    assert created["metadata-location"].endswith(".metadata.json")
    loaded = http.get(f"{V1}/namespaces/{ns}/tables/t").json()
    # A snapshot whose manifest list is not there is refused, nothing written.
    r = http.post(f"{V1}/namespaces/{ns}/tables/t",
                  json=sb.append(meta["table-uuid"], 101, None, meta["location"]))
    err(r, 400, "BadRequestException")
    assert "manifest list of snapshot 101" in r.json()["error"]["message"], r.text
    assert http.get(f"{V1}/namespaces/{ns}/tables/t").json() == loaded
    for snapshot_id in (101, 102):
        sb.write_manifest_list(meta["location"], snapshot_id)
    r = http.post(f"{V1}/namespaces/{ns}/tables/t",
                  json=sb.append(meta["table-uuid"], 101, None, meta["location"]))
    assert r.status_code == 200, r.text
    after = r.json()
    assert after["metadata-location"] != loaded["metadata-location"]
    assert after["metadata"]["current-snapshot-id"] == 101
    assert http.post(f"{V1}/namespaces/{ns}/tables/t/metrics",
                     json={"report-type": "commit-report"}).status_code == 204
    # A second insert from a client holding the old snapshot fails its requirement.
    r = http.post(f"{V1}/namespaces/{ns}/tables/t",
                  json=sb.append(meta["table-uuid"], 102, None, meta["location"]))
    err(r, 409, "CommitFailedException")
    assert "main" in r.json()["error"]["message"]
    r = http.post(f"{V1}/namespaces/{ns}/tables/t",
                  json=sb.append(meta["table-uuid"], 102, 101, meta["location"], 2))
    assert r.status_code == 200, r.text

    def snapshot_ids(mode: str) -> list[int]:
        got = http.get(f"{V1}/namespaces/{ns}/tables/t", params={"snapshots": mode})
        return [s["snapshot-id"] for s in got.json()["metadata"]["snapshots"]]

    assert snapshot_ids("all") == [101, 102]
    assert snapshot_ids("refs") == [102]  # only what a branch or tag points at
    err(http.get(f"{V1}/namespaces/{ns}/tables/t", params={"snapshots": "some"}), 400,
        "BadRequestException")


def test_view_sequences(http, ns) -> None:
    make_table(http, ns, "base")
    created = make_view(http, ns, "v", f"SELECT * FROM {ns}.base")
    # SELECT FROM v: tables/v 404, views/v, then each referenced name as a view (404).
    err(http.get(f"{V1}/namespaces/{ns}/tables/v"), 404, "NoSuchTableException")
    got = http.get(f"{V1}/namespaces/{ns}/views/v").json()
    assert sb.current_sql(got["metadata"]) == f"SELECT * FROM {ns}.base"
    err(http.get(f"{V1}/namespaces/{ns}/views/base"), 404, "NoSuchViewException",
        f"View does not exist: {ns}.base")
    # CREATE OR REPLACE VIEW with -1 ids.
    uuid = created["metadata"]["view-uuid"]
    r = http.post(f"{V1}/namespaces/{ns}/views/v", json=sb.replace_view(uuid, "SELECT 2"))
    assert r.status_code == 200, r.text
    meta = r.json()["metadata"]
    assert meta["current-version-id"] == 2 and sb.current_sql(meta) == "SELECT 2"
    assert [e["version-id"] for e in meta["version-log"]] == [1, 2]
    assert meta["properties"]["create_engine"] == "spark"
    # SHOW VIEWS sends an empty page token.
    r = http.get(f"{V1}/namespaces/{ns}/views", params={"pageToken": ""})
    assert r.json()["identifiers"] == [{"namespace": [ns], "name": "v"}]


def test_metadata_table_probe(http, ns) -> None:
    make_table(http, ns, "t")
    # t.snapshots: Spark first tries namespace ns\x1ft, table "snapshots".
    err(http.get(f"{V1}/namespaces/{ns}%1Ft/tables/snapshots"), 404, "NoSuchTableException",
        f"Table does not exist: {ns}.t.snapshots")
    assert http.get(f"{V1}/namespaces/{ns}/tables/t", params={"snapshots": "all"}
                    ).status_code == 200


def test_config_and_path_shapes(http, server, store, ns) -> None:
    cfg = http.get(f"{V1}/config").json()
    assert cfg["overrides"]["prefix"] == "main"
    assert "POST /v1/{prefix}/namespaces/{namespace}/views" in cfg["endpoints"]
    assert "POST /v1/{prefix}/transactions/commit" in cfg["endpoints"]
    # Metrics are dropped, so clients are told not to send them; the test
    # servers' warehouses are local folders, which Java reads with HadoopFileIO
    # and for which no storage access is delegated.
    assert cfg["defaults"] == {"rest-metrics-reporting-enabled": "false",
                               "io-impl": "org.apache.iceberg.hadoop.HadoopFileIO",
                               "sapwood.access-delegation": (
                                   "unavailable: the warehouse is not on S3, so there is "
                                   "nothing to delegate; clients read and write its files "
                                   "directly")}
    store.create_reference(f"b_{ns}", source="main")
    assert http.get(f"/iceberg/b_{ns}/v1/config").json()["overrides"]["prefix"] == f"b_{ns}"
    assert http.get(f"{V1}/config", params={"warehouse": f"b_{ns}"}
                    ).json()["overrides"]["prefix"] == f"b_{ns}"
    for path in (f"{V1}/namespaces/{ns}", f"{V1}/main/namespaces/{ns}",
                 f"/iceberg/main/v1/namespaces/{ns}", f"/iceberg/main/v1/main/namespaces/{ns}",
                 f"/iceberg/b_{ns}/v1/b_{ns}/namespaces/{ns}"):
        assert http.get(path).status_code == 200, path
    err(http.get(f"/iceberg/main/v1/b_{ns}/namespaces/{ns}"), 400, "BadRequestException")
    err(http.get("/iceberg/nope/v1/namespaces"), 404, "NoSuchReferenceException")
    err(http.get("/iceberg/bad..name/v1/namespaces"), 400, "BadRequestException")
    # PyIceberg without a token sends "Bearer None".
    assert http.get(f"{V1}/namespaces", headers={"Authorization": "Bearer None"}
                    ).status_code == 200


# -- REST_NOTES: status codes and messages ---------------------------------------------------
def test_missing_things(http, ns) -> None:
    err(http.get(f"{V1}/namespaces/{ns}/views/nope"), 404, "NoSuchViewException",
        f"View does not exist: {ns}.nope")
    err(http.get(f"{V1}/namespaces/{ns}/tables/nope"), 404, "NoSuchTableException",
        f"Table does not exist: {ns}.nope")
    err(http.get(f"{V1}/namespaces/nope_ns"), 404, "NoSuchNamespaceException",
        "Namespace does not exist: nope_ns")
    err(http.get(f"{V1}/namespaces/nope_ns/tables"), 404, "NoSuchNamespaceException")
    err(http.post(f"{V1}/namespaces/nope_ns/views", json=sb.create_view("v", "SELECT 1")),
        404, "NoSuchNamespaceException", "Namespace does not exist: nope_ns")
    for path in (f"{V1}/namespaces/nope_ns", f"{V1}/namespaces/{ns}/tables/nope",
                 f"{V1}/namespaces/{ns}/views/nope"):
        r = http.head(path)
        assert r.status_code == 404 and r.content == b""
    assert http.head(f"{V1}/namespaces/{ns}").status_code == 204


def test_name_clashes(http, store, ns) -> None:
    make_table(http, ns, "t")
    make_view(http, ns, "v")
    with unchanged(store):
        err(http.post(f"{V1}/namespaces/{ns}/views", json=sb.create_view("v", "SELECT 1")),
            409, "AlreadyExistsException", f"View already exists: {ns}.v")
        err(http.post(f"{V1}/namespaces/{ns}/views", json=sb.create_view("t", "SELECT 1")),
            409, "AlreadyExistsException", f"Table with same name already exists: {ns}.t")
        err(http.post(f"{V1}/namespaces/{ns}/tables", json=sb.create_table("v")),
            409, "AlreadyExistsException", f"View with same name already exists: {ns}.v")
        err(http.post(f"{V1}/namespaces/{ns}/tables", json=sb.create_table("t")),
            409, "AlreadyExistsException", f"Table already exists: {ns}.t")
        err(http.post(f"{V1}/namespaces", json={"namespace": [ns]}), 409,
            "AlreadyExistsException", f"Namespace already exists: {ns}")


def test_rename_onto_existing(http, store, ns) -> None:
    make_table(http, ns, "t")
    make_table(http, ns, "t2")
    make_view(http, ns, "v")
    make_view(http, ns, "v2")

    def rename(kind: str, a: str, b: str) -> httpx.Response:
        return http.post(f"{V1}/{kind}/rename", json={
            "source": {"namespace": [ns], "name": a}, "destination": {"namespace": [ns],
                                                                      "name": b}})

    with unchanged(store):
        err(rename("views", "v", "v2"), 409, "AlreadyExistsException",
            f"Cannot rename {ns}.v to {ns}.v2. View already exists")
        err(rename("views", "v", "t"), 409, "AlreadyExistsException",
            f"Cannot rename {ns}.v to {ns}.t. Table already exists")
        err(rename("tables", "t", "t2"), 409, "AlreadyExistsException",
            f"Cannot rename {ns}.t to {ns}.t2. Table already exists")
        err(rename("tables", "t", "v"), 409, "AlreadyExistsException",
            f"Cannot rename {ns}.t to {ns}.v. View already exists")
        err(rename("tables", "nope", "x"), 404, "NoSuchTableException")
        err(rename("views", "t", "x"), 404, "NoSuchViewException")  # a table, not a view
        err(http.post(f"{V1}/views/rename", json={
            "source": {"namespace": [ns], "name": "v"},
            "destination": {"namespace": ["nope_ns"], "name": "v"}}),
            404, "NoSuchNamespaceException")


def test_drop_non_empty_namespace(http, store, ns) -> None:
    make_table(http, ns, "t")
    with unchanged(store):
        err(http.delete(f"{V1}/namespaces/{ns}"), 409, "NamespaceNotEmptyException",
            f"Namespace {ns} is not empty")
    assert http.delete(f"{V1}/namespaces/{ns}/tables/t").status_code == 204
    assert http.delete(f"{V1}/namespaces/{ns}").status_code == 204
    err(http.delete(f"{V1}/namespaces/{ns}"), 404, "NoSuchNamespaceException")


def test_requirements_fail_with_409(http, store, ns) -> None:
    t = make_table(http, ns, "t")["metadata"]
    make_view(http, ns, "v")
    with unchanged(store):
        r = http.post(f"{V1}/namespaces/{ns}/views/v",
                      json=sb.replace_view("00000000-0000-0000-0000-000000000000", "SELECT 9"))
        err(r, 409, "CommitFailedException")
        assert "UUID" in r.json()["error"]["message"]
        r = http.post(f"{V1}/namespaces/{ns}/tables/t", json={
            "requirements": [{"type": "assert-table-uuid",
                              "uuid": "00000000-0000-0000-0000-000000000000"}],
            "updates": [{"action": "set-properties", "updates": {"a": "b"}}]})
        err(r, 409, "CommitFailedException")
        assert t["table-uuid"] in r.json()["error"]["message"]


def test_bad_bodies_are_400(http, store, ns) -> None:
    make_view(http, ns, "v")
    with unchanged(store):
        err(http.post(f"{V1}/namespaces", json={"namespace": "not-a-list"}), 400,
            "BadRequestException")
        err(http.post(f"{V1}/namespaces", content=b"{nope", headers={
            "content-type": "application/json"}), 400, "BadRequestException")
        err(http.post(f"{V1}/namespaces/{ns}/tables", json={"name": "x"}), 400,
            "BadRequestException")
        err(http.post(f"{V1}/namespaces/{ns}/views/v", json={
            "updates": [{"action": "no-such-update"}]}), 400, "BadRequestException")
        err(http.get(f"{V1}/namespaces", params={"pageSize": "0"}), 400, "BadRequestException")
        err(http.post(f"{V1}/namespaces", json={"namespace": ["a", ""]}), 400,
            "BadRequestException")
        err(http.post(f"{V1}/namespaces/{ns}/views",
                      json=sb.create_view("dup", "SELECT 1", dialects=("trino", "Trino"))),
            400, "IllegalArgumentException",
            "Invalid view version: Cannot add multiple queries for dialect trino")
        err(http.post(f"{V1}/namespaces/{ns}/tables",
                      json={**sb.create_table("far"), "location": "file:///elsewhere/far"}),
            400, "BadRequestException")


def test_writes_to_read_only_refs(http, store, ns) -> None:
    head = store.get_reference("main").hash
    store.create_reference(f"tag_{ns}", ref_type=RefType.TAG, source="main")
    with unchanged(store):
        for ref in (f"tag_{ns}", f"main@{head}", "main*2026-01-01T00:00:00Z", "main~1"):
            r = http.post(f"/iceberg/{ref}/v1/namespaces/{ns}/tables",
                          json=sb.create_table("ro"))
            assert r.status_code in (400, 404), (ref, r.text)
            if r.status_code == 400:
                assert ref.split("@")[0].split("*")[0].split("~")[0] in r.json()["error"][
                    "message"], r.text
        err(http.post(f"/iceberg/tag_{ns}/v1/namespaces/{ns}/tables", json=sb.create_table("x")),
            400, "BadRequestException",
            f"Cannot write to reference 'tag_{ns}': it is a tag; writes need a branch name")
    # The guard is real: the same request on the branch does move main.
    before = store.get_reference("main").hash
    assert http.post(f"{V1}/namespaces/{ns}/tables", json=sb.create_table("ro")
                     ).status_code == 200
    assert store.get_reference("main").hash != before


def test_commit_headers_set_message_and_author(http, store, ns) -> None:
    r = http.post(f"{V1}/namespaces/{ns}/views", json=sb.create_view("hv", "SELECT 1"),
                  headers={"Sapwood-Commit-Message": "add the daily view",
                           "Sapwood-Commit-Author": "ana@example.com"})
    assert r.status_code == 200
    c = store.log("main").items[0]
    assert (c.message, c.author) == ("add the daily view", "ana@example.com")
    http.post(f"{V1}/namespaces/{ns}/views", json=sb.create_view("hv2", "SELECT 1"))
    c = store.log("main").items[0]
    assert (c.message, c.author) == (f"create view {ns}.hv2", "anonymous")


def test_write_metadata_path(http, server, store, ns) -> None:
    inside = f"{server.warehouse}/custom_meta_{ns}"
    r = http.post(f"{V1}/namespaces/{ns}/tables", json={
        **sb.create_table("t"), "properties": {"write.metadata.path": inside}})
    assert r.status_code == 200, r.text
    assert r.json()["metadata-location"].startswith(inside + "/00000-")
    with unchanged(store):
        err(http.post(f"{V1}/namespaces/{ns}/views", json=sb.create_view(
            "v", "SELECT 1", properties={"write.metadata.path": "file:///elsewhere/meta"})),
            400, "BadRequestException")
