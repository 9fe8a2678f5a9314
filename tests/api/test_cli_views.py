"""``sapwood view deps|dependents|lineage|check`` (and ``views check``, its
first name), the installed executable against a running server; what the
verbs print against it: ``--json`` is the API's answer, tables with
``--full`` keep whole hashes and instants, dry runs say "would"; and the
CLI with a credential against a server with authentication on."""

from __future__ import annotations

import json
import os
import re
from typing import Any

import httpx
from click.testing import Result
from typer.testing import CliRunner

from cli.main import command
from tests.api import spark_bodies as sb
from tests.api.auth_setup import set_up
from tests.api.test_cli_versioning import run
from tests.fixtures import server_fixture
from tests.server import Server, serving
from tests.zygote_client import run as sapwood

V1 = "/iceberg/v1"


# The CLI speaks HTTP only: one SQLite-backed server is enough here (the
# HTTP tests cover both backends).
server = server_fixture(prefix="cli-views")


def view(http: httpx.Client, ns: str, name: str, sql: str) -> None:
    body = sb.create_view(name, sql)
    body["view-version"]["default-namespace"] = [ns]
    r = http.post(f"{V1}/namespaces/{ns}/views", json=body)
    assert r.status_code == 200, r.text


def test_view_verbs(server, http) -> None:
    http.post(f"{V1}/namespaces", json={"namespace": ["shop"]})
    http.post(f"{V1}/namespaces/shop/tables", json=sb.create_table("orders"))
    http.post(f"{V1}/namespaces/shop/tables", json=sb.create_table("old"))
    view(http, "shop", "daily", "SELECT id, upper(name) AS name FROM orders")
    view(http, "shop", "top", "SELECT id, name FROM daily")
    view(http, "shop", "stale", "SELECT id, name FROM old")
    deps = run(server, "view", "deps", "shop.top")
    assert "shop.top: ok" in deps and "shop.daily" in deps and "shop.orders" in deps
    dependents = run(server, "view", "dependents", "shop.orders")
    assert "shop.daily" in dependents and "shop.top" in dependents
    lineage = run(server, "view", "lineage", "shop.top")
    assert "shop.orders.name" in lineage and "yes" in lineage
    # All hold: exit 0, by the group's name and by its first name.
    assert run(server, "view", "check") == run(server, "views", "check") == \
        "3 views, 0 not ok\n"
    assert "unchanged (version 1)" in run(server, "view", "recompile", "shop.daily")
    added = run(server, "view", "transpile", "shop.daily", "--from", "spark", "--to", "trino")
    assert "version 2 adds trino" in added and "UPPER(name)" in added
    http.delete(f"{V1}/namespaces/shop/tables/old")
    checked = [sapwood([*group, "check", "main"], timeout=60,
                       env={"SAPWOOD_URI": server.base, "COLUMNS": "200"})
               for group in (["view"], ["views"])]
    for proc in checked:
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert "shop.stale: invalid" in proc.stdout and "table shop.old dropped" in proc.stdout
    assert checked[0].stdout == checked[1].stdout


def cli(server: Server, *args: str) -> Result:
    """The command in this process (what it prints does not depend on being
    its own process; the tests above run the executable)."""
    return CliRunner().invoke(command(), list(args), env={"SAPWOOD_URI": server.base})


def printed(server: Server, *args: str) -> str:
    out = cli(server, *args)
    assert out.exit_code == 0, (args, out.output, out.exception)
    return out.stdout


def as_json(server: Server, *args: str) -> Any:
    return json.loads(printed(server, *args, "--json"))


def history(server: Server, http: httpx.Client, ns: str) -> tuple[str, str]:
    """A branch with a table and a view of two versions; (branch, head)."""
    dev = f"j_{ns}"
    http.post(f"{V1}/namespaces/{ns}/tables", json=sb.create_table("t"))
    made = as_json(server, "branch", "create", dev)["reference"]
    assert made["name"] == dev and made["type"] == "BRANCH"
    uuid = http.post(f"/iceberg/{dev}/v1/namespaces/{ns}/views", json={
        **sb.create_view("v", f"SELECT id FROM {ns}.t")}).json()["metadata"]["view-uuid"]
    r = http.post(f"/iceberg/{dev}/v1/namespaces/{ns}/views/v",
                  json=sb.replace_view(uuid, f"SELECT id, name FROM {ns}.t"))
    assert r.status_code == 200, r.text
    return dev, http.get(f"/api/v2/trees/{dev}").json()["reference"]["hash"]


# What differs between two runs of the same gc: how long it took, when it began.
TIMINGS = {"mark_s", "sweep_s", "mark_started_s", "seconds"}


def test_json_is_the_apis_answer(server, http, ns) -> None:
    dev, head = history(server, http, ns)
    api = lambda path, **params: http.get(path, params=params).json()  # noqa: E731
    # Listings (the CLI pages through them; one page here).
    assert as_json(server, "log", dev, "--limit", "3") == api(
        f"/api/v2/trees/{dev}/history", maxRecords=3)
    refs = api("/api/v2/trees")
    assert as_json(server, "branch", "list") == {
        **refs, "references": [r for r in refs["references"] if r["type"] == "BRANCH"]}
    assert as_json(server, "diff", "main", dev) == api(f"/api/v2/trees/main/diff/{dev}")
    assert as_json(server, "view", "history", f"{ns}.v", "--ref", dev) == api(
        f"/api/v2/trees/{dev}/views/{ns}.v/history")
    checked, views = cli(server, "view", "check", dev, "--json"), api(f"/api/v2/trees/{dev}/views")
    assert json.loads(checked.stdout) == views  # and the exit code says whether all hold
    assert checked.exit_code == int(any(v["status"] != "ok" for v in views["views"]))
    assert as_json(server, "events", "--ref", dev) == api("/api/v2/events", ref=dev,
                                                          maxRecords=500)
    # Records.
    assert as_json(server, "show", f"{ns}.v", "--ref", dev) == api(
        f"/iceberg/{dev}/v1/namespaces/{ns}/views/v")
    assert as_json(server, "show", f"{ns}.t") == api(f"{V1}/namespaces/{ns}/tables/t")
    for verb, path in (("deps", f"views/{ns}.v/dependencies"),
                       ("lineage", f"views/{ns}.v/lineage")):
        assert as_json(server, "view", verb, f"{ns}.v", "--ref", dev) == api(
            f"/api/v2/trees/{dev}/{path}")
    assert as_json(server, "view", "dependents", f"{ns}.t", "--ref", dev) == api(
        f"/api/v2/trees/{dev}/contents/{ns}.t/dependents")
    # Dry runs.
    merge = {"fromRefName": dev, "dryRun": True, "keyMergeModes": []}
    main = http.get("/api/v2/trees/main").json()["reference"]["hash"]
    assert as_json(server, "merge", dev, "--into", "main", "--dry-run") == http.post(
        f"/api/v2/trees/main@{main}/history/merge", json=merge).json()
    restore = {"source": f"{dev}~1", "dryRun": True, "keys": [{"elements": [ns, "v"]}]}
    assert as_json(server, "restore", f"{ns}.v", "--from", f"{dev}~1", "-b", dev,
                   "--dry-run") == http.post(f"/api/v2/trees/{dev}@{head}/history/restore",
                                             json=restore).json()
    revert = {"commits": [head], "parent": 1, "dryRun": True, "keyMergeModes": []}
    assert as_json(server, "revert", head, "-b", dev, "--dry-run") == http.post(
        f"/api/v2/trees/{dev}@{head}/history/revert", json=revert).json()
    # The database verbs print what the admin routes answer.
    db = ("--database", server.database_url)
    assert as_json(server, "fsck", *db) == api("/api/v2/admin/fsck")
    gc = as_json(server, "gc", "--dry-run", *db, "--warehouse", server.warehouse)
    served = http.post("/api/v2/admin/gc", params={"dryRun": "true"}).json()
    for report in (gc, served):
        for part in ("store", "warehouse"):
            report[part] = {k: v for k, v in report[part].items() if k not in TIMINGS}
    assert gc == served and gc["store"]["dry_run"] is True


WHOLE_HASH = re.compile(r"^[0-9a-f]{64}\t\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z\t")


def test_full_tables_keep_whole_hashes_and_dry_runs_say_would(server, http, ns) -> None:
    dev, head = history(server, http, ns)
    # Piped, on a narrow terminal width, with --full: plain lines, nothing cut
    # (without it, 12 hex characters: tests/api/test_cli_listings.py).
    log = sapwood(["log", dev, "--limit", "3", "--full"], timeout=60,
                  env={"SAPWOOD_URI": server.base, "COLUMNS": "40"})
    assert log.returncode == 0, log.stderr
    lines = log.stdout.splitlines()
    assert lines[0] == "hash\ttime\tauthor\tmessage" and len(lines) == 4, log.stdout
    assert all(WHOLE_HASH.match(line) for line in lines[1:]), log.stdout
    assert lines[1].startswith(f"{head}\t") and "…" not in log.stdout
    versions = printed(server, "view", "history", f"{ns}.v", "--ref", dev,
                       "--full").splitlines()
    assert versions[0].split("\t")[:4] == ["version", "current from", "author", "commit"]
    assert versions[2].split("\t")[3] == head and "…" not in "".join(versions)
    events = printed(server, "events", "--ref", dev, "--full").splitlines()
    assert events[-1].split()[5] == head, events  # "id time type ref → head keys"

    merge = printed(server, "merge", dev, "--into", "main", "--dry-run")
    assert merge.splitlines() == [f"APPLIED   {ns}.v", "merge (dry run): would change 1 key "
                                  "on main; nothing written"], merge
    restore = printed(server, "restore", f"{ns}.v", "--from", f"{dev}~1", "-b", dev,
                      "--dry-run").splitlines()
    assert restore[0].startswith(f"would restore {ns}.v  from {dev}~1 ("), restore
    assert restore[-1] == f"restore (dry run): would change 1 key on {dev}; nothing written"
    revert = printed(server, "revert", head, "-b", dev, "--dry-run").splitlines()
    assert revert[-1] == f"revert (dry run): would change 1 key on {dev}; nothing written"
    assert http.get(f"/api/v2/trees/{dev}").json()["reference"]["hash"] == head


def test_the_cli_sends_its_credential(tmp_path) -> None:
    url = f"sqlite:///{tmp_path / 'sapwood.db'}"
    people = set_up(url)
    with serving(url, tmp_path, {"SAPWOOD_AUTH": "1"}) as srv:
        env = {**os.environ, "SAPWOOD_URI": srv.base, "COLUMNS": "200"}
        denied = sapwood(["branch", "list"], env=env, timeout=60)
        assert denied.returncode == 1 and "SAPWOOD_CREDENTIAL" in denied.stderr
        ok = sapwood(["branch", "list"], timeout=60,
                     env={**env, "SAPWOOD_CREDENTIAL": people.keys["reader"]})
        assert ok.returncode == 0 and "main" in ok.stdout, ok.stderr
