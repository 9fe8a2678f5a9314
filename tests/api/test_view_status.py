"""One status per view, wherever it shows (issue 33, items 1 and 2).

A corpus of broken views — a table that does not exist, a column that does
not, a function called with the wrong number of arguments, a type sqlglot
does not know, SQL it cannot parse, a base dropped after the view was
written — and one that holds, on a real server (SQLite and PostgreSQL).
Each view's status and reasons must be the same in ``sapwood views check``
(its exit code and output), ``sapwood view deps``, the status listing, the
dependency, dependents and lineage answers, the view audit, the change
feed's commit event (and the Iceberg-shaped feed's), the UI's view page and
its browse listing."""

from __future__ import annotations

import html
import re
from typing import Any

import httpx
import pytest

from tests.api import spark_bodies as sb
from tests.http import http_client
from tests.server import Server
from tests.zygote_client import run as sapwood

V1 = "/iceberg/v1"
V2 = "/api/v2"

# name → (SQL, the status it must have, words one of its reasons must hold)
CORPUS: dict[str, tuple[str, str, str]] = {
    "no_table": ("SELECT id FROM {ns}.missing", "invalid", "{ns}.missing does not exist"),
    "no_column": ("SELECT nope AS n FROM {ns}.events", "invalid", "'nope'"),
    "arity": ("SELECT upper(id, name) AS u FROM {ns}.events", "unanalysed",
              "number of provided arguments"),
    "bad_type": ("SELECT CAST(id AS nosuchtype) AS x FROM {ns}.events", "unanalysed",
                 "Expected TYPE"),
    "unparsable": ("SELECT FROM WHERE", "unanalysed", "cannot parse"),
    "base_dropped": ("SELECT id, name FROM {ns}.gone", "invalid", "table {ns}.gone dropped"),
    "holds": ("SELECT id, upper(name) AS name FROM {ns}.events", "ok", ""),
}
# Broken when written: the commit that wrote the view already says so.
AT_WRITE = ("no_table", "no_column", "arity", "bad_type", "unparsable", "holds")


def _create(http: httpx.Client, ns: str, name: str, sql: str) -> None:
    body = sb.create_view(name, sql)
    body["view-version"]["default-namespace"] = [ns]
    r = http.post(f"{V1}/namespaces/{ns}/views", json=body)
    assert r.status_code == 200, r.text


@pytest.fixture(scope="module")
def corpus(http: httpx.Client) -> str:
    ns = "status_corpus"
    assert http.post(f"{V1}/namespaces", json={"namespace": [ns]}).status_code == 200
    for table in ("events", "gone"):
        assert http.post(f"{V1}/namespaces/{ns}/tables",
                         json=sb.create_table(table)).status_code == 200
    for name, (sql, _, _) in CORPUS.items():
        _create(http, ns, name, sql.format(ns=ns))
    assert http.delete(f"{V1}/namespaces/{ns}/tables/gone").status_code == 204
    return ns


def _status(doc: dict[str, Any]) -> tuple[str, list[str]]:
    return doc.get("status", "(none)"), doc.get("reasons", [])


def _listing(http: httpx.Client, ns: str) -> dict[str, tuple[str, list[str]]]:
    r = http.get(f"{V2}/trees/main/views", params={"status": "all"})
    assert r.status_code == 200, r.text
    return {v["key"][-1]: _status(v) for v in r.json()["views"] if v["key"][0] == ns}


def _check_output(server: Server) -> tuple[int, dict[str, tuple[str, list[str]]]]:
    """``sapwood views check``: its exit code, and per view its status and
    reasons as printed (``key: status`` then one indented line per reason)."""
    proc = sapwood(["views", "check", "main"], env={"SAPWOOD_URI": server.base, "COLUMNS": "400"},
                   timeout=60)
    out: dict[str, tuple[str, list[str]]] = {}
    current = None
    for line in proc.stdout.splitlines():
        m = re.match(r"^(\S+): (ok|invalid|unanalysed)$", line)
        if m:
            current = m.group(1)
            out[current] = (m.group(2), [])
        elif line.startswith("  ") and current is not None:
            out[current][1].append(line.strip())
        else:
            current = None
    return proc.returncode, out


def _deps_output(server: Server, key: str) -> tuple[str, list[str]]:
    """``sapwood view deps``: the status and reasons it prints; it exits 1
    unless the view is ok (issue 44), as ``view check`` does."""
    proc = sapwood(["view", "deps", key], env={"SAPWOOD_URI": server.base, "COLUMNS": "200"},
                   timeout=60)
    lines = proc.stdout.splitlines()
    status = lines[0].removeprefix(f"{key}: ")
    assert proc.returncode == (0 if status == "ok" else 1), proc.stdout + proc.stderr
    return status, [line.strip() for line in lines[1:] if line.startswith("  ")
                    and not line.startswith("  ┃") and line.strip()[:1] not in "┏┡└│"]


def _ui_view(ui: httpx.Client, key: str) -> tuple[str, list[str]]:
    r = ui.get(f"/ui/object/main/{key}")
    assert r.status_code == 200, r.text[:500]
    badge = re.search(r'<p id="view-status"><span class="badge (\w+)">(\w+)</span>', r.text)
    if badge is None:
        return "(none)", []
    assert badge.group(1) == badge.group(2)
    block = re.search(r'<ul id="view-reasons" class="reasons">(.*?)</ul>', r.text, re.S)
    reasons = [html.unescape(x) for x in re.findall(r"<li>(.*?)</li>", block.group(1))] \
        if block else []
    return badge.group(1), reasons


def _event(http: httpx.Client, key: str) -> tuple[str, list[str]]:
    r = http.get(f"{V2}/events", params={"key": key, "types": "dev.sapwood.commit"})
    assert r.status_code == 200, r.text
    (event,) = r.json()["events"]  # the commit that created the view
    (op,) = [op for c in event["data"]["commits"] for op in c["operations"]
             if ".".join(op["key"]) == key]
    return _status(op)


def _iceberg_event(http: httpx.Client, ns: str, name: str) -> tuple[str, list[str]]:
    """The proposed Iceberg REST events endpoint: the create-view's content."""
    r = http.post(f"{V1}/events", json={"catalog-objects-by-name": [[ns, name]]})
    assert r.status_code == 200, r.text
    (made,) = [e["operation"] for e in r.json()["events"]
               if e["operation"]["operation-type"] == "create-view"]
    return _status(made["x-sapwood-content"])


def _clean(reasons: list[str]) -> list[str]:
    """Reasons as a console prints them (rich wraps nothing at 400 columns,
    but strips trailing spaces)."""
    return [r.strip() for r in reasons]


def test_one_status_everywhere(server: Server, http: httpx.Client, corpus: str) -> None:
    ns = corpus
    listing = _listing(http, ns)
    code, checked = _check_output(server)
    assert code == 1  # a CI step gated on it stops
    ui = http_client(base_url=server.base, follow_redirects=True, timeout=30)
    browse = ui.get("/ui/tree/main", params={"prefix": ns})
    assert browse.status_code == 200
    readers = {d["key"][-1]: _status(d) for d in http.get(
        f"{V2}/trees/main/contents/{ns}.events/dependents").json()["dependents"]}
    assert set(readers) == {"no_column", "holds"}  # the others record no read of it
    for name, (_, expected, words) in CORPUS.items():
        key = f"{ns}.{name}"
        status, reasons = listing[name]
        assert status == expected, (name, status, reasons)
        if expected == "ok":
            assert reasons == []
        else:
            assert any(words.format(ns=ns) in r for r in reasons), (name, reasons)
        seen = {"listing": (status, reasons)}
        seen["views check"] = checked.get(key, ("ok", []))
        seen["view deps"] = _deps_output(server, key)
        k = f"{V2}/trees/main/views/{key}"
        seen["dependencies"] = _status(http.get(f"{k}/dependencies").json())
        seen["lineage"] = _status(http.get(f"{k}/lineage").json())
        audit = http.get(f"{k}/history").json()
        seen["audit"] = _status(audit)
        if name in AT_WRITE:
            seen["audit version"] = _status(audit["versions"][-1])
            seen["event"] = _event(http, key)
            seen["iceberg event"] = _iceberg_event(http, ns, name)
        if name in readers:
            seen["dependents"] = readers[name]
        seen["ui"] = _ui_view(ui, key)
        differ = {surface: (s, r) for surface, (s, r) in seen.items()
                  if (s, _clean(r)) != (status, _clean(reasons))}
        assert not differ, (name, status, reasons, differ)
        # The browse listing flags what does not hold, and only that.
        row = re.search(rf'>{re.escape(key)}</a>(.*?)</td>', browse.text)
        assert row is not None, browse.text[:2000]
        flag = re.search(r'<span class="badge (\w+)">', row.group(1))
        assert (flag.group(1) if flag else "ok") == status, (name, row.group(1))


def test_the_view_page_says_a_view_does_not_hold(server: Server, http: httpx.Client,
                                                  ns: str) -> None:
    """Item 2: a view reading a table that does not exist is flagged on its
    page (badge and the reason naming the table, which its reads list too)
    and in the browse listing; a view that holds says so."""
    http.post(f"{V1}/namespaces/{ns}/tables", json=sb.create_table("orders"))
    _create(http, ns, "broken", f"SELECT id FROM {ns}.nowhere")
    _create(http, ns, "fine", f"SELECT id FROM {ns}.orders")
    ui = http_client(base_url=server.base, follow_redirects=True, timeout=30)
    page = ui.get(f"/ui/object/main/{ns}.broken").text
    assert '<span class="badge invalid">invalid</span>' in page
    assert f"<li>{ns}.nowhere does not exist</li>" in page
    assert f"<li>{ns}.nowhere — <strong>does not exist</strong></li>" in page
    assert "nothing the catalog holds" not in page
    # An empty lineage table says why it is empty (it did not, and looked broken).
    assert "No column lineage: the view's SQL was not analysed, or does not hold" in page
    fine = ui.get(f"/ui/object/main/{ns}.fine").text
    assert '<span class="badge ok">ok</span>' in fine and 'id="view-reasons"' not in fine
    assert "No column lineage" not in fine
    browse = ui.get("/ui/tree/main", params={"prefix": ns}).text
    assert re.search(rf'>{ns}\.broken</a> <span class="badge invalid">invalid</span>', browse)
    assert re.search(rf'>{ns}\.fine</a></td>', browse)
    # The listing asked about some keys (what the browse page does) answers
    # as the whole one does; a key that is no view is left out.
    keys = [f"{ns}.fine", f"{ns}.orders", f"{ns}.broken", f"{ns}.absent"]
    narrow = http.get(f"{V2}/trees/main/views", params={"key": keys}).json()
    whole = http.get(f"{V2}/trees/main/views").json()
    assert narrow["views"] == [v for v in whole["views"] if v["key"][0] == ns]
    assert [v["key"][-1] for v in narrow["views"]] == ["broken", "fine"]
    too_many = http.get(f"{V2}/trees/main/views", params={"key": [f"{ns}.x{i}"
                                                                   for i in range(1001)]})
    assert too_many.status_code == 400 and "Too many keys" in too_many.text
