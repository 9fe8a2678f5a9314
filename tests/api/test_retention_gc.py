"""Retention end to end (issue 35, acceptance 2), with PyIceberg writing real
files on both backends: a policy makes history past it unreadable at once,
and gc then expires the branch's snapshots and deletes exactly the files
nothing retained references, while a branch without a policy keeps all it
read."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa

from core.retention import Policy
from store import Store
from store.fsck import fsck
from tests.api.test_gc_warehouse import _gc, age
from tests.api.test_pyiceberg import SCHEMA
from tests.fixtures import BACKENDS, server_fixture
from tests.http import http_client
from tests.server import Server
from tests.zygote_client import run as sapwood

server = server_fixture(BACKENDS, prefix="retention")


def _data(server: Server) -> set[str]:
    root = Path(server.warehouse.split("://", 1)[1])
    return {str(p) for p in root.rglob("*.parquet")}


def _rows(tag: str) -> pa.Table:
    return pa.table({"id": pa.array([1, 2], pa.int64()), "name": [tag, tag]},
                    schema=SCHEMA.as_arrow())


def _names(table) -> set[str]:  # type: ignore[no-untyped-def]
    return set(table.scan().to_arrow()["name"].to_pylist())


def test_a_policy_expires_history_and_gc_deletes_what_nothing_retains(server: Server) -> None:
    http = http_client(base_url=server.base, timeout=60)
    main = server.catalog()
    main.create_namespace("ret")
    t = main.create_table("ret.t", SCHEMA)
    t.overwrite(_rows("A"))
    files_a = _data(server)
    hash_a = http.get("/api/v2/trees/main").json()["reference"]["hash"]
    r = http.post("/api/v2/trees", params={"name": "keep", "type": "BRANCH"},
                  json={"type": "BRANCH", "name": "main", "hash": hash_a})
    assert r.status_code == 200, r.text
    main.load_table("ret.t").overwrite(_rows("B"))
    files_b = _data(server) - files_a
    time_b = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    main.load_table("ret.t").overwrite(_rows("C"))
    files_c = _data(server) - files_a - files_b
    assert files_a and files_b and files_c
    # Everything reads before any policy.
    assert _names(server.catalog(f"main*{time_b}").load_table("ret.t")) == {"B"}
    s = Store(server.database_url)
    try:
        s.retention.replace([Policy("main", "PT2S")])
    finally:
        s.close()
    time.sleep(2.2)  # the policy's own time: nothing else makes it pass
    # From the moment the policy says so (before gc): main as of B is gone,
    # in the Iceberg shape and the Nessie shape, naming the policy and cutoff.
    gone = http.get(f"/iceberg/main*{time_b}/v1/namespaces/ret/tables/t")
    assert gone.status_code == 410, gone.text
    err = gone.json()["error"]
    assert err["type"] == "HistoryExpiredException", err
    assert "retention of 'main'" in err["message"] and "policy 'main' (keep PT2S)" in \
        err["message"], err
    nessie = http.get(f"/api/v2/trees/main*{time_b}/entries")
    assert nessie.status_code == 410 and nessie.json()["errorCode"] == "HISTORY_EXPIRED"
    # A's commit stays readable: keep (no policy) retains it.
    assert _names(server.catalog(f"@{hash_a}").load_table("ret.t")) == {"A"}
    age(server, 7200)  # past gc's write window
    run = _gc(server)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "snapshots expired: main: ret.t" in run.stdout, run.stdout
    assert "history expired:" in run.stdout and "commits of main" in run.stdout, run.stdout
    left = _data(server)
    assert files_a <= left, "keep still reads A: its files stay"
    assert files_c <= left
    assert not files_b & left, "only expired history referenced B's data files"
    assert _names(main.load_table("ret.t")) == {"C"}
    assert _names(server.catalog("keep").load_table("ret.t")) == {"A"}
    meta = http.get("/iceberg/v1/namespaces/ret/tables/t").json()["metadata"]
    assert len(meta["snapshots"]) == 1
    # The commit gc made says who and what.
    log = http.get("/api/v2/trees/main/history", params={"maxRecords": 1}).json()
    head = log["logEntries"][0]["commitMeta"]
    assert head["authors"] == ["sapwood-gc"] and "expire snapshots: ret.t" in head["message"]
    # Nothing a retained commit needs is missing; what only expired history
    # needed is not damage.
    s = Store(server.database_url)
    try:
        assert fsck(s).ok
    finally:
        s.close()
    check = http.get("/api/v2/admin/fsck", params={"files": "true", "graceSeconds": 0}).json()
    assert check["ok"], check
    s = Store(server.database_url)
    try:
        s.retention.replace([])
    finally:
        s.close()


def test_the_log_and_the_audit_go_back_to_the_cutoff_and_say_so(server: Server) -> None:
    from tests.api import spark_bodies as sb

    http = http_client(base_url=server.base, timeout=60)
    base = "/iceberg/v1/namespaces/aud"
    assert http.post("/iceberg/v1/namespaces", json={"namespace": ["aud"]}).status_code == 200
    r = http.post(f"{base}/views", json=sb.create_view("v", "SELECT 1 AS id"))
    assert r.status_code == 200, r.text
    uuid = r.json()["metadata"]["view-uuid"]
    for n in (2, 3, 4):
        assert http.post(f"{base}/views/v", json=sb.replace_view(
            uuid, f"SELECT {n} AS id")).status_code == 200
    audit = http.get("/api/v2/trees/main/views/aud.v/history").json()
    assert [v["versionId"] for v in audit["versions"]] == [1, 2, 3, 4]
    assert "historyExpired" not in audit
    s = Store(server.database_url)
    try:
        s.retention.replace([Policy("main", keep_commits=2)])
        # The newest two commits: the last two replacements.
        log = http.get("/api/v2/trees/main/history").json()
        assert len(log["logEntries"]) == 2 and log["hasMore"] is False
        assert log["historyExpiredBefore"], log
        audit = http.get("/api/v2/trees/main/views/aud.v/history").json()
        assert [v["versionId"] for v in audit["versions"]] == [3, 4]
        assert audit["historyExpired"] is True
        assert audit["historyExpiredBefore"] == log["historyExpiredBefore"]
        page = http.get("/ui/object/main/aud.v").text
        assert 'id="history-expired"' in page and log["historyExpiredBefore"] in page
        out = _view_history(server)
        assert "older versions expired (retention): history before" in out, out
    finally:
        s.retention.replace([])
        s.close()


def _view_history(server: Server) -> str:

    run = sapwood(["view", "history", "aud.v"], timeout=60, env={"SAPWOOD_URI": server.base})
    assert run.returncode == 0, run.stderr
    return run.stdout
