"""The installed ``sapwood`` executable's versioning verbs against a running
server: each verb once, and one failing case each with its message."""

from __future__ import annotations

from tests.api import spark_bodies as sb
from tests.api.test_versioning_http import head
from tests.fixtures import server_fixture
from tests.zygote_client import run as sapwood

# The CLI speaks HTTP only: one SQLite-backed server is enough here (the
# HTTP tests cover both backends).
server = server_fixture(prefix="cli")


def run(server, *args: str, ok: bool = True) -> str:  # type: ignore[no-untyped-def]
    proc = sapwood([*args], env={"SAPWOOD_URI": server.base, "COLUMNS": "200"}, timeout=60)
    if ok:
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return proc.stdout
    assert proc.returncode != 0, proc.stdout
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    return lines[0]


def test_branches_and_tags(server, ns) -> None:
    b, t = f"cb_{ns}", f"ct_{ns}"
    assert f"created branch {b}" in run(server, "branch", "create", b)
    assert b in run(server, "branch", "list")
    assert "already exists" in run(server, "branch", "create", b, ok=False)
    assert f"created tag {t}" in run(server, "tag", "create", t, "--from", b)
    assert t in run(server, "tag", "list") and t not in run(server, "branch", "list")
    assert "->" in run(server, "branch", "assign", b, "main")
    assert "does not exist" in run(server, "branch", "assign", b, f"nope_{ns}", ok=False)
    assert f"deleted tag {t}" in run(server, "tag", "delete", t)
    assert "does not exist" in run(server, "tag", "delete", t, ok=False)
    assert f"deleted branch {b}" in run(server, "branch", "delete", b)
    assert "main" in run(server, "branch", "delete", "main", ok=False)


def test_log_diff_show_merge_history(server, http, ns) -> None:
    dev = f"cd_{ns}"
    run(server, "branch", "create", dev)
    uuid = http.post(f"/iceberg/{dev}/v1/namespaces/{ns}/views",
                     json=sb.create_view("v", "SELECT 'one'"),
                     headers={"Sapwood-Commit-Author": "ana"}).json()["metadata"]["view-uuid"]
    http.post(f"/iceberg/{dev}/v1/namespaces/{ns}/views/v",
              json=sb.replace_view(uuid, "SELECT 'two'"), headers={"Sapwood-Commit-Author": "bo"})
    http.post(f"/iceberg/{dev}/v1/namespaces/{ns}/tables", json=sb.create_table("t"))

    out = run(server, "log", dev, "--limit", "2")
    assert f"create table {ns}.t" in out and f"replace view {ns}.v" in out
    assert f"create namespace {ns}" not in out  # limited to 2
    assert f"replace view {ns}.v" in run(server, "log", dev, "--key", f"{ns}.v")
    by_ana = run(server, "log", dev, "--key", f"{ns}.v", "--author", "ana")
    assert f"create view {ns}.v" in by_ana and "replace view" not in by_ana
    assert "replace" not in run(server, "log", dev, "--author", "ana", "--until",
                                "2000-01-01T00:00:00Z")
    assert "does not exist" in run(server, "log", f"nope_{ns}", ok=False)

    out = run(server, "diff", "main", dev)
    assert f"+ {ns}.v  (ICEBERG_VIEW)" in out and f"+ {ns}.t  (ICEBERG_TABLE)" in out
    assert "does not exist" in run(server, "diff", "main", f"nope_{ns}", ok=False)

    out = run(server, "show", f"{ns}.v", "--ref", dev)
    assert "SELECT 'two'" in out and "-- spark" in out
    out = run(server, "show", f"{ns}.t", "--ref", dev)
    assert "snapshot none" in out and "id: long" in out
    assert "does not exist" in run(server, "show", f"{ns}.v", ok=False)  # not on main yet

    out = run(server, "merge", dev, "--into", "main", "--dry-run")
    assert "merge (dry run): would change 2 keys on main; nothing written" in out
    before_merge = http.get("/api/v2/trees/main/history", params={"maxRecords": 1}).json()[
        "logEntries"][0]["commitMeta"]["commitTime"]
    assert "merge: main is now at" in run(server, "merge", dev, "--into", "main")
    again = run(server, "merge", dev, "--into", "main")  # nothing new on dev
    assert "merge: nothing to merge; main stays at" in again and "dry run" not in again
    assert "SELECT 'two'" in run(server, "show", f"{ns}.v")
    # --at: what main said at an instant before the merge.
    assert "does not exist" in run(server, "show", f"{ns}.v", "--at", before_merge, ok=False)
    assert "bad-instant" in run(server, "show", f"{ns}.v", "--at", "bad-instant", ok=False)

    out = run(server, "view", "history", f"{ns}.v", "--diff")
    assert "ana" in out and "bo" in out and "+SELECT 'two'" in out
    assert "does not exist" in run(server, "view", "history", f"{ns}.nope", ok=False)


def test_merge_conflict_and_transplant(server, http, ns) -> None:
    dev = f"cx_{ns}"
    uuid = http.post(f"/iceberg/v1/namespaces/{ns}/views",
                     json=sb.create_view("v", "SELECT 0")).json()["metadata"]["view-uuid"]
    run(server, "branch", "create", dev)
    for ref, sql in ((dev, "SELECT 'dev'"), ("main", "SELECT 'main'")):
        http.post(f"/iceberg/{ref}/v1/namespaces/{ns}/views/v", json=sb.replace_view(uuid, sql))
    line = run(server, "merge", dev, "--into", "main", ok=False)
    assert f"merge refused: conflicts on {ns}.v" in line
    assert "DROPPED" in run(server, "merge", dev, "--into", "main", "--drop", f"{ns}.v",
                            "--dry-run")
    out = run(server, "merge", dev, "--into", "main", "--force", f"{ns}.v")
    assert "FORCED" in out
    assert "SELECT 'dev'" in run(server, "show", f"{ns}.v")

    src = f"cs_{ns}"
    run(server, "branch", "create", src)
    for name in ("a", "b"):
        http.post(f"/iceberg/{src}/v1/namespaces/{ns}/tables", json=sb.create_table(name))
    log = http.get(f"/api/v2/trees/{src}/history", params={"maxRecords": 2}).json()
    hashes = [e["commitMeta"]["hash"] for e in reversed(log["logEntries"])]
    before = head(http, "main")
    assert "transplant: main is now at" in run(server, "transplant", *hashes, "--onto", "main")
    assert head(http, "main") != before
    assert "commit" in run(server, "transplant", "0" * 64, "--onto", "main", ok=False)


def test_unreachable_server_is_one_line(tmp_path) -> None:
    proc = sapwood(["branch", "list", "--uri", "http://127.0.0.1:9"], timeout=60)
    assert proc.returncode == 1
    assert proc.stderr.strip().startswith("error: cannot reach the catalog at")
