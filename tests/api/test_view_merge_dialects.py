"""A view both sides of a merge gave a new version, merged dialect by
dialect through the real server (issue 44, defect 3), on SQLite and
PostgreSQL: main added a trino representation, the branch a duckdb one,
the Spark SQL identical — the merge lands one new version with all three
(the view spec's ids and version-log, each dialect's analysis from the side
whose SQL it has). A true conflict says per dialect what each side did,
with a diff each, in the API's answer (the merge result and the 409), the
CLI and the UI's merge page."""

from __future__ import annotations

import html
import json
import subprocess
import time
from typing import Any

import httpx

from tests.api import spark_bodies as sb
from tests.api.test_rest_http import V1
from tests.api.test_versioning_http import head
from tests.http import http_client
from tests.server import Server
from tests.zygote_client import run

SPARK = "SELECT id, name FROM t"


def sapwood(server: Server, *args: str) -> subprocess.CompletedProcess[str]:
    return run([*args], env={"SAPWOOD_URI": server.base, "COLUMNS": "200"}, timeout=60)


def _branch(http: httpx.Client, name: str) -> None:
    r = http.post(f"/api/v2/trees?name={name}",
                  json={"type": "BRANCH", "name": "main", "hash": head(http, "main")})
    assert r.status_code == 200, r.text


def _view(http: httpx.Client, ns: str, name: str) -> None:
    body = sb.create_view(name, SPARK)
    body["view-version"]["default-namespace"] = [ns]
    r = http.post(f"{V1}/namespaces/{ns}/views", json=body)
    assert r.status_code == 200, r.text


def _metadata(http: httpx.Client, ref: str, ns: str, name: str) -> dict[str, Any]:
    r = http.get(f"/iceberg/{ref}/v1/namespaces/{ns}/views/{name}")
    assert r.status_code == 200, r.text
    return dict(r.json()["metadata"])


def _current(meta: dict[str, Any]) -> dict[str, Any]:
    return dict(next(v for v in meta["versions"]
                     if v["version-id"] == meta["current-version-id"]))


def add_dialect(http: httpx.Client, ref: str, ns: str, name: str, dialect: str,
                sql: str) -> None:
    """A new version with one more representation, as an engine adding its
    dialect would send it: the current version's SQL as it is, the next id."""
    meta = _metadata(http, ref, ns, name)
    cur = _current(meta)
    version = {**cur, "version-id": cur["version-id"] + 1, "timestamp-ms": sb.now_ms(),
               "representations": [*cur["representations"],
                                   {"type": "sql", "sql": sql, "dialect": dialect}]}
    r = http.post(f"/iceberg/{ref}/v1/namespaces/{ns}/views/{name}", json={
        "requirements": [{"type": "assert-view-uuid", "uuid": meta["view-uuid"]}],
        "updates": [{"action": "add-view-version", "view-version": version},
                    {"action": "set-current-view-version", "view-version-id": -1}]})
    assert r.status_code == 200, r.text


def _merge(http: httpx.Client, source: str, **body: Any) -> httpx.Response:
    return http.post(f"/api/v2/trees/main@{head(http, 'main')}/history/merge",
                     json={"fromRefName": source, **body})


def _detail(answer: dict[str, Any], key: str) -> dict[str, Any]:
    return dict(next(d for d in answer["details"] if ".".join(d["key"]["elements"]) == key))


def test_dialects_added_on_each_side_merge_into_one_version(http, ns: str) -> None:
    assert http.post(f"{V1}/namespaces/{ns}/tables",
                     json=sb.create_table("t")).status_code == 200
    _view(http, ns, "v")
    dev = f"dev_{ns[-8:]}"
    _branch(http, dev)
    trino, duckdb = "SELECT id, name FROM t -- trino", "SELECT id, name FROM t -- duckdb"
    add_dialect(http, "main", ns, "v", "trino", trino)
    add_dialect(http, dev, ns, "v", "duckdb", duckdb)
    before = _metadata(http, "main", ns, "v")

    dry = _merge(http, dev, dryRun=True)
    assert dry.status_code == 200, dry.text
    d = _detail(dry.json(), f"{ns}.v")
    assert d["outcome"] == "MERGED", d
    assert d["combined"] == {"version": "both", "dialects": {
        "duckdb": "source", "spark": "target", "trino": "target"}}
    assert _metadata(http, "main", ns, "v") == before  # a dry run writes nothing

    merged = _merge(http, dev)
    assert merged.status_code == 200 and merged.json()["wasApplied"], merged.text
    assert _detail(merged.json(), f"{ns}.v")["outcome"] == "MERGED"
    meta = _metadata(http, "main", ns, "v")
    cur = _current(meta)
    assert [(r["dialect"], r["sql"]) for r in cur["representations"]] == [
        ("spark", SPARK), ("trino", trino), ("duckdb", duckdb)]
    # One new version on top of main's: the next id, the log's newest entry.
    assert [v["version-id"] for v in meta["versions"]] == [1, 2, 3]
    assert meta["current-version-id"] == 3
    log = meta["version-log"]
    assert [e["version-id"] for e in log] == [1, 2, 3]
    assert log[2]["timestamp-ms"] >= log[1]["timestamp-ms"] and cur["timestamp-ms"] == \
        log[2]["timestamp-ms"]
    assert cur["schema-id"] == _current(before)["schema-id"]
    assert cur["default-namespace"] == [ns]
    # What the catalog knows of its SQL: each dialect analysed, all of it ok.
    content = http.get(f"/api/v2/trees/main/contents/{ns}.v").json()["content"]
    assert sorted(a["dialect"] for a in content["analysis"]) == ["duckdb", "spark", "trino"]
    assert {a["status"] for a in content["analysis"]} == {"ok"}
    # The branch keeps its own version, served as written (derived dialects go
    # only to a catalog that named itself: core/sql/derived.py).
    kept = _current(_metadata(http, dev, ns, "v"))
    assert [r["dialect"] for r in kept["representations"]] == ["spark", "duckdb"]
    assert "sapwood.derived-representations" not in kept["summary"]


def _clash(http: httpx.Client, ns: str) -> str:
    """View w: both sides add duckdb, each its own SQL; main adds trino too."""
    assert http.post(f"{V1}/namespaces/{ns}/tables",
                     json=sb.create_table("t")).status_code == 200
    _view(http, ns, "w")
    dev = f"cl_{ns[-8:]}"
    _branch(http, dev)
    add_dialect(http, "main", ns, "w", "trino", "SELECT id, name FROM t")
    add_dialect(http, "main", ns, "w", "duckdb", "SELECT id, name\nFROM t -- main")
    add_dialect(http, dev, ns, "w", "duckdb", "SELECT id, name\nFROM t -- dev")
    return dev


MESSAGE = ("both sides gave duckdb different SQL (duckdb: the target added "
           "'SELECT id, name FROM t -- main', the source added 'SELECT id, name FROM t -- dev')")
DUCKDB_DIFF = ("--- target/duckdb\n+++ source/duckdb\n@@ -1,2 +1,2 @@\n SELECT id, name\n"
               "-FROM t -- main\n+FROM t -- dev")


def test_a_true_conflict_says_per_dialect_what_each_side_did(server: Server, http,
                                                             ns: str) -> None:
    dev = _clash(http, ns)
    before = head(http, "main")
    key = f"{ns}.w"
    # The merge's answer: one line that names no Python None, the structure per
    # dialect, a diff per dialect whose SQL differs (target to source).
    answer = _merge(http, dev, returnConflictAsResult=True).json()
    d = _detail(answer, key)
    assert d["outcome"] == "CONFLICT"
    assert d["conflict"]["message"] == f"key '{key}' was changed on both sides: {MESSAGE}"
    assert "None" not in d["conflict"]["message"]
    found = d["conflictDetails"]
    assert found["dialects"] == {
        "duckdb": {"target": "added", "source": "added", "conflict": True},
        "trino": {"target": "added", "source": "untouched", "conflict": False}}
    assert found["sqlDiff"]["duckdb"] == DUCKDB_DIFF
    assert found["sqlDiff"]["trino"].splitlines()[:2] == ["--- target/trino", "+++ /dev/null"]
    assert found["sql"]["base"] == {"spark": SPARK}
    assert found["reasons"] == ["both sides gave duckdb different SQL"]
    # The 409 carries the same per key.
    refused = _merge(http, dev)
    assert refused.status_code == 409, refused.text
    (c,) = refused.json()["errorDetails"]["conflicts"]
    assert c["key"] == key and c["message"] == d["conflict"]["message"]
    assert c["conflictDetails"] == found
    assert head(http, "main") == before

    # The CLI: the message, each diff under the key, how to resolve it; exit 1.
    dry = sapwood(server, "merge", dev, "--into", "main", "--dry-run")
    assert dry.returncode == 1, dry.stderr
    lines = dry.stdout.splitlines()
    at = lines.index(f"CONFLICT  {key}  key '{key}' was changed on both sides: {MESSAGE}")
    assert lines[at + 1:at + 8] == [
        "    duckdb:", "      --- target/duckdb", "      +++ source/duckdb",
        "      @@ -1,2 +1,2 @@", "       SELECT id, name", "      -FROM t -- main",
        "      +FROM t -- dev"]
    assert f"    resolve: --force {key} takes {dev}'s change, --drop {key} keeps main's" \
        in lines
    as_json = sapwood(server, "merge", dev, "--into", "main", "--json")
    assert _detail(json.loads(as_json.stdout), key)["conflictDetails"] == found

    # The UI's merge page: the message, what each side did per dialect, the diff.
    ui = http_client(base_url=server.base, timeout=30)
    page = ui.get("/ui/merge", params={"from": dev, "into": "main"})
    assert page.status_code == 200, page.text[:300]
    text = page.text
    assert MESSAGE in html.unescape(text)
    assert ('<tr class="conflict"><td>duckdb</td><td>added</td><td>added</td></tr>'
            in text), text
    assert "<tr><td>trino</td><td>added</td><td>untouched</td></tr>" in text
    assert f'<pre class="sqldiff" data-dialect="duckdb">{DUCKDB_DIFF}</pre>' \
        in html.unescape(text)
    assert "None" not in text.split('id="outcomes"')[1].split("</table>")[0]
    assert head(http, "main") == before

    # Resolved by dropping it, the merge lands and main keeps its own.
    time.sleep(0.01)
    done = _merge(http, dev, keyMergeModes=[{"key": {"elements": [ns, "w"]},
                                             "mergeBehavior": "DROP"}])
    assert done.status_code == 200 and done.json()["wasApplied"], done.text
    reps = _current(_metadata(http, "main", ns, "w"))["representations"]
    assert {r["dialect"]: r["sql"] for r in reps}["duckdb"].endswith("-- main")


def test_a_changed_query_and_a_dialect_written_for_the_old_one_conflict(http,
                                                                      ns: str) -> None:
    """The branch changed the Spark SQL; main added trino for the query as it
    was: the two are not combined, and the conflict says why."""
    assert http.post(f"{V1}/namespaces/{ns}/tables",
                     json=sb.create_table("t")).status_code == 200
    _view(http, ns, "q")
    dev = f"q_{ns[-8:]}"
    _branch(http, dev)
    add_dialect(http, "main", ns, "q", "trino", SPARK)
    meta = _metadata(http, dev, ns, "q")
    body = sb.replace_view(meta["view-uuid"], "SELECT id, name FROM t WHERE id > 1")
    body["updates"][2]["view-version"]["default-namespace"] = [ns]
    assert http.post(f"/iceberg/{dev}/v1/namespaces/{ns}/views/q",
                     json=body).status_code == 200
    d = _detail(_merge(http, dev, returnConflictAsResult=True).json(), f"{ns}.q")
    assert d["outcome"] == "CONFLICT"
    assert ("the source changed the query (spark) while the target wrote SQL for the "
            "query as it was (trino)") in d["conflict"]["message"]
    assert d["conflictDetails"]["dialects"] == {
        "spark": {"target": "untouched", "source": "changed", "conflict": True},
        "trino": {"target": "added", "source": "untouched", "conflict": True}}
