"""``sapwood merge`` says what the API knows (docs/cli.md): the views a merge
breaks (listed in a dry run, a warning after a real merge), every key's
outcome when keys conflict (the dry run too, exit 1), ``--json`` printing the
API's answer on a conflict, and a ``--force``/``--drop`` naming a key the
merge does not change refused by the API (400 naming it) for every client.
The real command against a real server, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import httpx

from tests.api import spark_bodies as sb
from tests.api.test_rest_http import V1
from tests.api.test_versioning_http import head
from tests.api.test_view_analysis_http import make
from tests.server import Server
from tests.zygote_client import run


def sapwood(server: Server, *args: str) -> subprocess.CompletedProcess[str]:
    return run([*args], env={"SAPWOOD_URI": server.base, "COLUMNS": "200"}, timeout=60)


def _branch(http: httpx.Client, name: str) -> None:
    r = http.post(f"/api/v2/trees?name={name}",
                  json={"type": "BRANCH", "name": "main", "hash": head(http, "main")})
    assert r.status_code == 200, r.text


def _merge(http: httpx.Client, source: str, **body: Any) -> httpx.Response:
    return http.post(f"/api/v2/trees/main@{head(http, 'main')}/history/merge",
                     json={"fromRefName": source, **body})


def test_a_merge_lists_the_views_it_breaks_and_warns_after(server, http, ns) -> None:
    http.post(f"{V1}/namespaces/{ns}/tables", json=sb.create_table("customers"))
    make(http, ns, "named", "SELECT id, name FROM customers")
    make(http, ns, "ids", "SELECT id FROM customers")
    refactor = f"refactor_{ns[-6:]}"
    _branch(http, refactor)
    server.catalog(refactor).load_table(f"{ns}.customers").update_schema().delete_column(
        "name").commit()
    api = _merge(http, refactor, dryRun=True).json()
    reasons = {".".join(v["key"]): "; ".join(v["reasons"]) for v in api["invalidatedViews"]}
    assert list(reasons) == [f"{ns}.named"], api

    dry = sapwood(server, "merge", refactor, "--into", "main", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.splitlines() == [
        f"APPLIED   {ns}.customers",
        "would invalidate 1 view on main:",
        f"  {ns}.named: {reasons[f'{ns}.named']}",
        "merge (dry run): would change 1 key on main; nothing written"], dry.stdout
    before = head(http, "main")
    done = sapwood(server, "merge", refactor, "--into", "main")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1].startswith("merge: main is now at "), done.stdout
    assert done.stderr.splitlines() == [
        f"warning: view {ns}.named on main is now invalid: {reasons[f'{ns}.named']}"]
    assert head(http, "main") != before

    # The API's answer to a real merge names them too (every client can warn).
    again = f"again_{ns[-6:]}"
    _branch(http, again)
    assert http.delete(f"/iceberg/{again}/v1/namespaces/{ns}/tables/customers"
                       ).status_code == 204
    landed = _merge(http, again)
    assert landed.status_code == 200 and landed.json()["wasApplied"], landed.text
    assert [".".join(v["key"]) for v in landed.json()["invalidatedViews"]] == [
        f"{ns}.ids", f"{ns}.named"], landed.text


def _conflict(http: httpx.Client, ns: str) -> str:
    uuid = http.post(f"{V1}/namespaces/{ns}/views",
                     json=sb.create_view("v", "SELECT 0")).json()["metadata"]["view-uuid"]
    dev = f"cx_{ns[-6:]}"
    _branch(http, dev)
    for ref, sql in ((dev, "SELECT 'dev'"), ("main", "SELECT 'main'")):
        r = http.post(f"/iceberg/{ref}/v1/namespaces/{ns}/views/v",
                      json=sb.replace_view(uuid, sql))
        assert r.status_code == 200, r.text
    return dev


def test_a_conflict_lists_every_outcome_and_exits_1(server, http, ns) -> None:
    dev = _conflict(http, ns)
    http.post(f"/iceberg/{dev}/v1/namespaces/{ns}/tables", json=sb.create_table("t"))
    before = head(http, "main")
    # --json: the API's answer (conflicts as its result), exit 1.
    as_json = sapwood(server, "merge", dev, "--into", "main", "--json")
    assert as_json.returncode == 1, as_json.stderr
    answer = json.loads(as_json.stdout)
    assert answer == _merge(http, dev, returnConflictAsResult=True).json()
    assert {".".join(d["key"]["elements"]): d["outcome"] for d in answer["details"]} == {
        f"{ns}.t": "APPLIED", f"{ns}.v": "CONFLICT"}
    assert answer["wasApplied"] is False
    # A dry run lists the outcomes; exit 1 says it would not land.
    dry = sapwood(server, "merge", dev, "--into", "main", "--dry-run")
    assert dry.returncode == 1 and dry.stderr == "", dry.stderr
    lines = dry.stdout.splitlines()
    assert lines[0] == f"APPLIED   {ns}.t" and lines[1].startswith(f"CONFLICT  {ns}.v  ")
    # Under the conflict, its diff and how to resolve it (test_view_merge_dialects.py).
    assert lines[-1] == (f"merge (dry run): would conflict on 1 key ({ns}.v); nothing written; "
                         "--force KEY takes the source's change, --drop KEY keeps the target's")
    # A real one: the same outcomes, and one error line.
    refused = sapwood(server, "merge", dev, "--into", "main")
    assert refused.returncode == 1
    assert refused.stdout.splitlines()[:2] == lines[:2]
    assert refused.stderr.splitlines() == [
        f"error: merge refused: conflicts on {ns}.v; --force KEY takes the source's change, "
        "--drop KEY keeps the target's"]
    assert head(http, "main") == before


def test_a_mode_for_a_key_the_merge_does_not_change_is_refused(server, http, ns) -> None:
    dev = _conflict(http, ns)
    before = head(http, "main")
    for option in ("--force", "--drop"):
        for dry in ((), ("--dry-run",)):
            out = sapwood(server, "merge", dev, "--into", "main", option, f"{ns}.vv", *dry)
            assert out.returncode == 1 and out.stdout == "", out.stdout
            assert out.stderr.splitlines() == [
                f"error: --force/--drop names a key this merge does not change: "
                f"'{ns}.vv' (did you mean '{ns}.v'?); it changes 1 key"], out.stderr
    # The API refuses it for every client, naming it.
    for dry_run in (True, False):
        r = _merge(http, dev, dryRun=dry_run, keyMergeModes=[
            {"key": {"elements": [ns, "v"]}, "mergeBehavior": "FORCE"},
            {"key": {"elements": ["analytics", "dly"]}, "mergeBehavior": "DROP"}])
        assert r.status_code == 400, r.text
        assert "'analytics.dly'" in r.json()["message"], r.text
    assert head(http, "main") == before
    # A key the merge does change takes its mode.
    forced = sapwood(server, "merge", dev, "--into", "main", "--force", f"{ns}.v")
    assert forced.returncode == 0 and f"FORCED    {ns}.v" in forced.stdout, forced.stderr
    # A revert's modes are held to the same rule.
    merged = head(http, "main")
    out = sapwood(server, "revert", merged, "--force", f"{ns}.nope", "--dry-run")
    assert out.returncode == 1 and f"'{ns}.nope'" in out.stderr, out.stderr
    assert "this revert does not change" in out.stderr


def test_a_transplant_lists_its_conflicts_and_holds_modes_to_its_keys(server, http,
                                                                       ns) -> None:
    dev = _conflict(http, ns)
    log = http.get(f"/api/v2/trees/{dev}/history", params={"maxRecords": 1}).json()
    commit = log["logEntries"][0]["commitMeta"]["hash"]  # dev's replace of the view
    before = head(http, "main")
    out = sapwood(server, "transplant", commit, "--onto", "main")
    assert out.returncode == 1, out.stderr
    assert out.stdout.splitlines()[0].startswith(f"CONFLICT  {ns}.v  "), out.stdout
    assert out.stderr.splitlines() == [
        f"error: transplant refused: conflicts on {ns}.v; --force KEY takes the source's "
        "change, --drop KEY keeps the target's"]
    r = http.post(f"/api/v2/trees/main@{before}/history/transplant", json={
        "hashesToTransplant": [commit], "dryRun": True,
        "keyMergeModes": [{"key": {"elements": [ns, "w"]}, "mergeBehavior": "FORCE"}]})
    assert r.status_code == 400 and f"'{ns}.w'" in r.json()["message"], r.text
    assert "this transplant does not change" in r.json()["message"]
    assert head(http, "main") == before
