"""The UI where a newcomer's trial found it terse (issue 44, the trial's
defects 8, 9 and 13; docs/ui.md): a merge preview of a reference that does
not exist suggests the close names, each a link to the preview with it
(either side); a page that needs signing in says so to a browser user, not
the API's instruction for scripts; a table or view page for a key not there
suggests the close keys and, for a dropped one, the views that still read
it, as the CLI does; a revert on a branch without the commit keeps its form;
the graph's lines point the way data flows. Real servers, plain HTTP as a
browser sends it."""

from __future__ import annotations

import httpx

from tests.api import spark_bodies as sb
from tests.api.auth_setup import set_up
from tests.api.test_rest_http import V1
from tests.api.test_versioning_http import head
from tests.api.test_view_analysis_http import make
from tests.api.ui_forms import browser
from tests.fixtures import server_fixture
from tests.server import Server

secured = server_fixture(env={"SAPWOOD_AUTH": "1"},
                         prepare=lambda url: set_up(url, protect_main=False), prefix="ui-new")


def test_a_mistyped_reference_in_the_merge_preview_suggests_the_preview_with_it(
        server: Server, http: httpx.Client) -> None:
    r = http.post("/api/v2/trees", params={"name": "develop", "type": "BRANCH"},
                  json={"type": "BRANCH", "name": "main", "hash": head(http, "main")})
    assert r.status_code in (200, 409), r.text
    ui = browser(server)
    page = ui.get("/ui/merge", params={"from": "devlop", "into": "main", "force": "a.b"})
    assert page.status_code == 404, page.text[:300]
    assert "reference &#39;devlop&#39; does not exist" in page.text
    assert ('Did you mean <a href="/ui/merge?from=develop&amp;into=main&amp;force=a.b">'
            'develop</a>?') in page.text, page.text
    page = ui.get("/ui/merge", params={"from": "develop", "into": "mian"})
    assert page.status_code == 404, page.text[:300]
    assert 'Did you mean <a href="/ui/merge?from=develop&amp;into=main">main</a>' in page.text


def test_sign_in_needed_speaks_to_a_browser_user(secured: Server) -> None:
    page = browser(secured).get("/ui/log/main")
    assert page.status_code == 401, page.text[:300]
    assert "Sign in needed" in page.text
    assert ("This catalog needs you to sign in: use an API key (ID:SECRET, made by sapwood key "
            "create) or a client id and secret.") in page.text, page.text
    assert "Authorization" not in page.text and "/oauth/tokens" not in page.text
    assert '<a href="/ui/login?next=' in page.text


def test_a_missing_keys_page_suggests_close_keys_and_names_its_readers(
        server: Server, http: httpx.Client, ns: str) -> None:
    assert http.post(f"{V1}/namespaces/{ns}/tables", json=sb.create_table("orders")
                     ).status_code == 200
    make(http, ns, "revenue", "SELECT id FROM orders")
    make(http, ns, "top", "SELECT id FROM revenue")
    assert http.delete(f"{V1}/namespaces/{ns}/views/revenue").status_code == 204
    ui = browser(server)
    page = ui.get(f"/ui/object/main/{ns}.ordrs")
    assert page.status_code == 404, page.text[:300]
    assert (f'Did you mean <a href="/ui/object/main/{ns}.orders">{ns}.orders</a>?'
            in page.text), page.text
    page = ui.get(f"/ui/object/main/{ns}.revenue")
    assert page.status_code == 404, page.text[:300]
    assert (f'1 view reads it still: <a href="/ui/object/main/{ns}.top">{ns}.top</a>.'
            in page.text), page.text
    assert 'id="did-you-mean-key"' not in page.text


def test_a_revert_on_a_branch_without_the_commit_keeps_the_form(server: Server,
                                                                http: httpx.Client,
                                                                ns: str) -> None:
    side = f"side_{ns}"[:60]
    r = http.post("/api/v2/trees", params={"name": side, "type": "BRANCH"},
                  json={"type": "BRANCH", "name": "main", "hash": head(http, "main")})
    assert r.status_code == 200, r.text
    assert http.post(f"/iceberg/{side}/v1/namespaces/{ns}/tables", json=sb.create_table("t")
                     ).status_code == 200
    made = head(http, side)
    ui = browser(server)
    # The commit page's link without ?ref= asks main, which does not hold it.
    page = ui.get("/ui/revert", params={"commit": made, "branch": "main"})
    assert page.status_code == 400, page.text[:300]
    assert "is not in the history of main: name the branch that holds it" in page.text
    assert '<input name="branch" value="main" required>' in page.text
    page = ui.get("/ui/revert", params={"commit": made, "branch": side})
    assert page.status_code == 200 and 'id="confirm"' in page.text, page.text[:300]


def test_the_graphs_lines_point_to_the_reader(server: Server, http: httpx.Client,
                                              ns: str) -> None:
    assert http.post(f"{V1}/namespaces/{ns}/tables", json=sb.create_table("orders")
                     ).status_code == 200
    make(http, ns, "revenue", "SELECT id FROM orders")
    make(http, ns, "top", "SELECT id FROM revenue")
    page = browser(server).get(f"/ui/object/main/{ns}.revenue").text
    assert '<marker id="sw-arrow"' in page
    for a, b in (("orders", "revenue"), ("revenue", "top")):
        assert (f'data-from="{ns}.{a}" data-to="{ns}.{b}" marker-end="url(#sw-arrow)"/>'
                in page), page


def test_an_invalid_views_lineage_says_when_it_was_recorded(server: Server,
                                                             http: httpx.Client,
                                                             ns: str) -> None:
    assert http.post(f"{V1}/namespaces/{ns}/tables", json=sb.create_table("orders")
                     ).status_code == 200
    make(http, ns, "revenue", "SELECT id FROM orders")
    ui = browser(server)
    assert 'id="lineage-then"' not in ui.get(f"/ui/object/main/{ns}.revenue").text
    assert http.delete(f"{V1}/namespaces/{ns}/tables/orders").status_code == 204
    page = ui.get(f"/ui/object/main/{ns}.revenue").text
    assert "this view does not hold here" in page, page
    assert ("As recorded when this view's SQL was analysed: it does not hold here now"
            in page), page
