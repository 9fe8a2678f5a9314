"""The versioning API (Nessie v2 shapes) over HTTP against a real server."""

from __future__ import annotations

import httpx

from tests.api import spark_bodies as sb

V2 = "/api/v2"


def head(http: httpx.Client, ref: str) -> str:
    r = http.get(f"{V2}/trees/{ref}")
    assert r.status_code == 200, r.text
    return r.json()["reference"]["hash"]


def branch(http: httpx.Client, name: str, source: str = "main") -> str:
    r = http.post(f"{V2}/trees", params={"name": name, "type": "BRANCH"},
                  json={"type": "BRANCH", "name": source, "hash": head(http, source)})
    assert r.status_code == 200, r.text
    return r.json()["reference"]["hash"]


def nessie_err(r: httpx.Response, status: int, code: str) -> dict:
    assert r.status_code == status, r.text
    body = r.json()
    assert (body["status"], body["errorCode"]) == (status, code), body
    return body


def iceberg(http: httpx.Client, ref: str, method: str, path: str, **kw) -> httpx.Response:
    r = http.request(method, f"/iceberg/{ref}/v1{path}", **kw)
    assert r.status_code in (200, 204), r.text
    return r


def keys_of(diff: dict) -> set[str]:
    return {".".join(d["key"]["elements"]) for d in diff["diffs"]}


def test_config_and_references(http, ns) -> None:
    cfg = http.get(f"{V2}/config").json()
    assert cfg["defaultBranch"] == "main" and cfg["actualApiVersion"] == 2
    branch(http, f"b_{ns}")
    r = http.post(f"{V2}/trees", params={"name": f"t_{ns}", "type": "TAG"},
                  json={"type": "BRANCH", "name": "main", "hash": head(http, "main")})
    assert r.json()["reference"]["type"] == "TAG"
    names = {x["name"] for x in http.get(f"{V2}/trees").json()["references"]}
    assert {"main", f"b_{ns}", f"t_{ns}"} <= names
    nessie_err(http.post(f"{V2}/trees", params={"name": f"b_{ns}"},
                         json={"type": "BRANCH", "name": "main"}),
               409, "REFERENCE_ALREADY_EXISTS")
    nessie_err(http.get(f"{V2}/trees/nope_{ns}"), 404, "REFERENCE_NOT_FOUND")
    # A branch whose name has a slash travels encoded.
    branch(http, f"team/{ns}")
    assert http.get(f"{V2}/trees/team%2F{ns}").json()["reference"]["name"] == f"team/{ns}"


def test_assign_and_delete(http, ns) -> None:
    old = branch(http, f"a_{ns}")
    iceberg(http, "main", "POST", "/namespaces", json={"namespace": [f"{ns}_moved"]})
    new_main = head(http, "main")
    r = http.put(f"{V2}/trees/a_{ns}@{old}", json={"type": "BRANCH", "name": "main",
                                                   "hash": new_main})
    assert r.status_code == 200, r.text
    assert head(http, f"a_{ns}") == new_main
    # A stale expected hash is refused and changes nothing.
    nessie_err(http.put(f"{V2}/trees/a_{ns}@{old}", json={"type": "BRANCH", "hash": old}),
               409, "REFERENCE_CONFLICT")
    assert head(http, f"a_{ns}") == new_main
    nessie_err(http.delete(f"{V2}/trees/a_{ns}@{old}"), 409, "REFERENCE_CONFLICT")
    assert http.delete(f"{V2}/trees/a_{ns}@{new_main}").status_code == 200
    nessie_err(http.get(f"{V2}/trees/a_{ns}"), 404, "REFERENCE_NOT_FOUND")
    r = http.delete(f"{V2}/trees/main@{head(http, 'main')}")
    assert r.status_code == 409 and "main" in r.json()["message"]
    nessie_err(http.put(f"{V2}/trees/main", json={"hash": old}), 400, "BAD_REQUEST")


def test_branch_commit_diff_merge(http, ns) -> None:
    dev = f"dev_{ns}"
    branch(http, dev)
    iceberg(http, dev, "POST", f"/namespaces/{ns}/tables", json=sb.create_table("t1"))
    iceberg(http, dev, "POST", f"/namespaces/{ns}/views", json=sb.create_view("v1", "SELECT 1"))
    diff = http.get(f"{V2}/trees/main/diff/{dev}").json()
    assert keys_of(diff) == {f"{ns}.t1", f"{ns}.v1"}
    assert all(d["from"] is None for d in diff["diffs"])
    # history with operations
    log = http.get(f"{V2}/trees/{dev}/history", params={"fetch": "ALL"}).json()["logEntries"]
    assert log[0]["commitMeta"]["message"] == f"create view {ns}.v1"
    # Each PUT carries the value it put (Nessie's model requires it).
    (op,) = log[0]["operations"]
    assert (op["type"], op["key"]) == ("PUT", {"elements": [ns, "v1"]})
    assert op["content"]["type"] == "ICEBERG_VIEW"
    main_before = head(http, "main")
    r = http.post(f"{V2}/trees/main@{main_before}/history/merge",
                  json={"fromRefName": dev, "fromHash": head(http, dev)})
    assert r.status_code == 200, r.text
    m = r.json()
    assert m["wasApplied"] and m["wasSuccessful"] and m["resultantTargetHash"] != main_before
    assert {".".join(d["key"]["elements"]) for d in m["details"]} == {f"{ns}.t1", f"{ns}.v1"}
    assert keys_of(http.get(f"{V2}/trees/main/diff/{dev}").json()) == set()
    entries = http.get(f"{V2}/trees/main/entries", params={"prefixKey": ns}).json()["entries"]
    assert {".".join(e["name"]["elements"]) for e in entries} == {f"{ns}.t1", f"{ns}.v1"}


def _conflicting_branches(http: httpx.Client, ns: str) -> tuple[str, str, str]:
    """A view and a table changed on both main and a branch since it forked."""
    dev = f"c_{ns}"
    uuid = iceberg(http, "main", "POST", f"/namespaces/{ns}/views",
                   json=sb.create_view("v", "SELECT 0")).json()["metadata"]["view-uuid"]
    iceberg(http, "main", "POST", f"/namespaces/{ns}/tables", json=sb.create_table("t"))
    branch(http, dev)
    for ref, sql in ((dev, "SELECT 'dev'"), ("main", "SELECT 'main'")):
        iceberg(http, ref, "POST", f"/namespaces/{ns}/views/v",
                json=sb.replace_view(uuid, sql))
        iceberg(http, ref, "POST", f"/namespaces/{ns}/tables/t", json={
            "updates": [{"action": "set-properties", "updates": {"side": ref}}]})
    iceberg(http, dev, "POST", f"/namespaces/{ns}/tables", json=sb.create_table("only_dev"))
    return dev, uuid, head(http, "main")


def test_merge_conflicts(http, ns) -> None:
    dev, _, main_head = _conflicting_branches(http, ns)
    url = f"{V2}/trees/main@{main_head}/history/merge"
    body = nessie_err(http.post(url, json={"fromRefName": dev}), 409, "REFERENCE_CONFLICT")
    conflicts = body["errorDetails"]["conflicts"]
    assert {(c["key"], c["conflictType"]) for c in conflicts} == {
        (f"{ns}.v", "VALUE_DIFFERS"), (f"{ns}.t", "VALUE_DIFFERS")}
    assert head(http, "main") == main_head
    # The same as a result body.
    r = http.post(url, json={"fromRefName": dev, "returnConflictAsResult": True})
    assert r.status_code == 200, r.text
    res = r.json()
    assert not res["wasApplied"] and not res["wasSuccessful"]
    bad = {".".join(d["key"]["elements"]): d["conflict"]["conflictType"]
           for d in res["details"] if "conflict" in d}
    assert bad == {f"{ns}.v": "VALUE_DIFFERS", f"{ns}.t": "VALUE_DIFFERS"}
    assert head(http, "main") == main_head
    # Dry run with FORCE on one key and DROP on the other: reported, not written.
    modes = [{"key": {"elements": [ns, "v"]}, "mergeBehavior": "FORCE"},
             {"key": {"elements": [ns, "t"]}, "mergeBehavior": "DROP"}]
    r = http.post(url, json={"fromRefName": dev, "keyMergeModes": modes, "dryRun": True})
    assert r.status_code == 200 and not r.json()["wasApplied"]
    assert head(http, "main") == main_head
    r = http.post(url, json={"fromRefName": dev, "keyMergeModes": modes})
    assert r.status_code == 200, r.text
    assert r.json()["wasApplied"]
    outcome = {".".join(d["key"]["elements"]): d["outcome"] for d in r.json()["details"]}
    assert outcome == {f"{ns}.v": "FORCED", f"{ns}.t": "DROPPED", f"{ns}.only_dev": "APPLIED"}
    view = http.get(f"/iceberg/v1/namespaces/{ns}/views/v").json()["metadata"]
    assert sb.current_sql(view) == "SELECT 'dev'"
    props = http.get(f"/iceberg/v1/namespaces/{ns}/tables/t").json()["metadata"]["properties"]
    assert props["side"] == "main"


def test_transplant_two_commits(http, ns) -> None:
    src = f"s_{ns}"
    branch(http, src)
    iceberg(http, src, "POST", f"/namespaces/{ns}/tables", json=sb.create_table("a"))
    iceberg(http, src, "POST", f"/namespaces/{ns}/tables", json=sb.create_table("b"))
    iceberg(http, src, "POST", f"/namespaces/{ns}/tables", json=sb.create_table("c"))
    log = http.get(f"{V2}/trees/{src}/history").json()["logEntries"]
    a_hash, b_hash = log[2]["commitMeta"]["hash"], log[1]["commitMeta"]["hash"]
    main_head = head(http, "main")
    r = http.post(f"{V2}/trees/main@{main_head}/history/transplant",
                  json={"hashesToTransplant": [a_hash, b_hash], "fromRefName": src})
    assert r.status_code == 200, r.text
    assert r.json()["wasApplied"]
    tables = http.get(f"/iceberg/v1/namespaces/{ns}/tables").json()["identifiers"]
    assert {t["name"] for t in tables} == {"a", "b"}
    messages = [e["commitMeta"]["message"]
                for e in http.get(f"{V2}/trees/main/history",
                                  params={"maxRecords": 2}).json()["logEntries"]]
    assert messages == [f"create table {ns}.b", f"create table {ns}.a"]


def test_commit_contents_and_filters(http, ns) -> None:
    # A value naming a real metadata file (a commit's files are checked).
    iceberg(http, "main", "POST", f"/namespaces/{ns}/tables", json=sb.create_table("src"))
    src = http.get(f"{V2}/trees/main/contents/{ns}.src").json()["content"]
    dev = f"k_{ns}"
    h = branch(http, dev)
    ops = [{"type": "PUT", "key": {"elements": [ns, "x"]},
            "content": {k: v for k, v in src.items() if k != "id"}}]
    r = http.post(f"{V2}/trees/{dev}@{h}/history/commit",
                  json={"commitMeta": {"message": "raw put", "authors": ["ana"]},
                        "operations": ops})
    assert r.status_code == 200, r.text
    cid = r.json()["addedContents"][0]["contentId"]
    one = http.get(f"{V2}/trees/{dev}/contents/{ns}.x").json()
    assert one["content"]["id"] == cid and one["effectiveReference"]["name"] == dev
    many = http.post(f"{V2}/trees/{dev}/contents",
                     json={"requestedKeys": [{"elements": [ns, "x"]},
                                             {"elements": [ns, "nope"]}]}).json()
    assert [c["key"]["elements"] for c in many["contents"]] == [[ns, "x"]]
    assert http.get(f"{V2}/trees/{dev}/contents", params={"key": [f"{ns}.x"]}
                    ).json()["contents"][0]["content"]["id"] == cid
    nessie_err(http.get(f"{V2}/trees/main/contents/{ns}.x"), 404, "CONTENT_NOT_FOUND")
    # The same commit again from the old hash: the key now exists.
    nessie_err(http.post(f"{V2}/trees/{dev}@{h}/history/commit",
                         json={"operations": ops}), 409, "REFERENCE_CONFLICT")
    by_author = http.get(f"{V2}/trees/{dev}/history", params={"author": "ana"}).json()
    assert [e["commitMeta"]["message"] for e in by_author["logEntries"]] == ["raw put"]
    by_key = http.get(f"{V2}/trees/{dev}/history", params={"key": f"{ns}.x"}).json()
    assert len(by_key["logEntries"]) == 1
    # Reads at a pinned spec name the commit they came from.
    pinned = http.get(f"{V2}/trees/{dev}~1/contents/{ns}.x")
    nessie_err(pinned, 404, "CONTENT_NOT_FOUND")
    nessie_err(http.post(f"{V2}/trees/{dev}@{h}/history/commit",
                         json={"operations": [{"type": "PUT", "key": {"elements": ["q"]}}]}),
               400, "BAD_REQUEST")


def test_paging_and_time_filters(http, ns) -> None:
    dev = f"p_{ns}"
    branch(http, dev)
    for i in range(5):
        iceberg(http, dev, "POST", f"/namespaces/{ns}/tables", json=sb.create_table(f"t{i}"))
    log = http.get(f"{V2}/trees/{dev}/history").json()["logEntries"]
    times = [e["commitMeta"]["commitTime"] for e in log]
    seen, token = [], None
    while True:
        page = http.get(f"{V2}/trees/{dev}/history",
                        params={"maxRecords": 2, **({"pageToken": token} if token else {})}).json()
        assert len(page["logEntries"]) <= 2
        seen += [e["commitMeta"]["hash"] for e in page["logEntries"]]
        token = page["token"]
        if not page["hasMore"]:
            break
    assert seen == [e["commitMeta"]["hash"] for e in log]
    window = http.get(f"{V2}/trees/{dev}/history",
                      params={"since": times[3], "until": times[1]}).json()["logEntries"]
    assert [e["commitMeta"]["commitTime"] for e in window] == times[1:4]
    entries = http.get(f"{V2}/trees/{dev}/entries",
                       params={"prefixKey": ns, "content": "true", "maxRecords": 3}).json()
    assert entries["hasMore"] and len(entries["entries"]) == 3
    assert all(e["content"]["type"] == "ICEBERG_TABLE" for e in entries["entries"])
    rest = http.get(f"{V2}/trees/{dev}/entries",
                    params={"prefixKey": ns, "pageToken": entries["token"]}).json()
    assert len(entries["entries"]) + len(rest["entries"]) == 5 and not rest["hasMore"]
    nessie_err(http.get(f"{V2}/trees/{dev}/history", params={"since": "yesterday"}),
               400, "BAD_REQUEST")
