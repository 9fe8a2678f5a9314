"""Content-aware merges over HTTP, with PyIceberg writing and reading: two
branches that both appended to a table merge cleanly (rows of both, time
travel to either side intact, manifests reused); what cannot be combined
stays a conflict that says why; views and namespaces combine by their own
rules; ``contentMerge: false`` keeps Nessie's behaviour."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from pyiceberg.types import IntegerType

from tests.api.test_pyiceberg import SCHEMA, rows, version
from tests.api.test_versioning_http import V2, head
from tests.http import http_client


def merge(http, source: str, into: str = "main", **extra: Any) -> Any:
    return http.post(f"{V2}/trees/{into}@{head(http, into)}/history/merge",
                     json={"fromRefName": source, **extra})


def detail(answer: dict[str, Any], key: str) -> dict[str, Any]:
    return next(d for d in answer["details"] if ".".join(d["key"]["elements"]) == key)


def branches(server, store, ns: str, *names: str) -> list[Any]:
    for n in names:
        store.create_reference(f"{n}_{ns}", source="main")
    return [server.catalog(f"{n}_{ns}") for n in names]


def test_appends_on_both_sides_merge(server, store, http, ns: str) -> None:
    main = server.catalog()
    t = main.create_table(f"{ns}.orders", SCHEMA)
    t.append(rows(3))
    a, b = branches(server, store, ns, "a", "b")
    for i in range(2):
        a.load_table(f"{ns}.orders").append(rows(2, start=100 + 10 * i))
        b.load_table(f"{ns}.orders").append(rows(4, start=200 + 10 * i))
    a_snaps = [s.snapshot_id for s in a.load_table(f"{ns}.orders").snapshots()]
    b_snaps = [s.snapshot_id for s in b.load_table(f"{ns}.orders").snapshots()]

    r = merge(http, f"a_{ns}")
    assert r.status_code == 200 and r.json()["wasApplied"], r.text
    assert detail(r.json(), f"{ns}.orders")["outcome"] == "APPLIED"  # main had not moved
    dry = merge(http, f"b_{ns}", dryRun=True)
    assert dry.status_code == 200, dry.text
    d = detail(dry.json(), f"{ns}.orders")
    assert d["outcome"] == "MERGED" and d["combined"]["rows"] == {"source": 8, "target": 4}
    before = head(http, "main")
    assert head(http, "main") == before  # the dry run wrote nothing
    r = merge(http, f"b_{ns}")
    assert r.status_code == 200 and r.json()["wasApplied"], r.text
    d = detail(r.json(), f"{ns}.orders")
    assert d["outcome"] == "MERGED" and d["combined"]["manifestsReused"] == 2, d

    merged = main.load_table(f"{ns}.orders")
    ids = sorted(merged.scan().to_arrow().column("id").to_pylist())
    assert ids == sorted([0, 1, 2, 100, 101, 110, 111, *range(200, 204), *range(210, 214)])
    assert merged.metadata.current_snapshot().summary.operation.value == "append"
    snaps = {s.snapshot_id for s in merged.snapshots()}
    assert set(a_snaps) | set(b_snaps) <= snaps
    # Time travel to either side's snapshots still reads.
    assert merged.scan(snapshot_id=b_snaps[-1]).to_arrow().num_rows == 3 + 8
    assert merged.scan(snapshot_id=a_snaps[-1]).to_arrow().num_rows == 3 + 4


def test_manifests_the_engine_merged_are_rewritten(server, store, http, ns: str) -> None:
    """Merge-append folds manifests together, old files as EXISTING: only the
    files the source added go into a new manifest."""
    main = server.catalog()
    props = {"commit.manifest-merge.enabled": "true", "commit.manifest.min-count-to-merge": "2"}
    main.create_table(f"{ns}.m", SCHEMA, properties=props).append(rows(2))
    a, b = branches(server, store, ns, "a", "b")
    for i in range(3):
        a.load_table(f"{ns}.m").append(rows(1, start=10 + i))
    b.load_table(f"{ns}.m").append(rows(1, start=20))
    manifests = a.load_table(f"{ns}.m").current_snapshot().manifests(
        a.load_table(f"{ns}.m").io)
    assert any(m.existing_files_count for m in manifests)  # the engine did merge them
    assert merge(http, f"b_{ns}").json()["wasApplied"]
    r = merge(http, f"a_{ns}")
    assert r.status_code == 200 and r.json()["wasApplied"], r.text
    d = detail(r.json(), f"{ns}.m")
    assert d["outcome"] == "MERGED" and d["combined"]["manifestsRewritten"] >= 1, d
    assert d["combined"]["files"]["source"] == 3
    ids = sorted(main.load_table(f"{ns}.m").scan().to_arrow().column("id").to_pylist())
    assert ids == [0, 1, 10, 11, 12, 20]


def test_one_side_adds_a_column(server, store, http, ns: str) -> None:
    main = server.catalog()
    main.create_table(f"{ns}.t", SCHEMA).append(rows(2))
    a, b = branches(server, store, ns, "a", "b")
    ta = a.load_table(f"{ns}.t")
    with ta.update_schema() as u:
        u.add_column("qty", IntegerType())
    ta = a.load_table(f"{ns}.t")
    ta.append(pa.table({"id": pa.array([7], pa.int64()), "name": ["x"],
                        "qty": pa.array([5], pa.int32())}))
    b.load_table(f"{ns}.t").append(rows(1, start=50))
    assert merge(http, f"b_{ns}").json()["wasApplied"]
    r = merge(http, f"a_{ns}")
    assert r.status_code == 200 and r.json()["wasApplied"], r.text
    assert detail(r.json(), f"{ns}.t")["combined"]["taken"] == {"source": ["schema"]}
    got = main.load_table(f"{ns}.t").scan().to_arrow().sort_by("id").to_pylist()
    assert [(g["id"], g["qty"]) for g in got] == [(0, None), (1, None), (7, 5), (50, None)]


def test_what_cannot_be_combined_stays_a_conflict(server, store, http, ns: str) -> None:
    main = server.catalog()
    main.create_table(f"{ns}.t", SCHEMA).append(rows(4))
    a, b = branches(server, store, ns, "a", "b")
    a.load_table(f"{ns}.t").delete("id = 1")
    b.load_table(f"{ns}.t").append(rows(1, start=9))
    assert merge(http, f"b_{ns}").json()["wasApplied"]
    before = head(http, "main")
    r = merge(http, f"a_{ns}")
    assert r.status_code == 409, r.text
    assert "removed or rewrote rows" in r.text and "source" in r.text, r.text
    assert head(http, "main") == before
    r = merge(http, f"a_{ns}", returnConflictAsResult=True)
    d = detail(r.json(), f"{ns}.t")
    assert d["outcome"] == "CONFLICT" and "delete" in d["conflict"]["message"]


def test_a_refused_merge_leaves_no_files(server, store, http, ns: str) -> None:
    """One key combinable, another not: the merge is refused and the files the
    combination wrote are removed again."""
    import pathlib

    main = server.catalog()
    main.create_table(f"{ns}.ok", SCHEMA).append(rows(1))
    main.create_table(f"{ns}.bad", SCHEMA).append(rows(3))
    a, b = branches(server, store, ns, "a", "b")
    a.load_table(f"{ns}.ok").append(rows(1, start=5))
    a.load_table(f"{ns}.bad").delete("id = 1")
    b.load_table(f"{ns}.ok").append(rows(1, start=6))
    b.load_table(f"{ns}.bad").append(rows(1, start=7))
    assert merge(http, f"b_{ns}").json()["wasApplied"]
    root = pathlib.Path(server.warehouse.removeprefix("file://"))
    before = {p for p in root.rglob("*") if p.is_file()}
    r = merge(http, f"a_{ns}")
    assert r.status_code == 409, r.text
    assert {p for p in root.rglob("*") if p.is_file()} == before


def test_both_sides_adding_a_column_conflict(server, store, http, ns: str) -> None:
    main = server.catalog()
    main.create_table(f"{ns}.t", SCHEMA).append(rows(1))
    a, b = branches(server, store, ns, "a", "b")
    for cat, col in ((a, "x"), (b, "y")):
        with cat.load_table(f"{ns}.t").update_schema() as u:
            u.add_column(col, IntegerType())
    assert merge(http, f"b_{ns}").json()["wasApplied"]
    r = merge(http, f"a_{ns}", returnConflictAsResult=True)
    assert "both sides changed the schema differently" in \
        detail(r.json(), f"{ns}.t")["conflict"]["message"]


def test_content_merge_can_be_turned_off(server, store, http, ns: str) -> None:
    main = server.catalog()
    main.create_table(f"{ns}.t", SCHEMA).append(rows(1))
    a, b = branches(server, store, ns, "a", "b")
    a.load_table(f"{ns}.t").append(rows(1, start=5))
    b.load_table(f"{ns}.t").append(rows(1, start=6))
    assert merge(http, f"a_{ns}").json()["wasApplied"]
    r = merge(http, f"b_{ns}", contentMerge=False, returnConflictAsResult=True)
    d = detail(r.json(), f"{ns}.t")
    assert d["outcome"] == "CONFLICT" and d["conflict"]["message"].endswith("on both sides")


def test_views_and_namespaces_combine(server, store, http, ns: str) -> None:
    main = server.catalog()
    main.create_view(f"{ns}.v", SCHEMA, version("SELECT 1 AS id, 'a' AS name"))
    main.create_view(f"{ns}.w", SCHEMA, version("SELECT 1 AS id, 'a' AS name"))
    main.create_view(f"{ns}.same", SCHEMA, version("SELECT 1 AS id, 'a' AS name"))
    branches(server, store, ns, "a", "b")
    base = f"/iceberg/a_{ns}/v1/namespaces/{ns}"
    bbase = f"/iceberg/b_{ns}/v1/namespaces/{ns}"
    # v: properties on a, a new version on b → both kept.
    assert http.post(f"{base}/views/v", json={"requirements": [], "updates": [
        {"action": "set-properties", "updates": {"owner": "ana"}}]}).status_code == 200
    uuid = http.get(f"{bbase}/views/v").json()["metadata"]["view-uuid"]
    from tests.api import spark_bodies as sb

    assert http.post(f"{bbase}/views/v", json=sb.replace_view(
        uuid, "SELECT 2 AS id, 'b' AS name", properties={"k": "b"})).status_code == 200
    # w: different SQL on both sides → a conflict carrying both texts.
    for cat_base, sql in ((base, "SELECT 3 AS id, 'x' AS name"),
                          (bbase, "SELECT 4 AS id, 'y' AS name")):
        wid = http.get(f"{cat_base}/views/w").json()["metadata"]["view-uuid"]
        assert http.post(f"{cat_base}/views/w", json=sb.replace_view(wid, sql)).status_code == 200
    # same: both sides replaced it with the same SQL → one version.
    for cat_base in (base, bbase):
        sid = http.get(f"{cat_base}/views/same").json()["metadata"]["view-uuid"]
        assert http.post(f"{cat_base}/views/same", json=sb.replace_view(
            sid, "SELECT 5 AS id, 'z' AS name")).status_code == 200
    # namespace properties, key by key.
    for path, props in ((f"/iceberg/a_{ns}/v1/namespaces/{ns}/properties", {"team": "red"}),
                        (f"/iceberg/b_{ns}/v1/namespaces/{ns}/properties", {"tier": "gold"})):
        assert http.post(path, json={"removals": [], "updates": props}).status_code == 200
    assert merge(http, f"a_{ns}").json()["wasApplied"]
    r = merge(http, f"b_{ns}", returnConflictAsResult=True).json()
    assert detail(r, f"{ns}.v")["outcome"] == "MERGED"
    assert detail(r, f"{ns}.same")["outcome"] == "MERGED"
    assert detail(r, ns)["outcome"] == "MERGED"
    w = detail(r, f"{ns}.w")
    assert w["outcome"] == "CONFLICT"
    assert "SELECT 3 AS id" in w["conflict"]["message"]
    assert "SELECT 4 AS id" in w["conflict"]["message"]
    assert "\n" not in w["conflict"]["message"]  # one line; the diff is in the details
    assert w["conflictDetails"]["sql"] == {"base": {"spark": "SELECT 1 AS id, 'a' AS name"},
                                           "target": {"spark": "SELECT 3 AS id, 'x' AS name"},
                                           "source": {"spark": "SELECT 4 AS id, 'y' AS name"}}
    diff = w["conflictDetails"]["sqlDiff"]["spark"]  # per dialect (test_view_merge_dialects)
    assert "-SELECT 3 AS id" in diff and "+SELECT 4 AS id" in diff
    # With w left out, the merge lands: v has b's version and a's property.
    r = merge(http, f"b_{ns}", keyMergeModes=[{"key": {"elements": [ns, "w"]},
                                               "mergeBehavior": "DROP"}])
    assert r.status_code == 200 and r.json()["wasApplied"], r.text
    v = http.get(f"/iceberg/v1/namespaces/{ns}/views/v").json()["metadata"]
    current = next(x for x in v["versions"] if x["version-id"] == v["current-version-id"])
    assert current["representations"][0]["sql"] == "SELECT 2 AS id, 'b' AS name"
    assert v["properties"]["owner"] == "ana" and v["properties"]["k"] == "b"
    props = http.get(f"/iceberg/v1/namespaces/{ns}").json()["properties"]
    assert props["team"] == "red" and props["tier"] == "gold"


def test_transplant_uses_the_same_rules(server, store, http, ns: str) -> None:
    main = server.catalog()
    main.create_table(f"{ns}.t", SCHEMA).append(rows(1))
    (a,) = branches(server, store, ns, "a")
    a.load_table(f"{ns}.t").append(rows(2, start=10))
    picked = head(http, f"a_{ns}")
    a.load_table(f"{ns}.t").append(rows(1, start=30))  # not transplanted
    main.load_table(f"{ns}.t").append(rows(1, start=20))
    r = http.post(f"{V2}/trees/main@{head(http, 'main')}/history/transplant",
                  json={"hashesToTransplant": [picked]})
    assert r.status_code == 200 and r.json()["wasApplied"], r.text
    assert detail(r.json(), f"{ns}.t")["outcome"] == "MERGED"
    ids = sorted(main.load_table(f"{ns}.t").scan().to_arrow().column("id").to_pylist())
    assert ids == [0, 10, 11, 20]


def test_a_merge_that_gives_up_says_why_and_whether_to_retry(server, store, http,
                                                              ns: str) -> None:
    """A target that keeps moving (a writer changing the table's properties
    as fast as it can) while branches that only appended merge into it:
    every answer lands, or is a 409 whose every conflict says the merge was
    abandoned and is marked retryable. A key dropped and created again on
    one side cannot be merged: a 409 that says why, not retryable."""
    import threading

    main = server.catalog()
    main.create_table(f"{ns}.t", SCHEMA).append(rows(2))
    names = [f"m{i}_{ns}" for i in range(8)]
    for name in names:
        store.create_reference(name, source="main")
        server.catalog(name).load_table(f"{ns}.t").append(rows(1, start=100))
    stop = threading.Event()
    uuid = http.get(f"/iceberg/v1/namespaces/{ns}/tables/t").json()["metadata"]["table-uuid"]

    def move() -> None:
        with http_client(base_url=server.base, timeout=30) as mover:
            i = 0
            while not stop.is_set():
                i += 1
                mover.post(f"/iceberg/v1/namespaces/{ns}/tables/t", json={
                    "requirements": [{"type": "assert-table-uuid", "uuid": uuid}],
                    "updates": [{"action": "set-properties", "updates": {"n": str(i)}}]})

    mover = threading.Thread(target=move)
    mover.start()
    outcomes = []
    try:
        for name in names:
            r = merge(http, name)
            if r.status_code == 200:
                assert r.json()["wasApplied"] and not r.json()["retryable"], r.text
                outcomes.append("applied")
                continue
            assert r.status_code == 409, r.text
            body = r.json()
            conflicts = body["errorDetails"]["conflicts"]
            assert conflicts and body["errorDetails"]["retryable"] is True, r.text
            assert all(c["retryable"] and c["key"] == f"{ns}.t" and "abandoned" in c["message"]
                       for c in conflicts), r.text
            outcomes.append("abandoned")
    finally:
        stop.set()
        mover.join()
    # Whether any landed while the writer ran is the scheduler's business;
    # what the answer promises is not: an abandoned merge sent again once
    # the target holds still lands.
    for name, outcome in zip(names, outcomes, strict=True):
        if outcome == "abandoned":
            r = merge(http, name)
            assert r.status_code == 200 and r.json()["wasApplied"], r.text

    # Different objects under one key: never combined, and sending it again
    # will not help.
    side = branches(server, store, ns, "recreated")[0]
    side.drop_table(f"{ns}.t")
    side.create_table(f"{ns}.t", SCHEMA).append(rows(1))
    main.load_table(f"{ns}.t").append(rows(1, start=50))
    r = merge(http, f"recreated_{ns}", returnConflictAsResult=True)
    assert r.status_code == 200 and not r.json()["wasApplied"], r.text
    assert r.json()["retryable"] is False
    d = detail(r.json(), f"{ns}.t")
    assert d["conflict"]["retryable"] is False
    assert "dropped and re-created" in d["conflict"]["message"], d
