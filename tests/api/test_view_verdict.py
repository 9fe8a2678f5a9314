"""One verdict on a view, through every hop (issue 44, defect 1).

On a branch where the table ``revenue`` is dropped, ``big_regions`` reads
it and ``top`` reads ``big_regions``: ``top`` does not hold either, and its
reason names the way (``ns.top → ns.big_regions → ns.revenue: table
ns.revenue dropped``). Built through a real server (SQLite and PostgreSQL),
the same answer is checked on every surface: ``sapwood view check`` and
``sapwood view deps`` (text and exit codes), the status listing (whole and
by key), the audit, the change feed, the dependency, dependents and lineage
answers (the lineage graph), a merge's dry run in the API, in ``sapwood
merge --dry-run --json`` and in the UI's merge preview, and the UI's view
page (its badge, its reads and the graph that draws each hop). A reader
who may not read the dropped table sees the verdict with the neutral
reason, never the hidden name."""

from __future__ import annotations

import html
import re
from typing import Any

import httpx
import pytest

from tests.api import spark_bodies as sb
from tests.api.auth_setup import People, set_up
from tests.api.ui_forms import as_data, browser, hidden_fields
from tests.fixtures import BACKENDS, server_fixture
from tests.http import http_client
from tests.server import Server
from tests.zygote_client import run as sapwood

V2 = "/api/v2/trees"
HIDDEN = "not shown: it concerns objects you may not read"

secured = server_fixture(BACKENDS, env={"SAPWOOD_AUTH": "1"},
                         prepare=lambda url: set_up(url, protect_main=False),
                         prefix="verdict-auth")


def view(http: httpx.Client, ref: str, ns: str, name: str, sql: str) -> None:
    body = sb.create_view(name, sql)
    body["view-version"]["default-namespace"] = [ns]
    r = http.post(f"/iceberg/{ref}/v1/namespaces/{ns}/views", json=body)
    assert r.status_code == 200, r.text


def head(http: httpx.Client, ref: str) -> str:
    r = http.get(f"{V2}/{ref}")
    assert r.status_code == 200, r.text
    return str(r.json()["reference"]["hash"])


def branch(http: httpx.Client, name: str) -> None:
    r = http.post(f"{V2}", params={"name": name, "type": "BRANCH"},
                  json={"type": "BRANCH", "name": "main", "hash": head(http, "main")})
    assert r.status_code == 200, r.text


def chain(http: httpx.Client, ns: str, dev: str) -> None:
    """``revenue ← big_regions ← top`` on main; ``dev`` from there, with
    ``revenue`` dropped and one more view of ``big_regions`` written after."""
    r = http.post(f"/iceberg/main/v1/namespaces/{ns}/tables", json=sb.create_table("revenue"))
    assert r.status_code == 200, r.text
    view(http, "main", ns, "big_regions", "SELECT id, name FROM revenue WHERE id > 10")
    view(http, "main", ns, "top", "SELECT id FROM big_regions")
    branch(http, dev)
    assert http.delete(f"/iceberg/{dev}/v1/namespaces/{ns}/tables/revenue").status_code == 204
    view(http, dev, ns, "top_dev", "SELECT name FROM big_regions")


def cli(server: Server, *args: str) -> tuple[int, str]:
    proc = sapwood(list(args), env={"SAPWOOD_URI": server.base, "COLUMNS": "400"}, timeout=60)
    assert not proc.stderr.strip() or proc.returncode, proc.stderr
    return proc.returncode, proc.stdout


def status(doc: dict[str, Any]) -> tuple[str, list[str]]:
    return doc["status"], doc["reasons"]


def test_a_view_broken_through_another_is_invalid_everywhere(server: Server, http: httpx.Client,
                                                            ns: str) -> None:
    dev = f"dev_{ns}"
    chain(http, ns, dev)
    dropped = f"table {ns}.revenue dropped"
    way = f"{ns}.top → {ns}.big_regions → {ns}.revenue: {dropped}"
    expected = {f"{ns}.big_regions": ("invalid", [dropped]),
                f"{ns}.top": ("invalid", [way]),
                f"{ns}.top_dev": ("invalid", [way.replace(f"{ns}.top ", f"{ns}.top_dev ")])}

    # The listing, whole and by key, and by status.
    listed = {".".join(v["key"]): status(v)
              for v in http.get(f"{V2}/{dev}/views", params={"status": "invalid"}).json()["views"]}
    assert listed == expected
    ok = http.get(f"{V2}/{dev}/views", params={"status": "ok"}).json()["views"]
    assert [v for v in ok if v["key"][0] == ns] == []
    (one,) = http.get(f"{V2}/{dev}/views", params={"key": f"{ns}.top"}).json()["views"]
    assert status(one) == expected[f"{ns}.top"]
    assert {".".join(v["key"]): v["status"] for v in http.get(
        f"{V2}/main/views").json()["views"]} == {f"{ns}.big_regions": "ok", f"{ns}.top": "ok"}

    # sapwood view check: every view that does not hold, exit 1.
    code, out = cli(server, "view", "check", dev)
    assert code == 1, out
    assert f"{ns}.top: invalid\n  {way}\n" in out and f"{ns}.big_regions: invalid\n" in out
    assert out.endswith("3 views, 3 not ok\n"), out
    assert cli(server, "view", "check", "main") == (0, "2 views, 0 not ok\n")

    # sapwood view deps: not ok, exit 1; the table names the missing table at depth 2.
    code, out = cli(server, "view", "deps", f"{ns}.top", "--ref", dev)
    assert code == 1, out
    assert out.startswith(f"{ns}.top: invalid\n  {way}\n"), out
    # Not a terminal: one tab-separated line per row (depth, key, type, via, exists).
    rows = [line.split("\t") for line in out.splitlines() if "\t" in line]
    assert rows[0] == ["depth", "key", "type", "via", "exists"], out
    (row,) = [r for r in rows if r[1] == f"{ns}.revenue"]
    assert (row[0], row[3], row[4]) == ("2", f"{ns}.big_regions", "NO"), out
    code, out = cli(server, "view", "deps", f"{ns}.top")
    assert code == 0 and out.startswith(f"{ns}.top: ok\n"), out

    # The lineage graph: each hop with its via, each view's status the verdict's.
    deps = http.get(f"{V2}/{dev}/views/{ns}.top/dependencies").json()
    assert status(deps) == expected[f"{ns}.top"]
    hops = {".".join(d["key"]): d for d in deps["dependencies"]}
    assert (hops[f"{ns}.big_regions"]["depth"], hops[f"{ns}.big_regions"]["via"]) == (
        1, [ns, "top"])
    assert status(hops[f"{ns}.big_regions"]) == ("invalid", [dropped])
    assert (hops[f"{ns}.revenue"]["depth"], hops[f"{ns}.revenue"]["via"],
            hops[f"{ns}.revenue"]["exists"]) == (2, [ns, "big_regions"], False)
    readers = {".".join(d["key"]): d for d in http.get(
        f"{V2}/{dev}/contents/{ns}.big_regions/dependents").json()["dependents"]}
    assert {k: (d["depth"], status(d)) for k, d in readers.items()} == {
        k: (1, expected[k]) for k in (f"{ns}.top", f"{ns}.top_dev")}
    assert status(http.get(f"{V2}/{dev}/views/{ns}.top/lineage").json()) == expected[f"{ns}.top"]

    # The audit: invalid on dev now; ok when it was written (on main).
    audit = http.get(f"{V2}/{dev}/views/{ns}.top/history").json()
    assert status(audit) == expected[f"{ns}.top"]
    assert audit["versions"][-1]["status"] == "ok"
    # The change feed: the commit that wrote top_dev on dev says it did not hold.
    events = http.get("/api/v2/events", params={"key": f"{ns}.top_dev",
                                                "types": "dev.sapwood.commit"}).json()
    (op,) = [op for e in events["events"] for c in e["data"]["commits"]
             for op in c["operations"] if ".".join(op["key"]) == f"{ns}.top_dev"]
    assert status(op) == expected[f"{ns}.top_dev"]

    # A merge's dry run: both views of main it breaks, with the way.
    before = head(http, "main")
    r = http.post(f"{V2}/main@{before}/history/merge",
                  json={"fromRefName": dev, "dryRun": True})
    assert r.status_code == 200, r.text
    invalidated = {".".join(v["key"]): ("invalid", v["reasons"])
                   for v in r.json()["invalidatedViews"]}
    assert invalidated == {k: expected[k] for k in (f"{ns}.big_regions", f"{ns}.top")}
    code, out = cli(server, "merge", dev, "--into", "main", "--dry-run", "--json")
    assert code == 0, out
    assert '"invalidatedViews"' in out and way in out and dropped in out
    # As text: each view with its reasons (the CLI's report, issue 44 defect 2).
    code, out = cli(server, "merge", dev, "--into", "main", "--dry-run")
    assert code == 0, out
    assert f"{ns}.top: {way}\n" in out and f"{ns}.big_regions: {dropped}\n" in out, out
    assert head(http, "main") == before

    # The UI: the view page's badge, reasons, reads and graph; the merge preview.
    ui = browser(server)
    page = ui.get(f"/ui/object/{dev}/{ns}.top").text
    assert '<p id="view-status"><span class="badge invalid">invalid</span>' in page
    assert f"<li>{html.escape(way)}</li>" in page
    reads = page.split('<ul id="reads">')[1].split("</ul>")[0]
    assert f"{ns}.revenue</a> (ICEBERG_TABLE, depth 2, through {ns}.big_regions)" \
           " — <strong>missing</strong>" in reads
    assert f'{ns}.big_regions</a> (ICEBERG_VIEW, depth 1) <span class="badge invalid">' in reads
    graph = page.split("<svg")[1].split("</svg>")[0]
    boxes = {k: state for state, k in re.findall(
        r'class="(?:self )?node (\w+)" data-key="([^"]+)"', graph)}
    assert boxes == {
        f"{ns}.revenue": "missing", f"{ns}.big_regions": "invalid", f"{ns}.top": "invalid"}
    x = {k: int(v) for v, k in re.findall(r'<rect x="(\d+)"[^>]*/><text[^>]*>([^<]+)<', graph)}
    lines = sorted((int(a), int(b)) for a, b in re.findall(r'<line x1="(\d+)"[^>]*x2="(\d+)"',
                                                           graph))
    # Each hop its own line: revenue → big_regions → top, no revenue → top.
    assert x[f"{ns}.revenue"] < x[f"{ns}.big_regions"] < x[f"{ns}.top"]
    assert len(lines) == 2 and lines[0][1] == x[f"{ns}.big_regions"] \
        and lines[1][1] == x[f"{ns}.top"], (x, lines)
    readers_page = ui.get(f"/ui/object/{dev}/{ns}.big_regions").text
    read_by = readers_page.split('<ul id="read-by">')[1].split("</ul>")[0]
    assert f'{ns}.top</a> (depth 1) <span class="badge invalid">' in read_by
    preview = ui.get("/ui/merge", params={"from": dev, "into": "main"}).text
    listed_ui = preview.split('<ul id="invalidated">')[1]
    for key in (f"{ns}.big_regions", f"{ns}.top"):
        assert f'href="/ui/object/main/{key}">{key}</a>' in listed_ui
    assert f"<li>{html.escape(way)}</li>" in listed_ui
    assert f"Merge {dev} into main and break 2 views</button>" in preview
    assert "<h3>Views it would invalidate</h3>" in preview
    assert head(http, "main") == before
    # Merged through the UI: the page says what the merge did, not what it would do.
    done = ui.post("/ui/merge", data=as_data(hidden_fields(preview, "/ui/merge")))
    assert done.status_code == 200 and "Merged: main is now at" in done.text, done.text[:500]
    assert "<h3>Views this merge invalidated</h3>" in done.text
    assert "would invalidate" not in done.text
    assert f"<li>{html.escape(way)}</li>" in done.text.split('<ul id="invalidated">')[1]
    assert head(http, "main") != before


def test_a_diamond_draws_both_hops_to_what_two_ways_read(server: Server, http: httpx.Client,
                                                          ns: str) -> None:
    """``top`` reads ``revenue`` directly and through ``big_regions``: the
    answers list both readers of ``revenue`` (``vias``) and the graph draws
    all three hops, ``revenue`` in the column of its longest way."""
    r = http.post(f"/iceberg/main/v1/namespaces/{ns}/tables", json=sb.create_table("revenue"))
    assert r.status_code == 200, r.text
    view(http, "main", ns, "big_regions", "SELECT id, name FROM revenue WHERE id > 10")
    view(http, "main", ns, "top", "SELECT b.id FROM big_regions b JOIN revenue r ON b.id = r.id")
    deps = http.get(f"{V2}/main/views/{ns}.top/dependencies").json()["dependencies"]
    hops = {".".join(d["key"]): d for d in deps}
    assert hops[f"{ns}.revenue"]["depth"] == 1
    assert sorted(map(tuple, hops[f"{ns}.revenue"]["vias"])) == [(ns, "big_regions"), (ns, "top")]
    readers = {".".join(d["key"]): d for d in http.get(
        f"{V2}/main/contents/{ns}.revenue/dependents").json()["dependents"]}
    assert sorted(map(tuple, readers[f"{ns}.top"]["vias"])) == [(ns, "big_regions"),
                                                                 (ns, "revenue")]
    ui = browser(server)
    for page_of, hops_drawn in (
            (f"{ns}.top", {("revenue", "big_regions"), ("big_regions", "top"),
                           ("revenue", "top")}),
            # From the middle: what it reads on the left, what reads it on the right.
            (f"{ns}.big_regions", {("revenue", "big_regions"), ("big_regions", "top")})):
        graph = ui.get(f"/ui/object/main/{page_of}").text.split("<svg")[1].split("</svg>")[0]
        drawn = {(a.removeprefix(f"{ns}."), b.removeprefix(f"{ns}."))
                 for a, b in re.findall(r'<line [^>]*data-from="([^"]+)" data-to="([^"]+)"',
                                        graph)}
        assert drawn == hops_drawn, (page_of, graph)
        x = {k: int(v) for v, k in re.findall(r'<rect x="(\d+)"[^>]*/><text[^>]*>([^<]+)<',
                                               graph)}
        assert x[f"{ns}.revenue"] < x[f"{ns}.big_regions"] < x[f"{ns}.top"], (page_of, x)


@pytest.fixture(scope="module")
def people(secured: Server) -> People:
    return secured.people  # type: ignore[attr-defined, no-any-return]


def test_a_reader_who_may_not_read_the_end_of_the_way_sees_the_neutral_reason(
        secured: Server, people: People) -> None:
    """``sales.top`` reads ``sales.mid``, which reads ``hr.pay``; ``hr.pay``
    dropped: ``sales`` (who may not read ``hr``) sees ``sales.top`` invalid
    with the neutral reason in the listing and the dependency answer; a
    reader of everything sees the way."""
    admin = http_client(base_url=secured.base, headers=people.headers("admin"), timeout=30)
    for ns in ("sales", "hr"):
        assert admin.post("/iceberg/v1/namespaces", json={"namespace": [ns]}).status_code == 200
    assert admin.post("/iceberg/v1/namespaces/hr/tables",
                      json=sb.create_table("pay")).status_code == 200
    view(admin, "main", "sales", "mid", "SELECT id, name FROM hr.pay")
    view(admin, "main", "sales", "top", "SELECT id FROM mid")
    assert admin.delete("/iceberg/v1/namespaces/hr/tables/pay").status_code == 204
    for who, reason in (("sales", HIDDEN),
                        ("reader", "sales.top → sales.mid → hr.pay: table hr.pay dropped")):
        http = http_client(base_url=secured.base, headers=people.headers(who), timeout=30)
        listed = {".".join(v["key"]): status(v)
                  for v in http.get(f"{V2}/main/views").json()["views"]}
        assert listed["sales.top"] == ("invalid", [reason]), who
        deps = http.get(f"{V2}/main/views/sales.top/dependencies").json()
        assert status(deps) == ("invalid", [reason]), who
        if who == "sales":
            assert "hr.pay" not in str(listed) and "dropped" not in str(deps)
