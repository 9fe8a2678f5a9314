"""Principals, API keys, grants and protected references, in the catalog's own
database (so replicas on one PostgreSQL agree without a file to share).

These tables are small and read whole: a process keeps one ``AuthData``
snapshot and reloads it when ``auth_state.generation`` moved. Every change
bumps the generation in its own transaction, and the per-request check reads
that one row, so a revocation is seen by the next request on every replica.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from sqlalchemy import Connection, delete, insert, select, update

from core.auth import Grant, Policy, Privilege, check_principal_name, parse_privilege
from core.errors import InvalidInputError, NotFoundError
from core.refs import validate_ref_name
from store.db import Database
from store.schema import API_KEYS, AUTH_STATE, GRANTS, PRINCIPALS, PROTECTED_REFS


@dataclass(frozen=True, slots=True)
class PrincipalRecord:
    name: str
    roles: tuple[str, ...]
    created_us: int
    revoked_us: int | None

    @property
    def active(self) -> bool:
        return self.revoked_us is None


@dataclass(frozen=True, slots=True)
class KeyRecord:
    id: str
    principal: str
    secret_hash: str
    description: str
    created_us: int
    revoked_us: int | None


@dataclass(frozen=True, slots=True)
class GrantRecord:
    id: int
    grant: Grant


@dataclass(frozen=True, slots=True)
class AuthData:
    """Everything auth needs, as of one generation."""

    generation: int
    signing_key: str
    principals: dict[str, PrincipalRecord] = field(default_factory=dict)
    keys: dict[str, KeyRecord] = field(default_factory=dict)
    grants: tuple[GrantRecord, ...] = ()
    policy: Policy = field(default_factory=Policy)

    def live_key(self, key_id: str) -> KeyRecord | None:
        """The key, if it and its principal are both unrevoked."""
        k = self.keys.get(key_id)
        if k is None or k.revoked_us is not None:
            return None
        p = self.principals.get(k.principal)
        return k if p is not None and p.active else None


class AuthStore:
    def __init__(self, db: Database, clock: Callable[[], int]) -> None:
        self.db = db
        self.clock = clock
        self._sql_generation = "SELECT generation FROM auth_state WHERE id = 1"
        self._cached: AuthData | None = None
        self._checked_at: int | None = None  # the change token when last checked
        self._lock = threading.Lock()

    # -- reading -------------------------------------------------------------------
    def generation(self) -> int:
        return int(self.db.raw_read(self._sql_generation, ())[0][0])

    def current(self) -> AuthData:
        """The snapshot as of now: one small read, plus a reload when anything
        changed since the last one. Not even the read while nothing at all
        was committed since the snapshot was checked (SQLite; store.data_version)."""
        token = self.db.change_token()
        cached = self._cached
        if token is not None and cached is not None and token == self._checked_at:
            return cached
        gen = self.generation()
        with self._lock:
            if self._cached is None or self._cached.generation != gen:
                self._cached = self._load()
            # The token taken before the generation was read: a change in
            # between makes the next token differ.
            self._checked_at = token
            return self._cached

    def _load(self) -> AuthData:
        with self.db.read() as conn:
            gen, signing = conn.execute(
                select(AUTH_STATE.c.generation, AUTH_STATE.c.signing_key)).one()
            principals = {r.name: PrincipalRecord(r.name, tuple(json.loads(r.roles)),
                                                  r.created_us, r.revoked_us)
                          for r in conn.execute(select(PRINCIPALS))}
            keys = {r.id: KeyRecord(r.id, r.principal, r.secret_hash, r.description,
                                    r.created_us, r.revoked_us)
                    for r in conn.execute(select(API_KEYS))}
            grants = tuple(GrantRecord(r.id, Grant(r.grantee, Privilege(r.privilege), r.refs,
                                                   tuple(json.loads(r.namespace))))
                           for r in conn.execute(select(GRANTS).order_by(GRANTS.c.id)))
            protected = [r.pattern for r in conn.execute(
                select(PROTECTED_REFS.c.pattern).order_by(PROTECTED_REFS.c.pattern))]
        return AuthData(int(gen), signing, principals, keys, grants,
                        Policy.of((g.grant for g in grants), protected))

    # -- changes (each one transaction that bumps the generation) -----------------------
    def _change(self, conn: Connection) -> None:
        conn.execute(update(AUTH_STATE).where(AUTH_STATE.c.id == 1).values(
            generation=AUTH_STATE.c.generation + 1))

    def create_principal(self, name: str, roles: list[str] | tuple[str, ...] = ()) -> None:
        check_principal_name(name)
        for r in roles:
            check_principal_name(r)
        with self.db.write() as conn:
            if conn.execute(select(PRINCIPALS.c.name).where(PRINCIPALS.c.name == name)).first():
                raise InvalidInputError(f"Principal {name!r} exists already (revoked "
                                        "principals keep their name)")
            conn.execute(insert(PRINCIPALS).values(name=name, roles=json.dumps(sorted(roles)),
                                                   created_us=self.clock(), revoked_us=None))
            self._change(conn)

    def revoke_principal(self, name: str) -> None:
        """The principal and every key it holds stop working."""
        now = self.clock()
        with self.db.write() as conn:
            done = conn.execute(update(PRINCIPALS).where(
                PRINCIPALS.c.name == name, PRINCIPALS.c.revoked_us.is_(None)).values(
                revoked_us=now)).rowcount
            if not done:
                raise NotFoundError(f"No active principal {name!r}")
            conn.execute(update(API_KEYS).where(
                API_KEYS.c.principal == name, API_KEYS.c.revoked_us.is_(None)).values(
                revoked_us=now))
            self._change(conn)

    def create_key(self, key_id: str, principal: str, secret_hash: str,
                   description: str = "") -> None:
        with self.db.write() as conn:
            row = conn.execute(select(PRINCIPALS.c.revoked_us).where(
                PRINCIPALS.c.name == principal)).first()
            if row is None or row.revoked_us is not None:
                raise NotFoundError(f"No active principal {principal!r}: create it first "
                                    "(sapwood principal create)")
            conn.execute(insert(API_KEYS).values(
                id=key_id, principal=principal, secret_hash=secret_hash,
                description=description, created_us=self.clock(), revoked_us=None))
            self._change(conn)

    def revoke_key(self, key_id: str) -> None:
        with self.db.write() as conn:
            done = conn.execute(update(API_KEYS).where(
                API_KEYS.c.id == key_id, API_KEYS.c.revoked_us.is_(None)).values(
                revoked_us=self.clock())).rowcount
            if not done:
                raise NotFoundError(f"No active key {key_id!r}")
            self._change(conn)

    def add_grant(self, grantee: str, privilege: str, refs: str = "*",
                  namespace: tuple[str, ...] = ()) -> int:
        name = grantee.removeprefix("role:")
        check_principal_name(name)
        priv = parse_privilege(privilege)
        _check_ref_glob(refs)
        with self.db.write() as conn:
            gid = conn.execute(insert(GRANTS).values(
                grantee=grantee, privilege=priv.value, refs=refs,
                namespace=json.dumps(list(namespace)), created_us=self.clock())
            ).inserted_primary_key[0]  # type: ignore[index]
            self._change(conn)
        return int(gid)

    def revoke_grant(self, grant_id: int) -> None:
        with self.db.write() as conn:
            if not conn.execute(delete(GRANTS).where(GRANTS.c.id == grant_id)).rowcount:
                raise NotFoundError(f"No grant {grant_id}")
            self._change(conn)

    def protect(self, pattern: str) -> None:
        _check_ref_glob(pattern)
        with self.db.write() as conn:
            if conn.execute(select(PROTECTED_REFS.c.pattern).where(
                    PROTECTED_REFS.c.pattern == pattern)).first():
                return
            conn.execute(insert(PROTECTED_REFS).values(pattern=pattern,
                                                       created_us=self.clock()))
            self._change(conn)

    def unprotect(self, pattern: str) -> None:
        with self.db.write() as conn:
            if not conn.execute(delete(PROTECTED_REFS).where(
                    PROTECTED_REFS.c.pattern == pattern)).rowcount:
                raise NotFoundError(f"Reference pattern {pattern!r} is not protected")
            self._change(conn)


def _check_ref_glob(pattern: str) -> None:
    """A reference name, or one with '*' / '?' wildcards in it."""
    if pattern == "*":
        return
    plain = pattern.replace("*", "x").replace("?", "x")
    try:
        validate_ref_name(plain if plain[0].isalpha() else "x" + plain)
    except Exception:
        raise InvalidInputError(f"Invalid reference pattern {pattern!r}: a reference name, "
                                "optionally with '*' and '?' wildcards") from None
