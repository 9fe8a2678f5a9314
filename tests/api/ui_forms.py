"""The UI's forms sent as a browser sends them: from the page that holds
the form (its hidden fields, its ``csrf`` token), with the browser's cookies
and its ``Origin`` (the server's own)."""

from __future__ import annotations

from html.parser import HTMLParser

import httpx

from tests.http import http_client
from tests.server import Server


def browser(server: Server) -> httpx.Client:
    """A client that keeps cookies and sends the server's origin, as a
    browser on the UI's pages does with every form."""
    return http_client(base_url=server.base, headers={"Origin": server.base},
                       follow_redirects=True, timeout=30)


class _Forms(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.forms: list[tuple[str, list[tuple[str, str]]]] = []
        self._open = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "form" and a.get("method") == "post":
            self.forms.append((a.get("action", ""), []))
            self._open = True
        elif tag == "input" and self._open and a.get("type") == "hidden" and "name" in a:
            self.forms[-1][1].append((a["name"], a.get("value", "")))

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._open = False


def hidden_fields(html: str, action: str) -> list[tuple[str, str]]:
    """The hidden fields of the page's POST form to ``action``."""
    parser = _Forms()
    parser.feed(html)
    found = [f for a, f in parser.forms if a == action]
    assert found, (action, [a for a, _ in parser.forms])
    return found[0]


def token(html: str, action: str) -> str:
    """The form's ``csrf`` token ("" if it has none)."""
    return dict(hidden_fields(html, action)).get("csrf", "")


def as_data(pairs: list[tuple[str, str]]) -> dict[str, list[str]]:
    """Form fields for httpx (a name may repeat: a merge's choices)."""
    out: dict[str, list[str]] = {}
    for k, v in pairs:
        out.setdefault(k, []).append(v)
    return out


def submit(ui: httpx.Client, page: str, action: str, **extra: str) -> httpx.Response:
    """Open ``page`` and send its form to ``action``: its hidden fields
    and ``extra`` (what the visitor types)."""
    got = ui.get(page)
    assert got.status_code == 200, (page, got.status_code, got.text[:500])
    return ui.post(action, data=as_data(hidden_fields(got.text, action) + list(extra.items())))


def sign_in(server: Server, key: str) -> httpx.Client:
    """A browser signed in with an API key through the sign-in form."""
    ui = browser(server)
    r = submit(ui, "/ui/login", "/ui/login", client_id=key)
    assert r.status_code == 200 and "Sign out" in r.text, r.text[:300]
    return ui
