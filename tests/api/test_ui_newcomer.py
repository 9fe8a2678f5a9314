"""The UI where a newcomer's trial found it terse (issue 44, the trial's
defects 8 and 9; docs/ui.md): a merge preview of a reference that does not
exist suggests the close names, each a link to the preview with it (either
side); a page that needs signing in says so to a browser user, not the
API's instruction for scripts. Real servers, plain HTTP as a browser sends
it."""

from __future__ import annotations

import httpx

from tests.api.auth_setup import set_up
from tests.api.test_versioning_http import head
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
