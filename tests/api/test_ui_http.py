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
    ui = httpx.Client(base_url=server.base, follow_redirects=True, timeout=30)
    t = server.catalog().create_table(f"{ns}.orders", SCHEMA)
    t.append(rows(2))
    server.catalog().load_table(f"{ns}.orders").append(rows(1, start=5))
    _view(http, ns)
    # References, and a branch made through the form.
    assert ">main<" in text(ui.get("/"))
    page = text(ui.post("/ui/refs", data={"name": f"ui_{ns}", "type": "BRANCH",
                                          "source": "main"}))
    assert f"ui_{ns}" in page and store.get_reference(f"ui_{ns}").hash == head(http, "main")
    # Log with a key filter, and a commit's detail.
    log = text(ui.get("/ui/log/main", params={"key": f"{ns}.daily", "author": "bo"}))
    hashes = re.findall(r"/ui/commit/([0-9a-f]{64})", log)
    assert len(hashes) == 2 and "replace view" in log
    commit = text(ui.get(f"/ui/commit/{hashes[0]}"))
    assert f"{ns}.daily" in commit and "changed" in commit and "ICEBERG_VIEW" in commit
    # Browse: the namespace, then its objects.
    assert ns in text(ui.get("/ui/tree/main"))
    listing = text(ui.get("/ui/tree/main", params={"prefix": ns}))
    assert f"{ns}.orders" in listing and f"{ns}.daily" in listing
    # A table page and a view page with its timeline and a side-by-side diff.
    table = text(ui.get(f"/ui/object/main/{ns}.orders"))
    assert "Snapshots" in table and "append" in table and "metadata.json" in table
    view = text(ui.get(f"/ui/object/main/{ns}.daily", params={"a": 2, "b": 4}))
    assert view.count("<tr><td>") >= 4 and "ana" in view and "bo" in view
    assert 'class="kw"' in view and "SELECT" in view  # highlighted SQL
    assert "diff_chg" in view or "diff_sub" in view  # the changed line is marked
    # A view over the table: its neighbourhood as a small graph, linked.
    body = sb.create_view("top", "SELECT id FROM orders")
    body["view-version"]["default-namespace"] = [ns]
    assert http.post(f"/iceberg/v1/namespaces/{ns}/views", json=body).status_code == 200
    top = text(ui.get(f"/ui/object/main/{ns}.top"))
    assert "<svg" in top and f'href="/ui/object/main/{ns}.orders"' in top
    assert f"{ns}.orders.id" in top  # column lineage
    # As of an instant before the view existed: not there.
    first = store.log("main", page_size=100).items[-1].created_at.isoformat().replace(
        "+00:00", "Z")
    assert f"{ns}.daily" not in text(ui.get(f"/ui/tree/main*{first}", params={"prefix": ns}))
    # Diff of two refs.
    diff = text(ui.get("/ui/diff", params={"from": f"ui_{ns}", "to": "main"}))
    assert f"{ns}.top</td><td>added" in diff  # made on main after the branch
    assert "No differences" in text(ui.get("/ui/diff", params={"from": "main", "to": "main"}))


def test_merge_preview_conflict_and_merge(server, store, http, ns: str) -> None:
    ui = httpx.Client(base_url=server.base, follow_redirects=True, timeout=30)
    dev = f"dev_{ns}"
    store.create_reference(dev, source="main")
    base = f"/iceberg/{dev}/v1/namespaces/{ns}"
    assert http.post(f"{base}/tables", json=sb.create_table("fresh")).status_code == 200
    preview = text(ui.get("/ui/merge", params={"from": dev, "into": "main"}))
    assert f"{ns}.fresh" in preview and "APPLIED" in preview and "<button" in preview
    expected = re.search(r'name="expected" value="([0-9a-f]+)"', preview).group(1)  # type: ignore[union-attr]
    done = text(ui.post("/ui/merge", data={"from": dev, "into": "main", "expected": expected}))
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


def test_error_pages(server, http, ns: str) -> None:
    ui = httpx.Client(base_url=server.base, timeout=30)
    r = ui.get("/ui/log/no_such_branch")
    assert r.status_code == 404 and "does not exist" in r.text and "<h1>Not found" in r.text
    r = ui.get(f"/ui/object/main/{ns}.nothing")
    assert r.status_code == 404 and "Not found" in r.text
    r = ui.get("/ui/static/ui.css")
    assert r.status_code == 200 and "font" in r.text
    assert ui.get("/").status_code == 307 and ui.get("/").headers["location"] == "/ui"


def test_delete_with_confirmation(server, store, http, ns: str) -> None:
    ui = httpx.Client(base_url=server.base, follow_redirects=True, timeout=30)
    store.create_reference(f"gone_{ns}", source="main")
    confirm = text(ui.get(f"/ui/refs/gone_{ns}/delete"))
    h = re.search(r'name="hash" value="([0-9a-f]+)"', confirm).group(1)  # type: ignore[union-attr]
    text(ui.post(f"/ui/refs/gone_{ns}/delete", data={"hash": h}))
    assert http.get(f"{V2}/trees/gone_{ns}").status_code == 404
