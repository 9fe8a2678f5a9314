"""Issue 34, item 6: the UI's forms refuse cross-site requests. Every POST
must come from the UI's own page: ``Origin`` (or, without it, ``Referer``)
the origin the server is served at, and the page's ``csrf`` token, bound to
the visitor's session (or, before signing in, to the browser). Each form —
create and delete a reference, restore, revert, merge, sign in, sign out —
is sent from a foreign origin, without a token, with a wrong one and with
another visitor's: 403, a page saying why, and nothing changed (checked
through the API); then the page's own form works. On an open catalog and
with authentication on, on SQLite and PostgreSQL."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
from fastapi.routing import APIRoute

from tests.api import spark_bodies as sb
from tests.api.auth_setup import People, set_up
from tests.api.test_auth_routes import SAMPLE, routes
from tests.api.ui_forms import as_data, browser, hidden_fields, sign_in, submit, token
from tests.fixtures import server_fixture
from tests.http import http_client
from tests.server import Server, serving

AUTH = [pytest.param(("auth", "sqlite"), id="auth-sqlite"),
        pytest.param(("auth", "postgres"), id="auth-postgres", marks=pytest.mark.postgres)]
VARIANTS = [pytest.param(("open", "sqlite"), id="open-sqlite"),
            pytest.param(("open", "postgres"), id="open-postgres", marks=pytest.mark.postgres),
            *AUTH]
# Sign-in and sign-out: only where there is something to sign in to.
auth_only = pytest.mark.parametrize("server", AUTH, indirect=True)


def _auth(request: pytest.FixtureRequest, base: Path) -> dict[str, str]:
    # Open on a catalog with principals: said out loud (sapwood serve --no-auth).
    return {"SAPWOOD_AUTH": "1" if request.param[0] == "auth" else "0"}


server = server_fixture(VARIANTS, prepare=lambda url: set_up(url, protect_main=False),
                        environment=_auth, backend=lambda p: p[1], prefix="ui-csrf")
_names = itertools.count()
REFUSED = "Nothing was changed."


def auth_on(server: Server) -> bool:
    return server.extra_env.get("SAPWOOD_AUTH") == "1"


@pytest.fixture(scope="module")
def api(server: Server) -> Iterator[httpx.Client]:
    """The admin, through the API (on an open catalog the header is ignored)."""
    people: People = server.people  # type: ignore[attr-defined]
    with http_client(base_url=server.base, headers=people.headers("admin"),
                     timeout=30) as client:
        yield client


def visitor(server: Server) -> httpx.Client:
    """A browser on the UI: signed in as the admin, or on an open catalog
    one that has opened a page (and holds its per-browser cookie)."""
    if auth_on(server):
        people: People = server.people  # type: ignore[attr-defined]
        return sign_in(server, people.keys["admin"])
    ui = browser(server)
    assert ui.get("/ui").status_code == 200
    return ui


def head(api: httpx.Client, ref: str) -> str:
    r = api.get(f"/api/v2/trees/{ref}")
    assert r.status_code == 200, r.text
    return str(r.json()["reference"]["hash"])


def branch(api: httpx.Client, name: str, source: str = "main") -> None:
    r = api.post("/api/v2/trees", params={"name": name, "type": "BRANCH"},
                 json={"type": "BRANCH", "name": source, "hash": head(api, source)})
    assert r.status_code == 200, r.text


def post(ui: httpx.Client, action: str, fields: list[tuple[str, str]],
         headers: dict[str, str | None]) -> httpx.Response:
    """A POST of ``fields`` with the browser's cookies, its headers changed
    by ``headers`` (None: left out)."""
    req = ui.build_request("POST", action, data=as_data(fields))
    for name, value in headers.items():
        if value is None:
            req.headers.pop(name, None)
        else:
            req.headers[name] = value
    return ui.send(req, follow_redirects=True)


@dataclass
class Form:
    """One of the UI's forms: the page that holds it, where it goes, what the
    visitor types, and whether it took effect (asked through the API)."""

    page: str
    action: str
    changed: Callable[[], bool]
    typed: dict[str, str] = field(default_factory=dict)


def create_reference(api: httpx.Client) -> Form:
    name = f"made{next(_names)}"
    return Form("/ui", "/ui/refs", lambda: api.get(f"/api/v2/trees/{name}").status_code == 200,
                {"name": name, "type": "BRANCH", "source": "main"})


def delete_reference(api: httpx.Client) -> Form:
    name = f"doomed{next(_names)}"
    branch(api, name)
    return Form(f"/ui/refs/{name}/delete", f"/ui/refs/{name}/delete",
                lambda: api.get(f"/api/v2/trees/{name}").status_code == 404)


def restore(api: httpx.Client) -> Form:
    b, ns = f"rs{next(_names)}", f"rs{next(_names)}"
    branch(api, b)
    base = f"/iceberg/{b}/v1/namespaces"
    assert api.post(base, json={"namespace": [ns]}).status_code == 200
    made = api.post(f"{base}/{ns}/views", json=sb.create_view("v", "SELECT 1 AS n"))
    assert made.status_code == 200, made.text
    first = head(api, b)
    assert api.post(f"{base}/{ns}/views/v", json=sb.replace_view(
        made.json()["metadata"]["view-uuid"], "SELECT 2 AS n")).status_code == 200
    before = head(api, b)
    return Form(f"/ui/restore?key={ns}.v&source=@{first}&branch={b}", "/ui/restore",
                lambda: head(api, b) != before)


def revert(api: httpx.Client) -> Form:
    b, ns = f"rv{next(_names)}", f"rv{next(_names)}"
    branch(api, b)
    assert api.post(f"/iceberg/{b}/v1/namespaces", json={"namespace": [ns]}).status_code == 200
    made = head(api, b)
    return Form(f"/ui/revert?commit={made}&branch={b}", "/ui/revert",
                lambda: head(api, b) != made)


def merge(api: httpx.Client) -> Form:
    into, frm, ns = f"mi{next(_names)}", f"mf{next(_names)}", f"mg{next(_names)}"
    branch(api, into)
    branch(api, frm, into)
    assert api.post(f"/iceberg/{frm}/v1/namespaces", json={"namespace": [ns]}).status_code \
        == 200
    before = head(api, into)
    return Form(f"/ui/merge?from={frm}&into={into}", "/ui/merge",
                lambda: head(api, into) != before)


FORMS = [create_reference, delete_reference, restore, revert, merge]


def other_port(server: Server) -> int:
    return server.port + 1 if server.port < 65535 else server.port - 1


def forgeries(server: Server, own: list[tuple[str, str]], foreign_token: str,
              ) -> list[tuple[str, list[tuple[str, str]], dict[str, str | None], str]]:
    """(what, fields, headers, what the refusal says) for each forged send
    of a form whose page gave ``own``; ``foreign_token`` is another
    visitor's token for the same form."""
    other = f"http://127.0.0.1:{other_port(server)}"
    rest = [(k, v) for k, v in own if k != "csrf"]
    right = dict(own).get("csrf") or "x"
    wrong = right[:-1] + ("A" if right[-1] != "A" else "B")
    origin = "not from this catalog"
    no_token = "security token is missing or is not this browser"
    return [
        ("another port", own, {"Origin": other}, origin),
        ("another host name", own, {"Origin": f"http://localhost:{server.port}"}, origin),
        ("https", own, {"Origin": f"https://127.0.0.1:{server.port}"}, origin),
        ("an opaque origin", own, {"Origin": "null"}, origin),
        ("a foreign referer", own, {"Origin": None, "Referer": f"{other}/attack"}, origin),
        ("no origin, no referer", own, {"Origin": None}, "without an Origin or Referer"),
        ("no token", rest, {}, no_token),
        ("an empty token", [*rest, ("csrf", "")], {}, no_token),
        ("a wrong token", [*rest, ("csrf", wrong)], {}, no_token),
        ("not ascii", [*rest, ("csrf", "é" * len(right))], {}, no_token),
        ("another visitor's token", [*rest, ("csrf", foreign_token)], {}, no_token),
    ]


def refused(r: httpx.Response, why: str) -> None:
    assert r.status_code == 403, (r.status_code, r.text[:500])
    assert "<h1>Form refused</h1>" in r.text and why in r.text and REFUSED in r.text, r.text


@pytest.mark.parametrize("make", FORMS, ids=[f.__name__ for f in FORMS])
def test_a_form_counts_only_from_its_own_page(server: Server, api: httpx.Client,
                                              make: Callable[[httpx.Client], Form]) -> None:
    ui, someone = visitor(server), visitor(server)
    form = make(api)
    page = ui.get(form.page)
    assert page.status_code == 200, page.text[:500]
    own = hidden_fields(page.text, form.action) + list(form.typed.items())
    theirs = token(someone.get(form.page).text, form.action)
    for what, fields, headers, why in forgeries(server, own, theirs):
        r = post(ui, form.action, fields, headers)
        try:
            refused(r, why)
        except AssertionError as e:
            raise AssertionError(f"{form.action} with {what}: {e}") from None
        assert not form.changed(), f"{form.action} with {what} took effect"
    # The page's own form, from its own origin, with its token.
    done = ui.post(form.action, data=as_data(own))
    assert done.status_code == 200, (done.status_code, done.text[:500])
    assert form.changed()
    assert theirs != dict(own)["csrf"]  # each visitor's own


def test_without_origin_the_referer_decides(server: Server, api: httpx.Client) -> None:
    ui = visitor(server)
    form = create_reference(api)
    own = hidden_fields(ui.get("/ui").text, "/ui/refs") + list(form.typed.items())
    other = f"http://127.0.0.1:{other_port(server)}/ui"
    refused(post(ui, "/ui/refs", own, {"Origin": None, "Referer": other}),
            "not from this catalog")
    assert not form.changed()
    r = post(ui, "/ui/refs", own, {"Origin": None, "Referer": f"{server.base}/ui"})
    assert r.status_code == 200 and form.changed(), r.text[:500]


@auth_only
def test_sign_in_only_from_the_sign_in_page(server: Server) -> None:
    """Login CSRF: another site must not sign the visitor's browser in (as
    the attacker, say, so that what the visitor does lands in the attacker's
    name). The sign-in form's token is bound to the browser."""
    people: People = server.people  # type: ignore[attr-defined]
    ui = browser(server)
    own = [*hidden_fields(ui.get("/ui/login").text, "/ui/login"),
           ("client_id", people.keys["etl"])]
    theirs = token(browser(server).get("/ui/login").text, "/ui/login")
    for what, fields, headers, why in forgeries(server, own, theirs):
        r = post(ui, "/ui/login", fields, headers)
        refused(r, why)
        assert "sapwood_ui_token" not in ui.cookies, what
        assert ui.get("/ui/log/main").status_code == 401, what
    r = ui.post("/ui/login", data=as_data(own))
    assert r.status_code == 200 and "Sign out" in r.text
    assert theirs != dict(own)["csrf"]
    assert ui.get("/ui/log/main").status_code == 200


@auth_only
def test_sign_out_is_a_form_too(server: Server) -> None:
    people: People = server.people  # type: ignore[attr-defined]
    ui, someone = sign_in(server, people.keys["etl"]), sign_in(server, people.keys["etl"])
    # A link (a GET) shows the form and changes nothing.
    page = ui.get("/ui/logout")
    assert page.status_code == 200 and ui.get("/ui/log/main").status_code == 200
    own = hidden_fields(page.text, "/ui/logout")
    theirs = token(someone.get("/ui/logout").text, "/ui/logout")
    for what, fields, headers, why in forgeries(server, own, theirs):
        refused(post(ui, "/ui/logout", fields, headers), why)
        assert ui.get("/ui/log/main").status_code == 200, what
    # The navigation's button on any page.
    out = submit(ui, "/ui", "/ui/logout")  # back to the references, which ask to sign in
    assert out.status_code == 401 and "Sign in" in out.text
    assert ui.get("/ui/log/main").status_code == 401


@auth_only
def test_a_token_is_bound_to_its_session(server: Server) -> None:
    """Signing in again makes a new session, and the old page's token no
    longer counts; every page of one session carries the same one."""
    people: People = server.people  # type: ignore[attr-defined]
    ui = sign_in(server, people.keys["etl"])
    first = token(ui.get("/ui").text, "/ui/refs")
    assert token(ui.get("/ui/login").text, "/ui/login") == first
    again = submit(ui, "/ui/login", "/ui/login", client_id=people.keys["etl"])
    assert again.status_code == 200
    name = f"etl_stale{next(_names)}"  # etl may create it: only the token stands in the way
    r = ui.post("/ui/refs", data={"csrf": first, "name": name, "source": "main"})
    refused(r, "security token")
    assert ui.get(f"/ui/log/{name}").status_code == 404
    assert submit(ui, "/ui", "/ui/refs", name=name, source="main").status_code == 200
    assert ui.get(f"/ui/log/{name}").status_code == 200


def test_every_post_of_the_ui_is_checked(server: Server) -> None:
    """From the application's route table: every POST route of the UI
    refuses a form from another origin, and one without a token."""
    posts = [r for r in routes() if isinstance(r, APIRoute) and r.path.startswith("/ui")
             and "POST" in (r.methods or ())]
    assert {r.name for r in posts} >= {"ui_create_reference", "ui_delete_reference",
                                      "ui_restore", "ui_revert", "ui_merge", "ui_login",
                                      "ui_logout"}
    ui = browser(server)
    good = token(ui.get("/ui/login").text if auth_on(server) else ui.get("/ui").text,
                 "/ui/login" if auth_on(server) else "/ui/refs")
    for r in posts:
        path = re.sub(r"{(\w+)(?::path)?}", lambda m: SAMPLE[m.group(1)], r.path)
        refused(post(ui, path, [("csrf", good)], {"Origin": f"http://127.0.0.1:"
                                                            f"{other_port(server)}"}),
                "not from this catalog")
        refused(post(ui, path, [], {}), "security token")
        many = post(ui, path, [("f", "x")] * 1001, {})
        assert many.status_code == 400 and "more than 1000 fields" in many.text, path


def test_a_token_verifies_on_another_replica(server: Server, api: httpx.Client,
                                             tmp_path: Path) -> None:
    """Two servers on one database: a page served by one, its form sent to
    the other (no secret of a process's own)."""
    with serving(server.database_url, tmp_path, dict(server.extra_env)) as replica:
        ui = visitor(server)
        form = create_reference(api)
        own = hidden_fields(ui.get("/ui").text, "/ui/refs") + list(form.typed.items())
        other = http_client(base_url=replica.base, headers={"Origin": replica.base},
                            cookies=ui.cookies, follow_redirects=True, timeout=30)
        wrong = [(k, v) for k, v in own if k != "csrf"] + [("csrf", "A" * 43)]
        refused(other.post("/ui/refs", data=as_data(wrong)), "security token")
        assert not form.changed()
        r = other.post("/ui/refs", data=as_data(own))
        assert r.status_code == 200 and form.changed(), r.text[:500]
