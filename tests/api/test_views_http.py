"""View metadata rules over HTTP: version reuse and renumbering, history
expiry, the drop-dialect check, server-side retry, time travel by version-log
(acceptance 3) and per-identifier refs."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

from tests.api import spark_bodies as sb
from tests.api.test_rest_http import V1, err, make_view
from tests.http import http_client


def replace(http, ns: str, name: str, sql: str, uuid: str, **kw):  # type: ignore[no-untyped-def]
    r = http.post(f"{V1}/namespaces/{ns}/views/{name}", json=sb.replace_view(uuid, sql, **kw))
    assert r.status_code == 200, r.text
    return r.json()["metadata"]


def instant() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def test_identical_version_is_reused(http, ns) -> None:
    uuid = make_view(http, ns, "v", "SELECT 1")["metadata"]["view-uuid"]
    replace(http, ns, "v", "SELECT 2", uuid)
    back = replace(http, ns, "v", "SELECT 1", uuid, properties={})
    # SELECT 1 again: same summary/representations/schema/namespace as version 1?
    # The replace's summary equals the create's, so version 1 is reused (rollback).
    assert back["current-version-id"] == 1
    assert [v["version-id"] for v in back["versions"]] == [1, 2]
    assert [e["version-id"] for e in back["version-log"]] == [1, 2, 1]


def test_history_keeps_num_entries_versions(http, ns) -> None:
    uuid = make_view(http, ns, "v", "SELECT 0",
                     properties={"version.history.num-entries": "2"})["metadata"]["view-uuid"]
    for i in range(1, 4):
        meta = replace(http, ns, "v", f"SELECT {i}", uuid,
                       properties={"version.history.num-entries": "2"})
    assert [v["version-id"] for v in meta["versions"]] == [3, 4]
    assert meta["current-version-id"] == 4 and sb.current_sql(meta) == "SELECT 3"
    assert {e["version-id"] for e in meta["version-log"]} <= {3, 4}


def test_dropping_a_dialect_needs_the_property(http, store, ns) -> None:
    uuid = make_view(http, ns, "v", "SELECT 1", dialects=("spark", "trino"))[
        "metadata"]["view-uuid"]
    before = store.get_reference("main").hash
    r = http.post(f"{V1}/namespaces/{ns}/views/v", json=sb.replace_view(uuid, "SELECT 2"))
    err(r, 400, "IllegalArgumentException")
    assert "replace.drop-dialect.allowed" in r.json()["error"]["message"]
    assert "trino" in r.json()["error"]["message"]
    assert store.get_reference("main").hash == before
    meta = replace(http, ns, "v", "SELECT 2", uuid,
                   properties={"replace.drop-dialect.allowed": "true"})
    assert sb.current_sql(meta) == "SELECT 2"


def test_replace_onto_newer_metadata_renumbers(http, ns) -> None:
    """Client A and B both load version 1; B replaces first; A's replace still
    holds its requirement, so it lands on B's metadata as version 3."""
    uuid = make_view(http, ns, "v", "SELECT 1")["metadata"]["view-uuid"]
    b = replace(http, ns, "v", "SELECT from_b", uuid)
    assert b["current-version-id"] == 2
    body = sb.replace_view(uuid, "SELECT from_a")
    body["updates"][2]["view-version"]["version-id"] = 2  # what A believed the next id was
    body["updates"][3]["view-version-id"] = 2
    r = http.post(f"{V1}/namespaces/{ns}/views/v", json=body)
    assert r.status_code == 200, r.text
    a = r.json()["metadata"]
    assert a["current-version-id"] == 3 and sb.current_sql(a) == "SELECT from_a"
    assert [v["version-id"] for v in a["versions"]] == [1, 2, 3]


def test_view_at_instants_between_replacements(http, server, ns) -> None:
    """Acceptance 3: replace three times; at each gap the SQL current then."""
    uuid = make_view(http, ns, "v", "SELECT 'v1'")["metadata"]["view-uuid"]
    gaps = []
    for sql in ("SELECT 'v2'", "SELECT 'v3'", "SELECT 'v4'"):
        time.sleep(0.02)
        gaps.append(instant())
        time.sleep(0.02)
        replace(http, ns, "v", sql, uuid)
    expected = ["SELECT 'v1'", "SELECT 'v2'", "SELECT 'v3'"]
    for at, sql in zip(gaps, expected, strict=True):
        for path in (f"/iceberg/main*{at}/v1/namespaces/{ns}/views/v",
                     f"{V1}/namespaces/{ns}/views/v@main%23{at}"):
            r = http.get(path)
            assert r.status_code == 200, (path, r.text)
            assert sb.current_sql(r.json()["metadata"]) == sql, path
    # PyIceberg at a pinned instant sees the same.
    view = server.catalog(f"main*{gaps[1]}").load_view(f"{ns}.v")
    cur = next(v for v in view.metadata.versions
               if v.version_id == view.metadata.current_version_id)
    assert cur.representations[0].root.sql == "SELECT 'v2'"
    assert sb.current_sql(http.get(f"{V1}/namespaces/{ns}/views/v").json()["metadata"]) \
        == "SELECT 'v4'"


def test_per_identifier_refs(http, store, ns) -> None:
    make_view(http, ns, "v", "SELECT 'main'")
    store.create_reference(f"dev_{ns}", source="main")
    uuid = http.get(f"{V1}/namespaces/{ns}/views/v").json()["metadata"]["view-uuid"]
    r = http.post(f"/iceberg/dev_{ns}/v1/namespaces/{ns}/views/v",
                  json=sb.replace_view(uuid, "SELECT 'dev'"))
    assert r.status_code == 200
    main_head = store.get_reference("main").hash
    assert sb.current_sql(http.get(f"{V1}/namespaces/{ns}/views/v").json()["metadata"]) \
        == "SELECT 'main'"
    assert sb.current_sql(http.get(f"{V1}/namespaces/{ns}/views/v@dev_{ns}").json()[
        "metadata"]) == "SELECT 'dev'"
    assert sb.current_sql(http.get(
        f"{V1}/namespaces/{ns}/views/v@dev_{ns}%23{main_head[:12]}").json()["metadata"]) \
        == "SELECT 'main'"
    err(http.get(f"{V1}/namespaces/{ns}/views/v@nope"), 404, "NoSuchReferenceException")
    err(http.get(f"{V1}/namespaces/{ns}/views/@dev"), 400, "BadRequestException")
    # A pinned per-identifier ref is read-only; a branch one is written.
    err(http.post(f"{V1}/namespaces/{ns}/views/v@main%23{main_head}",
                  json=sb.replace_view(uuid, "SELECT 'x'")), 400, "BadRequestException")


def outside_copy(made: dict, name: str) -> str:  # type: ignore[type-arg]
    """The metadata of ``made`` as another catalog would have written it for
    a table or view of its own: another location, another uuid."""
    import json
    import uuid
    from pathlib import Path
    from urllib.parse import urlparse

    doc = dict(made["metadata"])
    doc["location"] = doc["location"].rsplit("/", 1)[0] + f"/{name}_{uuid.uuid4().hex}"
    doc["table-uuid" if "table-uuid" in doc else "view-uuid"] = str(uuid.uuid4())
    path = Path(urlparse(doc["location"]).path) / "metadata" / "00000-ext.metadata.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(doc))
    return path.as_uri()


def test_register_view_and_table(http, ns) -> None:
    made = make_view(http, ns, "v", "SELECT 'reg'")
    # Only views and tables from outside this catalog are adopted.
    r = http.post(f"{V1}/namespaces/{ns}/register-view",
                  json={"name": "v_again", "metadata-location": made["metadata-location"]})
    assert r.status_code == 400 and "overlaps the location" in r.text, r.text
    r = http.post(f"{V1}/namespaces/{ns}/register-view",
                  json={"name": "v_again", "metadata-location": outside_copy(made, "v_ext")})
    assert r.status_code == 200, r.text
    assert sb.current_sql(http.get(f"{V1}/namespaces/{ns}/views/v_again").json()["metadata"]) \
        == "SELECT 'reg'"
    t = http.post(f"{V1}/namespaces/{ns}/tables", json=sb.create_table("t")).json()
    r = http.post(f"{V1}/namespaces/{ns}/register",
                  json={"name": "t_again", "metadata-location": t["metadata-location"]})
    assert r.status_code == 400 and "overlaps the location" in r.text, r.text
    r = http.post(f"{V1}/namespaces/{ns}/register",
                  json={"name": "t_again", "metadata-location": outside_copy(t, "t_ext")})
    assert r.status_code == 200, r.text
    err(http.post(f"{V1}/namespaces/{ns}/register",
                  json={"name": "t_again", "metadata-location": outside_copy(t, "t_other")}),
        409, "AlreadyExistsException")
    err(http.post(f"{V1}/namespaces/{ns}/register",
                  json={"name": "gone", "metadata-location": t["metadata-location"] + ".x"}),
        400, "BadRequestException")


def test_staged_create_then_commit(http, store, ns) -> None:
    before = store.get_reference("main").hash
    staged = http.post(f"{V1}/namespaces/{ns}/tables",
                       json={**sb.create_table("st"), "stage-create": True})
    assert staged.status_code == 200, staged.text
    assert staged.json()["metadata-location"] is None
    assert store.get_reference("main").hash == before  # nothing written yet
    meta = staged.json()["metadata"]
    r = http.post(f"{V1}/namespaces/{ns}/tables/st", json={
        "requirements": [{"type": "assert-create"}],
        "updates": [
            {"action": "assign-uuid", "uuid": meta["table-uuid"]},
            {"action": "upgrade-format-version", "format-version": 2},
            {"action": "add-schema", "schema": meta["schemas"][0]},
            {"action": "set-current-schema", "schema-id": -1},
            {"action": "add-spec", "spec": {"spec-id": 0, "fields": []}},
            {"action": "set-default-spec", "spec-id": -1},
            {"action": "add-sort-order", "sort-order": {"order-id": 0, "fields": []}},
            {"action": "set-default-sort-order", "sort-order-id": -1},
            {"action": "set-location", "location": meta["location"]},
            {"action": "set-properties", "updates": {"created-by": "ctas"}}]})
    assert r.status_code == 200, r.text
    loaded = http.get(f"{V1}/namespaces/{ns}/tables/st").json()["metadata"]
    assert loaded["table-uuid"] == meta["table-uuid"]
    assert loaded["properties"]["created-by"] == "ctas"


def test_transaction_is_one_commit(http, store, ns) -> None:
    a = http.post(f"{V1}/namespaces/{ns}/tables", json=sb.create_table("a")).json()["metadata"]
    b = http.post(f"{V1}/namespaces/{ns}/tables", json=sb.create_table("b")).json()["metadata"]

    def change(name: str, uuid: str, value: str) -> dict:
        return {"identifier": {"namespace": [ns], "name": name},
                "requirements": [{"type": "assert-table-uuid", "uuid": uuid}],
                "updates": [{"action": "set-properties", "updates": {"k": value}}]}

    before = store.get_reference("main").hash
    r = http.post(f"{V1}/transactions/commit",
                  json={"table-changes": [change("a", a["table-uuid"], "1"),
                                          change("b", b["table-uuid"], "1")]})
    assert r.status_code == 204, r.text
    log = store.log("main").items
    assert log[0].parent == before  # exactly one new commit for both tables
    assert {str(op.key) for op in log[0].operations} == {f"{ns}.a", f"{ns}.b"}
    # One failing requirement: neither table changes.
    head = store.get_reference("main").hash
    r = http.post(f"{V1}/transactions/commit",
                  json={"table-changes": [change("a", a["table-uuid"], "2"),
                                          change("b", a["table-uuid"], "2")]})
    err(r, 409, "CommitFailedException")
    assert store.get_reference("main").hash == head
    for t in ("a", "b"):
        props = http.get(f"{V1}/namespaces/{ns}/tables/{t}").json()["metadata"]["properties"]
        assert props["k"] == "1"


def test_concurrent_replacements_all_land(http, server, ns) -> None:
    """Writers racing on one view: each replace is re-planned onto the newest
    metadata instead of failing, so every one lands as its own version."""
    uuid = make_view(http, ns, "v", "SELECT 0", properties={
        "version.history.num-entries": "100"})["metadata"]["view-uuid"]

    def writer(w: int) -> list[int]:
        codes = []
        with http_client(base_url=server.base, timeout=60) as c:
            for i in range(5):
                body = sb.replace_view(uuid, f"SELECT {1000 + w * 100 + i}",
                                       properties={"version.history.num-entries": "100"})
                r = c.post(f"{V1}/namespaces/{ns}/views/v", json=body)
                codes.append(r.status_code if r.status_code == 200 else r.text)  # type: ignore[arg-type]
        return codes

    with ThreadPoolExecutor(4) as pool:
        codes = [c for cs in pool.map(writer, range(4)) for c in cs]
    assert codes == [200] * 20
    meta = http.get(f"{V1}/namespaces/{ns}/views/v").json()["metadata"]
    sqls = {v["representations"][0]["sql"] for v in meta["versions"]}
    assert sqls == {"SELECT 0"} | {f"SELECT {1000 + w * 100 + i}"
                                   for w in range(4) for i in range(5)}
    assert len(meta["version-log"]) == 21
    assert sorted(v["version-id"] for v in meta["versions"]) == list(range(1, 22)), meta["versions"]


def test_create_with_a_branch_in_the_name(http, store, ns) -> None:
    """``CREATE VIEW ns.`v@branch``` from a main session writes to that branch."""
    store.create_reference(f"etl_{ns}", source="main")
    r = http.post(f"{V1}/namespaces/{ns}/views",
                  json=sb.create_view(f"v@etl_{ns}", "SELECT 'etl'"))
    assert r.status_code == 200, r.text
    assert http.get(f"{V1}/namespaces/{ns}/views/v").status_code == 404
    got = http.get(f"/iceberg/etl_{ns}/v1/namespaces/{ns}/views/v")
    assert got.status_code == 200
    assert f"/{ns}/v_" in got.json()["metadata"]["location"]  # named without the ref
    head = store.get_reference("main").hash
    err(http.post(f"{V1}/namespaces/{ns}/tables", json=sb.create_table(f"t@main#{head}")),
        400, "BadRequestException")
