"""A grant's reference glob is a pattern over names, never a name: refs
``?`` (any one-character name) covers the branch ``x`` but not "every
reference", which only ``*`` does — the glob ``?`` also matches the *name*
``*``, and the routes that need a privilege everywhere (grants, protections,
gc, fsck, webhooks of everyone) once asked exactly that (issue 34)."""

from __future__ import annotations

from catalog.access import create_key
from store import Store
from tests.fixtures import BACKENDS, server_fixture
from tests.http import http_client
from tests.server import Server


def _people(url: str) -> dict[str, str]:
    s = Store(url)
    try:
        keys = {}
        for name, refs in (("qmark", "?"), ("star", "*")):
            s.auth.create_principal(name)
            for privilege in ("read", "manage-grants"):
                s.auth.add_grant(name, privilege, refs, ())
            keys[name] = create_key(s, name)
        return keys
    finally:
        s.close()


server = server_fixture(BACKENDS, env={"SAPWOOD_AUTH": "1"}, prepare=_people,
                        prefix="globs")


def test_a_one_character_glob_is_not_every_reference(server: Server) -> None:
    keys = server.people  # type: ignore[attr-defined]
    with http_client(base_url=server.base, timeout=30) as http:
        def as_(who: str) -> dict[str, str]:
            return {"Authorization": f"Bearer {keys[who]}"}

        for method, path in (("GET", "/api/v2/auth/grants"), ("GET", "/api/v2/admin/fsck")):
            refused = http.request(method, path, headers=as_("qmark"))
            assert refused.status_code == 403, (path, refused.text)
            assert "every reference" in refused.text
            assert http.request(method, path, headers=as_("star")).status_code == 200, path
        # Nor may it hand itself more.
        grab = http.post("/api/v2/auth/grants", headers=as_("qmark"), json={
            "grantee": "qmark", "privilege": "read", "refs": "*"})
        assert grab.status_code == 403, grab.text
