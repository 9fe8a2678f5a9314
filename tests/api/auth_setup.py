"""Principals, keys and grants for the auth tests, written straight into the
catalog's database (as ``sapwood principal|key|grant`` do)."""

from __future__ import annotations

from dataclasses import dataclass, field

import httpx

from core.secrets import hash_secret, new_key
from store import Store

# One secret per principal name and test process, hashed once: each
# catalog's key for it gets an id of its own but shares that secret and its
# hash. A key's scrypt hash costs 50-75 ms of CPU, and the suite provisions
# a few hundred keys; the path that makes a key (catalog.access.create_key,
# `sapwood key create`) has tests of its own.
_SECRETS: dict[str, tuple[str, str]] = {}


def provision_key(store: Store, principal: str) -> str:
    """A new key for ``principal`` in ``store``'s catalog: ``id:secret``."""
    if principal not in _SECRETS:
        secret = new_key()[1]
        _SECRETS[principal] = (secret, hash_secret(secret))
    secret, hashed = _SECRETS[principal]
    key_id = new_key()[0]
    store.auth.create_key(key_id, principal, hashed)
    return f"{key_id}:{secret}"


@dataclass
class People:
    """Credentials (``id:secret``) by principal name."""

    url: str
    keys: dict[str, str] = field(default_factory=dict)

    def headers(self, who: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.keys[who]}"}

    def token(self, http: httpx.Client, who: str, base: str = "/iceberg/v1") -> str:
        key_id, _, secret = self.keys[who].partition(":")
        r = http.post(f"{base}/oauth/tokens", data={
            "grant_type": "client_credentials", "client_id": key_id,
            "client_secret": secret, "scope": "catalog"})
        assert r.status_code == 200, r.text
        return str(r.json()["access_token"])


# Who holds what: (roles, [(grantee, privilege, refs, namespace)]).
STAFF: dict[str, list[tuple[str, str, tuple[str, ...]]]] = {
    # Reads everything, writes and branches only on etl*.
    "etl": [("read", "*", ()), ("write", "etl*", ()), ("create-reference", "etl*", ())],
    # Reads everything, merges into main.
    "publisher": [("read", "*", ()), ("merge-into", "main", ())],
    # Reads everything, nothing else.
    "reader": [("read", "*", ())],
    # Reads and writes only below the namespace 'sales', on every branch.
    "sales": [("read", "*", ("sales",)), ("write", "*", ("sales",))],
    # Authenticated, with no grant at all.
    "nobody": [],
    # Every privilege.
    "admin": [(p, "*", ()) for p in ("read", "write", "create-reference", "delete-reference",
                                     "merge-into", "manage-grants", "impersonate")],
}


Grants = dict[str, list[tuple[str, str, tuple[str, ...]]]]


def with_principals(url: str, staff: Grants, protect: tuple[str, ...] = ()) -> People:
    """Each principal of ``staff`` with its grants and a key, on the catalog
    at ``url``; ``protect`` the references only merges may move."""
    s = Store(url)
    try:
        people = People(url)
        for name, grants in staff.items():
            s.auth.create_principal(name)
            for privilege, refs, ns in grants:
                s.auth.add_grant(name, privilege, refs, ns)
            people.keys[name] = provision_key(s, name)
        for ref in protect:
            s.auth.protect(ref)
    finally:
        s.close()
    return people


def set_up(url: str, protect_main: bool = True) -> People:
    return with_principals(url, STAFF, ("main",) if protect_main else ())
