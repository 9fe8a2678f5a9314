"""The web UI's pages over HTTP against a real server with a catalog built
here (a table with snapshots, a view with 4 versions by 2 authors, a branch):
each page answers 200 with what it should show; missing refs and keys get
error pages; a merge preview shows a conflict; a merge through the UI lands
(checked through the API)."""

from __future__ import annotations

import re
import time

import httpx

from tests.api import spark_bodies as sb
from tests.api.test_pyiceberg import SCHEMA, rows
from tests.api.test_versioning_http import V2, head
from tests.api.ui_forms import as_data, browser, hidden_fields, submit
from tests.http import http_client


def text(r: httpx.Response) -> str:
    assert r.status_code == 200, (r.status_code, r.text[:500])
    assert r.headers["content-type"].startswith("text/html")
    return r.text


def _view(http, ns: str, branch: str = "main") -> str:
    base = f"/iceberg/{branch}/v1/namespaces/{ns}"
    r = http.post(f"{base}/views", json=sb.create_view("daily", "SELECT 1 AS n"),
                  headers={"Sapwood-Commit-Author": "ana"})
    uuid = r.json()["metadata"]["view-uuid"]
    for i, who in ((2, "bo"), (3, "ana"), (4, "bo")):
        time.sleep(0.01)
        assert http.post(f"{base}/views/daily", json=sb.replace_view(uuid, f"SELECT {i} AS n"),
                         headers={"Sapwood-Commit-Author": who}).status_code == 200
    return uuid


def test_pages(server, store, http, ns: str) -> None:
    ui = browser(server)
    t = server.catalog().create_table(f"{ns}.orders", SCHEMA)
    t.append(rows(2))
    server.catalog().load_table(f"{ns}.orders").append(rows(1, start=5))
    _view(http, ns)
    # References, and a branch made through the form.
    refs = text(ui.get("/"))
    assert ">main<" in refs
    # An open catalog offers no sign-in, and its sign-in page says why.
    assert "Sign in" not in refs and "/ui/login" not in refs
    login = text(ui.get("/ui/login"))
    # No sign-in form (the navigation's branch switcher is a form of its own).
    assert "This catalog is open" in login and "<form" not in login.split('<main id="main">')[1]
    # A hash: 12 characters shown; all of it in the title and in the element.
    h = head(http, "main")
    assert (f'<code class="hash" title="{h}">{h[:12]}<span class="rest">{h[12:]}</span></code>'
            in refs)
    page = text(submit(ui, "/ui", "/ui/refs", name=f"ui_{ns}", type="BRANCH", source="main"))
    assert f"ui_{ns}" in page and store.get_reference(f"ui_{ns}").hash == head(http, "main")
    # Log with a key filter, and a commit's detail.
    log = text(ui.get("/ui/log/main", params={"key": f"{ns}.daily", "author": "bo"}))
    hashes = re.findall(r"/ui/commit/([0-9a-f]{64})", log)
    assert len(hashes) == 2 and "replace view" in log
    assert 'placeholder="YYYY-MM-DDThh:mm:ssZ"' in log and "2026-11-21" not in log
    commit = text(ui.get(f"/ui/commit/{hashes[0]}"))
    assert f"{ns}.daily" in commit and "changed" in commit and "ICEBERG_VIEW" in commit
    assert "version 3 → 4; SQL changed (spark)" in commit
    assert f'href="/ui/object/@{hashes[0]}/{ns}.daily"' in commit
    # Browse: the namespace, then its objects.
    assert ns in text(ui.get("/ui/tree/main"))
    listing = text(ui.get("/ui/tree/main", params={"prefix": ns}))
    assert f"{ns}.orders" in listing and f"{ns}.daily" in listing
    # A view over the table: its neighbourhood as a small graph, linked.
    body = sb.create_view("top", "SELECT id FROM orders")
    body["view-version"]["default-namespace"] = [ns]
    assert http.post(f"/iceberg/v1/namespaces/{ns}/views", json=body).status_code == 200
    top = text(ui.get(f"/ui/object/main/{ns}.top"))
    assert "<svg" in top and f'href="/ui/object/main/{ns}.orders"' in top
    assert f"{ns}.orders.id" in top  # column lineage
    # A table page: instants (not epoch milliseconds), yes/no, each snapshot's
    # summary as a small table, and the views that read the table.
    table = text(ui.get(f"/ui/object/main/{ns}.orders"))
    assert "Snapshots" in table and "append" in table and "metadata.json" in table
    snaps = table.split('id="snapshots"')[1].split("</table>\n")[0]
    assert len(re.findall(r'<time datetime="\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z">',
                          snaps)) == 2
    assert not re.search(r"\b1\d{12}\b", table)  # no epoch milliseconds anywhere
    assert "<td>no</td>" in table and "False" not in table
    assert '<th scope="row">added-records</th><td>1</td>' in snaps
    readers = table.split('id="readers"')[1].split("</ul>")[0]
    assert f'href="/ui/object/main/{ns}.top"' in readers
    # A view page: its timeline, and unless asked otherwise the two newest
    # versions side by side, words marked, no links in the diff.
    view = text(ui.get(f"/ui/object/main/{ns}.daily"))
    assert view.count("<tr><td>") >= 4 and "ana" in view and "bo" in view
    assert 'class="kw"' in view and "SELECT" in view  # highlighted SQL
    assert '<h2 id="compare">Version 3 → 4</h2>' in view
    diff = view.split('<div class="diff">')[1].split("</div>")[0]
    assert "<del>3</del>" in diff and "<ins>4</ins>" in diff and "<a " not in diff
    older = text(ui.get(f"/ui/object/main/{ns}.daily", params={"a": 1, "b": 4}))
    assert '<h2 id="compare">Version 1 → 4</h2>' in older and "<ins>4</ins>" in older
    same = text(ui.get(f"/ui/object/main/{ns}.daily", params={"a": 2, "b": 2}))
    assert "Versions 2 and 2 are identical" in same and 'class="diff"' not in same
    missing = ui.get(f"/ui/object/main/{ns}.daily", params={"a": 2, "b": 99})
    assert "Version 2 or 99 is not in this view" in text(missing)
    # As of an instant before the view existed: not there.
    first = store.log("main", page_size=100).items[-1].created_at.isoformat().replace(
        "+00:00", "Z")
    assert f"{ns}.daily" not in text(ui.get(f"/ui/tree/main*{first}", params={"prefix": ns}))
    # Diff of two refs.
    # Diff of two refs: each key linked, and what changed in it (the view was
    # made on main after the branch).
    diff = text(ui.get("/ui/diff", params={"from": f"ui_{ns}", "to": "main"}))
    assert (f'<a href="/ui/object/main/{ns}.top">{ns}.top</a></td><td>added</td>'
            f"<td>ICEBERG_VIEW</td><td>created at version 1</td>") in diff
    assert "No differences" in text(ui.get("/ui/diff", params={"from": "main", "to": "main"}))
    back = text(ui.get("/ui/diff", params={"from": "main", "to": f"ui_{ns}"}))
    assert (f'<a href="/ui/object/main/{ns}.top">{ns}.top</a></td><td>removed</td>'
            f"<td>ICEBERG_VIEW</td><td>dropped</td>") in back  # linked where it still is


def test_merge_preview_conflict_and_merge(server, store, http, ns: str) -> None:
    ui = browser(server)
    dev = f"dev_{ns}"
    store.create_reference(dev, source="main")
    base = f"/iceberg/{dev}/v1/namespaces/{ns}"
    assert http.post(f"{base}/tables", json=sb.create_table("fresh")).status_code == 200
    preview = text(ui.get("/ui/merge", params={"from": dev, "into": "main"}))
    assert f"{ns}.fresh" in preview and "APPLIED" in preview and "<button" in preview
    sent = dict(hidden_fields(preview, "/ui/merge"))
    assert (sent["from"], sent["into"], sent["expected"]) == (dev, "main", head(http, "main"))
    done = text(ui.post("/ui/merge", data=sent))
    assert "Merged: main is now at" in done
    assert http.get(f"/iceberg/v1/namespaces/{ns}/tables/fresh").status_code == 200
    # A conflict: both sides replace the same view differently.
    uuid = _view(http, ns)
    other = f"other_{ns}"
    store.create_reference(other, source="main")
    for branch, sql in (("main", "SELECT 10 AS n"), (other, "SELECT 20 AS n")):
        assert http.post(f"/iceberg/{branch}/v1/namespaces/{ns}/views/daily",
                         json=sb.replace_view(uuid, sql)).status_code == 200
    conflict = text(ui.get("/ui/merge", params={"from": other, "into": "main"}))
    assert "CONFLICT" in conflict and "different SQL" in conflict
    assert 'name="expected"' not in conflict  # no merge button for a conflict
    # How to resolve it: per key, force or drop, as a command and as a choice here.
    for mode in ("force", "drop"):
        assert f"sapwood merge {other} --into main --{mode} {ns}.daily</code>" in conflict
        assert (f'href="/ui/merge?from={other}&amp;into=main&amp;{mode}={ns}.daily"'
                in conflict)
    kept = text(ui.get("/ui/merge", params={"from": other, "into": "main", "drop": f"{ns}.daily"}))
    assert "DROPPED" in kept and f'name="drop" value="{ns}.daily"' in kept
    forced = text(ui.get("/ui/merge", params={"from": other, "into": "main",
                                              "force": f"{ns}.daily"}))
    assert "FORCED" in forced and f"--force {ns}.daily" in forced
    sent = hidden_fields(forced, "/ui/merge")
    assert ("force", f"{ns}.daily") in sent
    done = text(ui.post("/ui/merge", data=as_data(sent)))
    assert "Merged: main is now at" in done
    got = http.get(f"/iceberg/v1/namespaces/{ns}/views/daily").json()["metadata"]
    assert sb.current_sql(got) == "SELECT 20 AS n"  # the source's change, forced


def test_error_pages(server, http, ns: str) -> None:
    ui = http_client(base_url=server.base, timeout=30)
    r = ui.get("/ui/log/no_such_branch")
    assert r.status_code == 404 and "does not exist" in r.text and "<h1>Not found" in r.text
    assert "/ui/login" not in r.text  # an open catalog: nothing to sign in to
    r = ui.get(f"/ui/object/main/{ns}.nothing")
    assert r.status_code == 404 and "Not found" in r.text
    r = ui.get("/ui/static/ui.css")
    assert r.status_code == 200 and "font" in r.text
    assert ui.get("/").status_code == 307 and ui.get("/").headers["location"] == "/ui"


def test_delete_with_confirmation(server, store, http, ns: str) -> None:
    ui = browser(server)
    store.create_reference(f"gone_{ns}", source="main")
    confirm = text(ui.get(f"/ui/refs/gone_{ns}/delete"))
    sent = dict(hidden_fields(confirm, f"/ui/refs/gone_{ns}/delete"))
    assert sent["hash"] == head(http, f"gone_{ns}")
    text(ui.post(f"/ui/refs/gone_{ns}/delete", data=sent))
    assert http.get(f"{V2}/trees/gone_{ns}").status_code == 404
