"""The UI with authentication on: it holds no powers of its own. Without a
token a page asks the visitor to sign in; an API key signs in (exchanged at
the token endpoint, kept in an HttpOnly cookie); each principal sees and
does only what the API lets it."""

from __future__ import annotations

import httpx

from tests.api.auth_setup import People, set_up
from tests.api.ui_forms import browser, submit
from tests.fixtures import server_fixture
from tests.http import http_client
from tests.server import Server

server = server_fixture(env={"SAPWOOD_AUTH": "1"}, prepare=set_up, prefix="ui-auth")


def signed_in(server: Server, who: str) -> httpx.Client:
    people: People = server.people  # type: ignore[attr-defined]
    ui = browser(server)
    r = submit(ui, "/ui/login", "/ui/login", client_id=people.keys[who])
    assert r.status_code == 200 and "Sign out" in r.text, r.text[:300]
    cookie = ui.cookies.jar
    assert any(c.name == "sapwood_ui_token" and c.has_nonstandard_attr("HttpOnly")
               for c in cookie)
    return ui


def test_no_token_asks_to_sign_in(server: Server) -> None:
    ui = http_client(base_url=server.base, timeout=30)
    r = ui.get("/ui/log/main", params={"author": "ana"})
    assert r.status_code == 401 and "Sign in" in r.text and "/ui/login" in r.text
    # The page's own link to sign in, coming back to this page.
    assert '<a href="/ui/login?next=/ui/log/main%3Fauthor%3Dana">Sign in</a> to see' in r.text
    bad = submit(browser(server), "/ui/login", "/ui/login", client_id="sw_nope:wrong")
    assert bad.status_code == 401 and "Not signed in" in bad.text


def test_each_principal_sees_what_the_api_allows(server: Server) -> None:
    reader = signed_in(server, "reader")
    assert ">main<" in reader.get("/ui").text
    assert reader.get("/ui/log/main").status_code == 200
    # Reading is allowed; creating a branch is not.
    r = submit(reader, "/ui", "/ui/refs", name="x_reader", type="BRANCH", source="main")
    assert r.status_code == 403 and "Not allowed" in r.text
    nobody = signed_in(server, "nobody")
    # A reference it may not read is one it has not heard of.
    assert nobody.get("/ui/log/main").status_code == 404
    etl = signed_in(server, "etl")
    r = submit(etl, "/ui", "/ui/refs", name="etl_ui", type="BRANCH", source="main")
    assert r.status_code == 200 and "etl_ui" in r.text
    # Signing out forgets the token.
    assert "Sign in" in submit(etl, "/ui/logout", "/ui/logout").text
    assert etl.get("/ui/log/main").status_code == 401
