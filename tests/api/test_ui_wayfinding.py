"""The UI a person expects (issue 44), over plain HTTP against a real server
on SQLite and PostgreSQL: the default branch offers no delete (and the
catalog still refuses it); SQL keywords are all marked, the multi-word ones
and those that are keywords only where they stand included; every instant
is shown to the millisecond; a path answers the same with or without its
trailing slash (``/ui/log`` too); a "Not found" page says what to try; Log
and Browse stay on the reference being viewed and a switcher is on every
page; a table page shows its snapshots' summaries as columns and its row
count over its snapshots as a small chart drawn on the server; "Read by"
says how deep a reader is. With authentication on, the switcher and the
suggestions name only references the visitor may read."""

from __future__ import annotations

import html
import re
import time
from datetime import datetime, timedelta

import httpx
import pytest

from tests.api import spark_bodies as sb
from tests.api.auth_setup import STAFF, Grants, People, with_principals
from tests.api.test_pyiceberg import SCHEMA, rows
from tests.api.test_versioning_http import V2, head
from tests.api.ui_forms import browser, hidden_fields, sign_in
from tests.fixtures import BACKENDS, server_fixture
from tests.http import http_client
from tests.server import Server


def ok(r: httpx.Response) -> str:
    assert r.status_code == 200, (r.status_code, r.url, r.text[:500])
    assert r.headers["content-type"].startswith("text/html")
    return r.text


def branch(http: httpx.Client, name: str, source: str = "main") -> None:
    r = http.post(f"{V2}/trees", params={"name": name, "type": "BRANCH"},
                  json={"type": "BRANCH", "name": source, "hash": head(http, source)})
    assert r.status_code == 200, r.text


def view(http: httpx.Client, ns: str, name: str, sql: str, ref: str = "main") -> None:
    body = sb.create_view(name, sql)
    body["view-version"]["default-namespace"] = [ns]
    r = http.post(f"/iceberg/{ref}/v1/namespaces/{ns}/views", json=body)
    assert r.status_code == 200, r.text


def nav(page: str) -> tuple[str, str]:
    """Where the navigation's Log and Browse lead."""
    log = re.search(r'<a href="([^"]+)" id="nav-log">', page)
    browse = re.search(r'<a href="([^"]+)" id="nav-browse">', page)
    assert log and browse, page[:1500]
    return html.unescape(log[1]), html.unescape(browse[1])


def switcher(page: str) -> tuple[list[str], str | None]:
    """The switcher's references, and the one it shows as selected."""
    form = re.search(r'<form method="get" action="/ui/switch"[^>]*>(.*?)</form>', page, re.S)
    assert form, page[:1500]
    options = re.findall(r'<option value="([^"]*)"( selected)?>', form[1])
    chosen = [html.unescape(v) for v, s in options if s]
    return [html.unescape(v) for v, _ in options], chosen[0] if chosen else None


def test_the_default_branch_offers_no_delete(server: Server, http: httpx.Client,
                                             ns: str) -> None:
    other = f"spare_{ns}"
    branch(http, other)
    ui = browser(server)
    refs = ok(ui.get("/ui"))
    assert f'href="/ui/refs/{other}/delete"' in refs
    assert 'href="/ui/refs/main/delete"' not in refs
    # Its confirmation page holds no form either: it says why.
    confirm = ui.get("/ui/refs/main/delete")
    assert confirm.status_code == 409 and "cannot be deleted" in confirm.text
    assert 'action="/ui/refs/main/delete"' not in confirm.text
    # A form sent anyway (a valid token, the head's hash): the catalog refuses.
    token = dict(hidden_fields(refs, "/ui/refs"))["csrf"]
    before = head(http, "main")
    r = ui.post("/ui/refs/main/delete", data={"csrf": token, "hash": before})
    assert r.status_code == 409 and "the default branch &#39;main&#39; cannot be deleted" in r.text
    assert head(http, "main") == before


# Every kind of keyword: of several words, join kinds, CASE, window frames,
# NULLS LAST; ``date`` is a column's name here, not a keyword.
SQL = """SELECT a.id, a.name AS date, count(*) AS n,
       CASE WHEN a.id > 1 THEN 'big' ELSE 'small' END AS bucket,
       row_number() OVER (PARTITION BY a.name ORDER BY a.id
                          ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS rn
FROM t a LEFT OUTER JOIN t b ON a.id = b.id CROSS JOIN t c
WHERE a.id IS NOT NULL
GROUP BY a.id, a.name
HAVING count(*) > 0
ORDER BY n DESC NULLS LAST"""


def test_every_sql_keyword_is_marked(server: Server, http: httpx.Client, ns: str) -> None:
    assert http.post(f"/iceberg/v1/namespaces/{ns}/tables",
                     json=sb.create_table("t")).status_code == 200
    view(http, ns, "kw", SQL)
    page = ok(http.get(f"/ui/object/main/{ns}.kw"))
    code = page.split('<pre class="sql"><code>')[1].split("</code></pre>")[0]
    assert html.unescape(re.sub(r"<[^>]+>", "", code)) == SQL  # every character kept
    marked = [re.sub(r"\s+", " ", k) for k in re.findall(r'<span class="kw">(.*?)</span>', code)]
    assert marked == [
        "SELECT", "AS", "AS", "CASE", "WHEN", "THEN", "ELSE", "END", "AS", "OVER",
        "PARTITION BY", "ORDER BY", "ROWS", "BETWEEN", "UNBOUNDED", "PRECEDING", "AND",
        "CURRENT", "ROW", "AS", "FROM", "LEFT", "OUTER", "JOIN", "ON", "CROSS", "JOIN",
        "WHERE", "IS", "NOT", "NULL", "GROUP BY", "HAVING", "ORDER BY", "DESC", "NULLS",
        "LAST"], marked
    assert '<span class="str">&#x27;big&#x27;</span>' in code or \
        "<span class=\"str\">'big'</span>" in code


# An instant shown as text: ISO-8601, and how many digits of a second.
_SHOWN = re.compile(r">(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.(\d+))?Z?)<")


def test_every_instant_is_shown_to_the_millisecond(server: Server, http: httpx.Client,
                                                   ns: str) -> None:
    t = server.catalog().create_table(f"{ns}.orders", SCHEMA)
    t.append(rows(2))
    view(http, ns, "v", "SELECT id FROM orders")
    body = sb.replace_view(http.get(f"/iceberg/v1/namespaces/{ns}/views/v").json()
                           ["metadata"]["view-uuid"], "SELECT name FROM orders")
    body["updates"][2]["view-version"]["default-namespace"] = [ns]
    assert http.post(f"/iceberg/v1/namespaces/{ns}/views/v", json=body).status_code == 200
    kept = f"ret_{ns}"
    branch(http, kept)
    for i in range(3):
        time.sleep(0.01)
        assert http.post(f"/iceberg/{kept}/v1/namespaces/{ns}/tables",
                         json=sb.create_table(f"r{i}")).status_code == 200
    assert http.put("/api/v2/retention", json={"policies": [
        {"refs": kept, "keepCommits": 1}]}).status_code == 200
    try:
        pages = {"references": "/ui", "log": "/ui/log/main",
                 "commit": f"/ui/commit/{head(http, 'main')}",
                 "view": f"/ui/object/main/{ns}.v", "table": f"/ui/object/main/{ns}.orders",
                 "retained log": f"/ui/log/{kept}"}
        for name, path in pages.items():
            page = ok(http.get(path))
            shown = _SHOWN.findall(page)
            assert shown, (name, page[:2000])
            # Each to the millisecond: three digits of a second, in UTC.
            assert all(s.endswith("Z") and len(ms) == 3 for s, ms in shown), (name, shown)
            # The whole instant stays in the element for whoever needs it.
            for whole, text in re.findall(r'<time datetime="([^"]+)"[^>]*>([^<]+)</time>', page):
                at = datetime.fromisoformat(whole)
                assert at - timedelta(microseconds=at.microsecond % 1000) == \
                    datetime.fromisoformat(text), (name, whole, text)
        refs = ok(http.get("/ui"))
        since = refs.split(f'>{kept}</a>')[1].split('<td class="since">')[1].split("</td>")[0]
        assert re.fullmatch(r'<time datetime="[^"]+"[^>]*>\d{4}-\d\d-\d\dT[\d:]{8}\.\d{3}Z</time>',
                            since), since
    finally:
        assert http.put("/api/v2/retention", json={"policies": []}).status_code == 200


def test_a_path_answers_the_same_with_or_without_its_slash(server: Server, http: httpx.Client,
                                                           ns: str) -> None:
    assert http.post(f"/iceberg/v1/namespaces/{ns}/tables",
                     json=sb.create_table("t")).status_code == 200
    ui = http_client(base_url=server.base, follow_redirects=True, timeout=30)
    same = {
        "/ui/log": "/ui/log/main", "/ui/log/": "/ui/log/main", "/ui/log/main/": "/ui/log/main",
        "/ui/tree": "/ui/tree/main", "/ui/tree/": "/ui/tree/main",
        "/ui/tree/main/": "/ui/tree/main", "/ui/": "/ui", "/ui/diff/": "/ui/diff",
        "/ui/merge/": "/ui/merge", "/ui/login/": "/ui/login", "/ui/restore/": "/ui/restore",
        "/ui/revert/": "/ui/revert", f"/ui/object/main/{ns}.t/": f"/ui/object/main/{ns}.t",
        "/ui/object/main/": "/ui/tree/main", "/ui/object/main": "/ui/tree/main"}
    for asked, meant in same.items():
        r = ui.get(asked)
        assert (r.status_code, r.url.path) == (200, meant), (asked, r.status_code, r.url)
        assert r.headers["content-type"].startswith("text/html"), asked
    # A query travels along.
    r = ui.get("/ui/log/main/", params={"author": "nobody-at-all"})
    assert str(r.url).endswith("/ui/log/main?author=nobody-at-all") and "No commits" in r.text
    assert "<h1>Log of main</h1>" in ok(ui.get("/ui/log"))
    # The stylesheet is still the stylesheet.
    css = ui.get("/ui/static/ui.css")
    assert css.status_code == 200 and css.headers["content-type"].startswith("text/css")


def test_not_found_says_what_to_try(server: Server, http: httpx.Client, ns: str) -> None:
    ui = http_client(base_url=server.base, timeout=30)
    general = ('href="/ui"', 'href="/ui/log/main" id="try-log"',
               'href="/ui/tree/main" id="try-browse"')
    for path in ("/ui/nonsense", "/ui/commit", "/ui/commit/", "/ui/object"):
        r = ui.get(path, follow_redirects=True)
        assert r.status_code == 404 and r.headers["content-type"].startswith("text/html"), path
        assert "<h1>Not found</h1>" in r.text and "What to try" in r.text, path
        assert all(link in r.text for link in general), (path, r.text)
    # A mistyped reference: the close names, and the references page.
    r = ui.get("/ui/log/mian")
    assert r.status_code == 404 and "reference &#39;mian&#39; does not exist" in r.text
    assert 'Did you mean <a href="/ui/switch?ref=main&amp;page=log">main</a>?' in r.text
    assert 'id="try-refs"' in r.text
    r = ui.get(f"/ui/object/mian/{ns}.t")
    assert f'<a href="/ui/switch?ref=main&amp;page=object&amp;key={ns}.t">main</a>' in r.text
    # A key that is not there: its namespace there, and its history there.
    r = ui.get(f"/ui/object/main/{ns}.nothing")
    assert r.status_code == 404 and "<h1>Not found</h1>" in r.text
    assert f'href="/ui/tree/main?prefix={ns}" id="try-browse-ns"' in r.text
    assert f'href="/ui/log/main?key={ns}.nothing" id="try-key-log"' in r.text
    # A hash that names no commit: the log, where the hashes are.
    r = ui.get(f"/ui/commit/{'ab' * 32}")
    assert r.status_code == 404 and 'href="/ui/log/main">log of main</a>' in r.text


def test_log_and_browse_stay_on_the_reference_and_a_switcher_is_everywhere(
        server: Server, http: httpx.Client, ns: str) -> None:
    dev = f"dev_{ns}"
    assert http.post(f"/iceberg/v1/namespaces/{ns}/tables",
                     json=sb.create_table("t")).status_code == 200
    branch(http, dev)
    assert http.post(f"/iceberg/{dev}/v1/namespaces/{ns}/tables",
                     json=sb.create_table("u")).status_code == 200
    ui = browser(server)
    log = ok(ui.get(f"/ui/log/{dev}"))
    assert nav(log) == (f"/ui/log/{dev}", f"/ui/tree/{dev}")
    commits = re.findall(r'href="(/ui/commit/[0-9a-f]{64}\?ref=[^"]+)"', log)
    assert commits and all(c.endswith(f"?ref={dev}") for c in commits), commits
    commit = ok(ui.get(html.unescape(commits[0])))
    assert nav(commit) == (f"/ui/log/{dev}", f"/ui/tree/{dev}")
    revert = re.search(r'<a id="revert" href="([^"]+)"', commit)
    assert revert and f"branch={dev}" in html.unescape(revert[1]), revert
    for path in (f"/ui/tree/{dev}", f"/ui/tree/{dev}?prefix={ns}", f"/ui/object/{dev}/{ns}.u"):
        assert nav(ok(ui.get(path))) == (f"/ui/log/{dev}", f"/ui/tree/{dev}"), path
    # The switcher: on every page, the page's reference selected.
    pages = {"/ui": "main", f"/ui/log/{dev}": dev, f"/ui/tree/{dev}": dev,
             f"/ui/object/{dev}/{ns}.u": dev, html.unescape(commits[0]): dev,
             "/ui/diff": "main", f"/ui/diff?from=main&to={dev}": "main",
             f"/ui/merge?from={dev}&into=main": "main", "/ui/restore": "main",
             "/ui/revert": "main", "/ui/login": "main", "/ui/logout": "main"}
    for path, shown in pages.items():
        names, chosen = switcher(ok(ui.get(path)))
        assert {"main", dev} <= set(names) and chosen == shown, (path, names, chosen)
    for path in ("/ui/log/nope", "/ui/nonsense"):
        assert switcher(ui.get(path).text)[1] == "main", path
    # Switching: the same kind of page on the other reference, filters kept.
    for asked, lands in (
            ({"ref": "main", "page": "log", "key": f"{ns}.t", "token": "x"},
             f"/ui/log/main?key={ns}.t"),
            ({"ref": "main", "page": "tree", "prefix": ns}, f"/ui/tree/main?prefix={ns}"),
            ({"ref": dev, "page": "object", "key": f"{ns}.t"}, f"/ui/object/{dev}/{ns}.t"),
            ({"ref": dev, "page": "elsewhere"}, f"/ui/tree/{dev}")):
        r = ui.get("/ui/switch", params=asked, follow_redirects=False)
        assert r.status_code == 303 and r.headers["location"] == lands, (asked, r.headers)
    # What the switcher sends from a filtered log keeps the filter.
    form = ok(ui.get(f"/ui/log/{dev}", params={"key": f"{ns}.u"}))
    assert f'<input type="hidden" name="page" value="log"><input type="hidden" name="key" ' \
           f'value="{ns}.u">' in form


def test_a_table_page_reads_its_snapshots(server: Server, http: httpx.Client, ns: str) -> None:
    cat = server.catalog()
    cat.create_table(f"{ns}.orders", SCHEMA)
    for n in (2, 3, 4000):
        cat.load_table(f"{ns}.orders").append(rows(n))
    view(http, ns, "near", "SELECT id FROM orders")
    view(http, ns, "far", "SELECT id FROM near")
    page = ok(http.get(f"/ui/object/main/{ns}.orders"))
    snaps = page.split('<table id="snapshots">')[1].split("</tbody></table>")[0]
    # The summary's figures as columns (none that no snapshot has), newest first.
    heads = re.findall(r'<th class="n" title="[^"]+">([^<]+)</th>', snaps)
    assert heads == ["Rows", "Added", "Files", "Size"], heads
    first = snaps.split("</tr>")[1]
    assert re.findall(r'<td class="n">([^<]+)</td>', first)[:3] == ["4,005", "4,000", "3"]
    # The whole summary stays, a property a row, behind a disclosure.
    assert "<details><summary>" in snaps and '<th scope="row">added-records</th><td>4000</td>' \
        in snaps
    # The row count over the snapshots: inline SVG drawn by the server, a
    # dot per snapshot, oldest first; no script, nothing fetched.
    chart = page.split('<svg class="chart" id="rows-chart"')[1].split("</svg>")[0]
    assert re.findall(r'data-rows="(\d+)"', chart) == ["2", "5", "4005"]
    assert "<polyline" in chart and "4,005" in chart
    assert "<script" not in page and "http://" not in chart and "https://" not in chart
    # What reads it, and how deep.
    readers = page.split('id="readers"')[1].split("</ul>")[0]
    assert f"{ns}.near</a> (ICEBERG_VIEW, depth 1)" in readers
    assert f"{ns}.far</a> (ICEBERG_VIEW, depth 2, through {ns}.near)" in readers


# -- grants --------------------------------------------------------------------------------
# 'etl' of the usual staff reads everything; here a reader of etl* only, and
# a reader of the namespace 'sales' only.
CLERKS: Grants = {"admin": STAFF["admin"], "etlonly": [("read", "etl*", ())],
          "sales": [("read", "*", ("sales",))]}
secured = server_fixture(BACKENDS, env={"SAPWOOD_AUTH": "1"},
                         prepare=lambda url: with_principals(url, CLERKS),
                         prefix="ui-wayfinding-auth")


@pytest.fixture(scope="module")
def people(secured: Server) -> People:
    return secured.people  # type: ignore[attr-defined, no-any-return]


def test_only_what_the_visitor_may_read_is_offered(secured: Server, people: People) -> None:
    admin = http_client(base_url=secured.base, headers=people.headers("admin"), timeout=30)
    for name in ("etl_daily", "secret_plan"):
        branch(admin, name)
    for ns in ("sales", "hr"):
        assert admin.post("/iceberg/v1/namespaces", json={"namespace": [ns]}).status_code == 200
    assert admin.post("/iceberg/v1/namespaces/sales/tables",
                      json=sb.create_table("t")).status_code == 200
    view(admin, "hr", "pay", "SELECT id FROM sales.t")

    boss = sign_in(secured, people.keys["admin"])
    names, _ = switcher(ok(boss.get("/ui/log/main")))
    assert {"main", "etl_daily", "secret_plan"} <= set(names)
    assert "Did you mean" in boss.get("/ui/log/secret_plam").text

    clerk = sign_in(secured, people.keys["etlonly"])
    page = ok(clerk.get("/ui/log/etl_daily"))
    names, chosen = switcher(page)
    assert names == ["etl_daily"] and chosen == "etl_daily", names
    assert "secret_plan" not in page and ">main<" not in page
    # A mistyped name close to a hidden one: nothing suggested, nothing named.
    for asked in ("secret_plam", "secret_plan"):
        r = clerk.get(f"/ui/log/{asked}")
        assert r.status_code == 404 and "Did you mean" not in r.text, asked
        assert "secret_plan" not in r.text.replace(asked, ""), asked
    hidden = clerk.get("/ui/log/secret_plan").text.replace("secret_plan", "X")
    missing = clerk.get("/ui/log/secret_plaX").text.replace("secret_plaX", "X")
    strip = re.compile(r'name="csrf" value="[^"]*"')
    assert strip.sub("", hidden) == strip.sub("", missing)  # the same as one that is not there

    # A reader of 'sales' only: the table's chart and readers name nothing of 'hr'.
    seller = sign_in(secured, people.keys["sales"])
    page = ok(seller.get("/ui/object/main/sales.t"))
    assert "hr.pay" not in page and "hr" not in re.findall(r"[a-z]+", page.split(
        'id="readers"')[1].split("</ul>")[0])
    assert switcher(page)[0] == ["main", "etl_daily", "secret_plan"]
