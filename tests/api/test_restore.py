"""Undo with an audit trail over HTTP, SQLite and PostgreSQL: a view restored
as it was at an instant gets a new version naming its origin; a table
restored keeps the snapshots in between; a dropped view comes back under its
old content id; a merge reverted, with a later change a conflict until
forced; strict views refuse a revert that would break them; dry runs write
nothing."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from tests.api import spark_bodies as sb
from tests.api.test_pyiceberg import SCHEMA, rows
from tests.api.test_versioning_http import V2, head


def restore(http: httpx.Client, keys: list[str], source: str, branch: str = "main",
            **extra: Any) -> httpx.Response:
    return http.post(f"{V2}/trees/{branch}@{head(http, branch)}/history/restore", json={
        "source": source, "keys": [{"elements": k.split(".")} for k in keys], **extra})


def revert(http: httpx.Client, commits: list[str], branch: str = "main",
           **extra: Any) -> httpx.Response:
    return http.post(f"{V2}/trees/{branch}@{head(http, branch)}/history/revert",
                     json={"commits": commits, **extra})


def instant() -> str:
    time.sleep(0.02)
    now = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    time.sleep(0.02)
    return now


def view_sql(http: httpx.Client, ns: str, name: str, ref: str = "") -> str:
    prefix = f"/iceberg/{ref}/v1" if ref else "/iceberg/v1"
    r = http.get(f"{prefix}/namespaces/{ns}/views/{name}")
    assert r.status_code == 200, r.text
    return sb.current_sql(r.json()["metadata"])


def files_under(server: Any) -> set[Path]:
    root = Path(server.warehouse.removeprefix("file://"))
    return {p for p in root.rglob("*") if p.is_file()}


def test_a_view_restored_to_an_instant_gets_a_new_version(server, http, ns: str) -> None:
    server.catalog().create_table(f"{ns}.base", SCHEMA)
    sqls = [f"SELECT id FROM {ns}.base WHERE id > {i}" for i in range(4)]
    made = http.post(f"/iceberg/v1/namespaces/{ns}/views", json=sb.create_view("v", sqls[0]))
    assert made.status_code == 200, made.text
    uuid = made.json()["metadata"]["view-uuid"]
    between = instant()
    for sql in sqls[1:]:
        r = http.post(f"/iceberg/v1/namespaces/{ns}/views/v", json=sb.replace_view(uuid, sql))
        assert r.status_code == 200, r.text
    before_restore = instant()
    at = head(http, "main")
    seen = files_under(server)

    dry = restore(http, [f"{ns}.v"], f"main*{between}", dryRun=True)
    assert dry.status_code == 200, dry.text
    (k,) = dry.json()["keys"]
    assert dry.json()["hash"] is None and dry.json()["dryRun"]
    assert k["action"] == "restored" and k["sourceVersionId"] == 1 and k["versionId"] == 5
    assert head(http, "main") == at and files_under(server) == seen  # wrote nothing

    done = restore(http, [f"{ns}.v"], f"main*{between}")
    assert done.status_code == 200, done.text
    assert done.json()["hash"] == head(http, "main") != at
    assert view_sql(http, ns, "v") == sqls[0]
    audit = http.get(f"{V2}/trees/main/views/{ns}.v/history").json()["versions"]
    assert [v["versionId"] for v in audit] == [1, 2, 3, 4, 5]
    assert audit[-1]["representations"]["spark"] == sqls[0]
    assert audit[-1]["restoredFrom"] == {"ref": f"main*{between}", "commit": k["source"]["hash"],
                                         "versionId": 1}
    assert all(v["restoredFrom"] is None for v in audit[:-1])
    assert f"from main*{between}" in audit[-1]["commit"]["message"]
    # The log records where it came from; earlier instants read as before.
    (entry,) = http.get(f"{V2}/trees/main/history", params={"maxRecords": 1}).json()[
        "logEntries"]
    assert entry["commitMeta"]["allProperties"]["sapwood.restore.source"] == [
        f"main*{between}"]
    assert view_sql(http, ns, "v", f"main*{between}") == sqls[0]
    assert view_sql(http, ns, "v", f"main*{before_restore}") == sqls[3]
    # Restoring what is already there changes nothing.
    same = restore(http, [f"{ns}.v"], "main")
    assert same.status_code == 200 and same.json()["keys"][0]["action"] == "unchanged"
    assert same.json()["hash"] is None


def test_a_table_restored_keeps_the_snapshots_in_between(server, http, ns: str) -> None:
    t = server.catalog().create_table(f"{ns}.t", SCHEMA)
    t.append(rows(2))
    after_first = instant()
    t.append(rows(3, start=10))
    t.append(rows(4, start=20))
    later = [s.snapshot_id for s in t.refresh().snapshots()]
    r = restore(http, [f"{ns}.t"], f"main*{after_first}")
    assert r.status_code == 200, r.text
    assert r.json()["keys"][0]["sourceSnapshotId"] == later[0]
    t = server.catalog().load_table(f"{ns}.t")
    assert t.scan().to_arrow().num_rows == 2
    assert t.current_snapshot().snapshot_id == later[0]
    assert {s.snapshot_id for s in t.snapshots()} == set(later)  # kept for time travel
    assert [t.scan(snapshot_id=s).to_arrow().num_rows for s in later] == [2, 5, 9]
    # And appending after the restore goes on from the restored snapshot.
    t.append(rows(1, start=99))
    assert server.catalog().load_table(f"{ns}.t").scan().to_arrow().num_rows == 3


def test_a_dropped_view_comes_back_under_its_old_id(server, http, ns: str) -> None:
    server.catalog().create_table(f"{ns}.base", SCHEMA)
    assert http.post(f"/iceberg/v1/namespaces/{ns}/views", json=sb.create_view(
        "v", f"SELECT id, name FROM {ns}.base")).status_code == 200
    assert http.post(f"/iceberg/v1/namespaces/{ns}/views", json=sb.create_view(
        "w", f"SELECT id FROM {ns}.v")).status_code == 200
    content_id = http.get(f"{V2}/trees/main/contents/{ns}.v").json()["content"]["id"]
    before_drop = instant()
    assert http.delete(f"/iceberg/v1/namespaces/{ns}/views/v").status_code == 204

    def status(key: str) -> str:
        views = http.get(f"{V2}/trees/main/views").json()["views"]
        return next(v["status"] for v in views if ".".join(v["key"]) == key)

    assert status(f"{ns}.w") == "invalid"
    r = restore(http, [f"{ns}.v"], f"main*{before_drop}")
    assert r.status_code == 200, r.text
    assert r.json()["keys"][0]["action"] == "revived"
    assert http.get(f"{V2}/trees/main/contents/{ns}.v").json()["content"]["id"] == content_id
    audit = http.get(f"{V2}/trees/main/views/{ns}.v/history").json()
    assert audit["contentId"] == content_id
    assert [v["versionId"] for v in audit["versions"]] == [1, 2]  # across the drop
    assert audit["versions"][1]["restoredFrom"]["versionId"] == 1
    assert status(f"{ns}.w") == "ok"


def test_reverting_a_merge(server, store, http, ns: str) -> None:
    main = server.catalog()
    for name in ("a", "b", "c"):
        main.create_table(f"{ns}.{name}", SCHEMA).append(rows(1))
    store.create_reference(f"etl_{ns}", source="main")
    etl = server.catalog(f"etl_{ns}")
    for name in ("a", "b", "c"):
        etl.load_table(f"{ns}.{name}").append(rows(2, start=10))
    merged = http.post(f"{V2}/trees/main@{head(http, 'main')}/history/merge",
                       json={"fromRefName": f"etl_{ns}"})
    assert merged.status_code == 200, merged.text
    merge_hash = merged.json()["resultantTargetHash"]
    main.load_table(f"{ns}.b").append(rows(1, start=50))  # a later change of b

    refused = revert(http, [merge_hash])
    assert refused.status_code == 409 and f"{ns}.b" in refused.text, refused.text
    assert f"{ns}.a" not in refused.text.split("later commits:")[1]
    at = head(http, "main")
    dry = revert(http, [merge_hash], dryRun=True, keyMergeModes=[
        {"key": {"elements": [ns, "b"]}, "mergeBehavior": "FORCE"}])
    assert dry.status_code == 200 and head(http, "main") == at, dry.text
    assert sorted(".".join(k["key"]["elements"]) for k in dry.json()["keys"]) == [
        f"{ns}.a", f"{ns}.b", f"{ns}.c"]
    forced = revert(http, [merge_hash], keyMergeModes=[
        {"key": {"elements": [ns, "b"]}, "mergeBehavior": "FORCE"}])
    assert forced.status_code == 200, forced.text
    for name in ("a", "b", "c"):
        assert main.load_table(f"{ns}.{name}").scan().to_arrow().num_rows == 1, name
    (entry,) = http.get(f"{V2}/trees/main/history", params={"maxRecords": 1}).json()[
        "logEntries"]
    assert entry["commitMeta"]["allProperties"]["sapwood.revert.commits"] == [merge_hash]
    assert entry["commitMeta"]["message"].startswith(f"revert {merge_hash[:12]}")
    # DROP leaves a key as it is.
    store.create_reference(f"etl2_{ns}", source="main")
    etl2 = server.catalog(f"etl2_{ns}")
    for name in ("a", "c"):
        etl2.load_table(f"{ns}.{name}").append(rows(5, start=100))
    h = http.post(f"{V2}/trees/main@{head(http, 'main')}/history/merge",
                  json={"fromRefName": f"etl2_{ns}"}).json()["resultantTargetHash"]
    kept = revert(http, [h], keyMergeModes=[
        {"key": {"elements": [ns, "c"]}, "mergeBehavior": "DROP"}])
    assert kept.status_code == 200, kept.text
    assert main.load_table(f"{ns}.a").scan().to_arrow().num_rows == 1
    assert main.load_table(f"{ns}.c").scan().to_arrow().num_rows == 6


def test_a_revert_that_would_break_a_strict_view_is_refused(server, store, http,
                                                            ns: str) -> None:
    cat = server.catalog()
    strict = f"{ns}_strict"
    cat.create_namespace(strict, {"sapwood.view-invalidation": "strict"})
    store.create_reference(f"new_{ns}", source="main")
    server.catalog(f"new_{ns}").create_table(f"{strict}.x", SCHEMA)
    h = http.post(f"{V2}/trees/main@{head(http, 'main')}/history/merge",
                  json={"fromRefName": f"new_{ns}"}).json()["resultantTargetHash"]
    assert http.post(f"/iceberg/v1/namespaces/{strict}/views", json=sb.create_view(
        "reads_x", f"SELECT id FROM {strict}.x")).status_code == 200
    at = head(http, "main")
    r = revert(http, [h])
    assert r.status_code == 409 and f"{strict}.reads_x" in r.text, r.text
    assert head(http, "main") == at


def test_bad_requests_name_the_problem_and_change_nothing(server, http, ns: str) -> None:
    server.catalog().create_table(f"{ns}.t", SCHEMA)
    at = head(http, "main")
    for r, says in (
            (restore(http, [f"{ns}.t"], "main*not-a-time"), "not-a-time"),
            (restore(http, [f"{ns}.t"], "no_such_branch"), "no_such_branch"),
            (revert(http, ["0" * 64]), "0000000000"),
            (revert(http, [at], parent=2), "parent"),
            (http.post(f"{V2}/trees/main/history/restore", json={
                "source": "main", "keys": [{"elements": [ns, "t"]}]}), "name@expectedHash"),
            (http.post(f"{V2}/trees/main@{at}/history/restore", json={
                "source": "main", "keys": []}), "keys")):
        assert 400 <= r.status_code < 500 and says in r.text, (r.status_code, r.text)
    assert head(http, "main") == at


def test_a_repeated_restore_with_its_idempotency_key_lands_once(server, http, ns: str) -> None:
    import uuid

    t = server.catalog().create_table(f"{ns}.t", SCHEMA)
    t.append(rows(1))
    first = head(http, "main")
    t.append(rows(1, start=5))
    at = head(http, "main")
    key = str(uuid.uuid4())
    body = {"source": f"@{first}", "keys": [{"elements": [ns, "t"]}]}
    answers = [http.post(f"{V2}/trees/main@{at}/history/restore", json=body,
                         headers={"Idempotency-Key": key}) for _ in range(2)]
    assert [a.status_code for a in answers] == [200, 200], answers[0].text
    assert answers[0].json() == answers[1].json()
    assert answers[1].headers.get("Idempotent-Replayed") == "true"
    assert answers[0].json()["hash"] == head(http, "main")  # one commit, not two
    log = http.get(f"{V2}/trees/main/history", params={"maxRecords": 2}).json()["logEntries"]
    assert log[1]["commitMeta"]["hash"] == at


def test_restoring_a_renamed_object_under_its_old_name(server, http, ns: str) -> None:
    """The object lives at its new name: restoring the old name alone would
    make two keys hold it (409); restoring both renames it back."""
    cat = server.catalog()
    cat.create_table(f"{ns}.old", SCHEMA).append(rows(2))
    before = head(http, "main")
    cid = http.get(f"{V2}/trees/main/contents/{ns}.old").json()["content"]["id"]
    cat.rename_table(f"{ns}.old", f"{ns}.new")
    alone = restore(http, [f"{ns}.old"], f"@{before}")
    assert alone.status_code == 409 and f"{ns}.new" in alone.text, alone.text
    both = restore(http, [f"{ns}.old", f"{ns}.new"], f"@{before}")
    assert both.status_code == 200, both.text
    assert {".".join(k["key"]["elements"]): k["action"] for k in both.json()["keys"]} == {
        f"{ns}.old": "revived", f"{ns}.new": "deleted"}
    assert http.get(f"{V2}/trees/main/contents/{ns}.old").json()["content"]["id"] == cid
    assert cat.load_table(f"{ns}.old").scan().to_arrow().num_rows == 2
