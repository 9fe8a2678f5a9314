"""The view audit over HTTP (issue 4, acceptance 2)."""

from __future__ import annotations

import time

from tests.api import spark_bodies as sb
from tests.api.test_versioning_http import V2, branch, head, nessie_err


def test_history_across_replacements_rename_and_merge(http, ns) -> None:
    dev = f"dev_{ns}"
    branch(http, dev)
    base = f"/iceberg/{dev}/v1/namespaces/{ns}"

    def as_(author: str) -> dict[str, str]:
        return {"Sapwood-Commit-Author": author}

    r = http.post(f"{base}/views", json=sb.create_view("v", "SELECT 1 AS a"), headers=as_("ana"))
    uuid = r.json()["metadata"]["view-uuid"]
    for sql, who in (("SELECT 1 AS a,\n  2 AS b", "bo"), ("SELECT 3 AS c", "cy")):
        time.sleep(0.01)
        r = http.post(f"{base}/views/v", json=sb.replace_view(uuid, sql), headers=as_(who))
        assert r.status_code == 200, r.text
    r = http.post(f"/iceberg/{dev}/v1/views/rename", headers=as_("dee"), json={
        "source": {"namespace": [ns], "name": "v"},
        "destination": {"namespace": [ns], "name": "w"}})
    assert r.status_code == 204
    r = http.post(f"{V2}/trees/main@{head(http, 'main')}/history/merge",
                  json={"fromRefName": dev})
    assert r.status_code == 200 and r.json()["wasApplied"], r.text

    got = http.get(f"{V2}/trees/main/views/{ns}.w/history")
    assert got.status_code == 200, got.text
    versions = got.json()["versions"]
    assert [v["versionId"] for v in versions] == [1, 2, 3]
    assert [v["commit"]["author"] for v in versions] == ["ana", "bo", "cy"]
    assert [v["representations"]["spark"] for v in versions] == [
        "SELECT 1 AS a", "SELECT 1 AS a,\n  2 AS b", "SELECT 3 AS c"]
    assert [v["key"]["elements"][-1] for v in versions] == ["v", "v", "v"]
    starts = [v["currentFrom"] for v in versions]
    assert starts == sorted(starts) and len(set(starts)) == 3
    assert [v["currentUntil"] for v in versions] == [*starts[1:], None]
    assert versions[1]["commit"]["message"] == f"replace view {ns}.v"
    assert versions[0]["sqlDiff"]["spark"].startswith("--- /dev/null")
    assert "-SELECT 1 AS a\n+SELECT 1 AS a,\n+  2 AS b" in versions[1]["sqlDiff"]["spark"]
    assert "+SELECT 3 AS c" in versions[2]["sqlDiff"]["spark"]

    # since/until keep what was current at some point in between.
    later = http.get(f"{V2}/trees/main/views/{ns}.w/history",
                     params={"since": starts[2]}).json()["versions"]
    assert [v["versionId"] for v in later] == [3]
    earlier = http.get(f"{V2}/trees/main/views/{ns}.w/history",
                       params={"until": starts[0]}).json()["versions"]
    assert [v["versionId"] for v in earlier] == [1]
    # The old name is gone on main; the audit of a missing view is a 404.
    nessie_err(http.get(f"{V2}/trees/main/views/{ns}.v/history"), 404, "CONTENT_NOT_FOUND")


def test_the_audit_is_paged(http, ns) -> None:
    base = f"/iceberg/v1/namespaces/{ns}"
    r = http.post(f"{base}/views", json=sb.create_view("p", "SELECT 0 AS a"))
    uuid = r.json()["metadata"]["view-uuid"]
    for i in range(1, 7):
        r = http.post(f"{base}/views/p", json=sb.replace_view(uuid, f"SELECT {i} AS a"))
        assert r.status_code == 200, r.text
        # Properties alone: the same version carried on, no entry of its own.
        r = http.post(f"{base}/views/p", json={"requirements": [], "updates": [
            {"action": "set-properties", "updates": {"n": str(i)}}]})
        assert r.status_code == 200, r.text
    path = f"{V2}/trees/main/views/{ns}.p/history"
    whole = http.get(path).json()
    assert [v["versionId"] for v in whole["versions"]] == list(range(1, 8))
    assert whole["hasMore"] is False and whole["token"] is None
    pages, token = [], None
    while True:
        got = http.get(path, params={"maxRecords": 3, **({"pageToken": token} if token else {})})
        assert got.status_code == 200, got.text
        pages.append([v["versionId"] for v in got.json()["versions"]])
        token = got.json()["token"]
        if not got.json()["hasMore"]:
            break
    assert pages == [[1, 2, 3], [4, 5, 6], [7]]
    # A page's first version is diffed against the last of the page before.
    second = http.get(path, params={"maxRecords": 3, "pageToken": http.get(
        path, params={"maxRecords": 3}).json()["token"]}).json()["versions"]
    assert second == whole["versions"][3:6]
    assert "-SELECT 2 AS a\n+SELECT 3 AS a" in second[0]["sqlDiff"]["spark"]
    nessie_err(http.get(path, params={"pageToken": "bm90LWEtY29tbWl0"}), 400, "BAD_REQUEST")
