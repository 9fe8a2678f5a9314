"""Who may use the catalog, as data in its own database: what the API's
guard reads and the grants routes change (``Access``: the principals, keys,
grants and protected references of one moment, ``AuthData``), API keys
(the credential is returned once; only a salted hash is kept), the starter
configuration ``sapwood init --auth`` writes, and the JSON of the grants."""

from __future__ import annotations

from typing import Any

from core.auth import Privilege
from core.secrets import hash_secret, new_key
from store import Store
from store.auth import AuthData as AuthData


class Access:
    """The auth data (store.auth: one snapshot per generation, reloaded when
    any change bumped it), and the changes the grants routes make; each
    change answers the data as it is after it."""

    def __init__(self, store: Store) -> None:
        self.auth = store.auth

    def current(self) -> AuthData:
        return self.auth.current()

    def signing_key(self) -> str:
        """The catalog's signing key (made by migration 0003, never changed,
        the same for every replica): tokens, page tokens, the UI's forms."""
        return self.auth.current().signing_key

    def add_grant(self, grantee: str, privilege: str, refs: str = "*",
                  namespace: tuple[str, ...] = ()) -> AuthData:
        self.auth.add_grant(grantee, privilege, refs, namespace)
        return self.auth.current()

    def revoke_grant(self, grant_id: int) -> AuthData:
        self.auth.revoke_grant(grant_id)
        return self.auth.current()

    def protect(self, pattern: str) -> AuthData:
        self.auth.protect(pattern)
        return self.auth.current()

    def unprotect(self, pattern: str) -> AuthData:
        self.auth.unprotect(pattern)
        return self.auth.current()


def create_key(store: Store, principal: str, description: str = "") -> str:
    """A new key for ``principal``; returns the credential ``id:secret``."""
    key_id, secret = new_key()
    store.auth.create_key(key_id, principal, hash_secret(secret), description)
    return f"{key_id}:{secret}"


def starter(store: Store) -> str | None:
    """The starter configuration: role ``admin`` holds every privilege on every
    reference, principal ``admin`` holds that role, ``main`` is protected.
    Returns the admin's credential (None when principals exist already)."""
    auth = store.auth
    if auth.current().principals:
        return None
    for p in Privilege:
        auth.add_grant("role:admin", p.value, "*")
    auth.create_principal("admin", ["admin"])
    auth.protect("main")
    return create_key(store, "admin", "created by sapwood init --auth")


def active_principals(url: str) -> list[str]:
    """The names of the unrevoked principals of the catalog at ``url``: one
    set up for authentication (``sapwood serve`` will not serve it open
    unless told to)."""
    store = Store(url)
    try:
        return sorted(n for n, p in store.auth.current().principals.items() if p.active)
    finally:
        store.close()


def grants_json(data: AuthData) -> dict[str, Any]:
    """The grants and the protected references, as ``GET /api/v2/auth/grants``
    answers and ``sapwood grant list --json`` prints them."""
    return {"grants": [{"id": g.id, "grantee": g.grant.grantee,
                        "privilege": g.grant.privilege.value, "refs": g.grant.refs,
                        "namespace": list(g.grant.namespace)} for g in data.grants],
            "protected": list(data.policy.protected)}
