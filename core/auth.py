"""Who may do what: principals, privileges, grants and protected references.

Pure rules: the store keeps grants as data, the API layer asks these
functions. A grant gives one privilege to a principal or a role, on the
references a glob matches (``main``, ``etl/*``, ``*``) and, optionally, only
below a namespace prefix (``sales`` covers ``sales`` and ``sales.eu.orders``).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from functools import lru_cache

from core.errors import InvalidInputError

ROLE_PREFIX = "role:"
_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,127}")
_NAME_RULE = ("1 to 128 characters: letters, digits and '.', '_', '@', '-', starting with "
              "a letter or digit")


class Privilege(StrEnum):
    READ = "read"
    WRITE = "write"
    CREATE_REFERENCE = "create-reference"
    DELETE_REFERENCE = "delete-reference"
    MERGE_INTO = "merge-into"
    MANAGE_GRANTS = "manage-grants"
    # Lets a caller name another commit author than itself.
    IMPERSONATE = "impersonate"


def parse_privilege(text: str) -> Privilege:
    try:
        return Privilege(text)
    except ValueError:
        known = ", ".join(p.value for p in Privilege)
        raise InvalidInputError(f"Unknown privilege {text!r}: expected one of {known}") from None


def check_principal_name(name: str) -> str:
    if not isinstance(name, str) or not _NAME_RE.fullmatch(name):
        raise InvalidInputError(f"Invalid principal or role name {name!r}: {_NAME_RULE}")
    return name


@dataclass(frozen=True, slots=True)
class Principal:
    """An authenticated caller: its name and the roles it holds."""

    name: str
    roles: frozenset[str] = frozenset()
    # The key a token was minted from (None for OIDC tokens): revoking the
    # key ends its tokens.
    key_id: str | None = None

    @property
    def grantees(self) -> tuple[str, ...]:
        return (self.name, *(ROLE_PREFIX + r for r in sorted(self.roles)))


@dataclass(frozen=True, slots=True)
class Grant:
    grantee: str  # a principal's name, or "role:<name>"
    privilege: Privilege
    refs: str = "*"  # glob over reference names
    namespace: tuple[str, ...] = ()  # () covers every key

    def covers_ref(self, ref: str) -> bool:
        return _ref_glob(self.refs).fullmatch(ref) is not None

    def covers_every_ref(self) -> bool:
        """Whether the glob matches every name (``*``, ``**``), as opposed
        to matching the name ``*`` (``?``, ``[*]``)."""
        return bool(self.refs) and set(self.refs) == {"*"}

    def covers_key(self, key: tuple[str, ...] | None) -> bool:
        """A grant below a namespace covers only keys under it; ``None`` asks
        about the whole reference (history, merges), which only a grant with
        no namespace covers."""
        if not self.namespace:
            return True
        return key is not None and key[:len(self.namespace)] == self.namespace

    def describe(self) -> str:
        where = f" namespace {'.'.join(self.namespace)}" if self.namespace else ""
        return f"{self.privilege.value} on refs {self.refs}{where} to {self.grantee}"


@lru_cache(maxsize=1024)
def _ref_glob(pattern: str) -> re.Pattern[str]:
    # fnmatch's '*' also crosses '/', so 'etl/*' covers 'etl/a/b' as well.
    return re.compile(fnmatch.translate(pattern))


@dataclass(frozen=True, slots=True)
class Policy:
    """Every grant and every protected-reference pattern, as of one moment."""

    grants: tuple[Grant, ...] = ()
    protected: tuple[str, ...] = ()
    _by_grantee: dict[str, tuple[Grant, ...]] = field(default_factory=dict, compare=False)

    @staticmethod
    def of(grants: Iterable[Grant], protected: Iterable[str]) -> Policy:
        gs = tuple(grants)
        by: dict[str, list[Grant]] = {}
        for g in gs:
            by.setdefault(g.grantee, []).append(g)
        return Policy(gs, tuple(protected), {k: tuple(v) for k, v in by.items()})

    def grants_of(self, who: Principal) -> list[Grant]:
        return [g for name in who.grantees for g in self._by_grantee.get(name, ())]

    def allows(self, who: Principal, privilege: Privilege, ref: str,
               key: tuple[str, ...] | None = None) -> bool:
        return any(g.privilege is privilege and g.covers_ref(ref) and g.covers_key(key)
                   for name in who.grantees for g in self._by_grantee.get(name, ()))

    def allows_everywhere(self, who: Principal, privilege: Privilege) -> bool:
        """A grant of ``privilege`` on every reference (refs ``*``) and every key.
        Not ``allows(…, "*")``: the glob ``?`` matches the *name* ``*``."""
        return any(g.privilege is privilege and g.covers_every_ref() and not g.namespace
                   for name in who.grantees for g in self._by_grantee.get(name, ()))

    def reaches(self, who: Principal, privilege: Privilege, ref: str) -> bool:
        """Whether any grant of ``privilege`` reaches into ``ref``, whatever
        its namespace (a listing then shows what those grants cover)."""
        return any(g.privilege is privilege and g.covers_ref(ref)
                   for name in who.grantees for g in self._by_grantee.get(name, ()))

    def readable_key(self, who: Principal, ref: str, key: tuple[str, ...]) -> bool:
        """A listing shows a key when it is readable or is a namespace on the
        way to something readable (so a grant on ``sales.eu`` lists ``sales``)."""
        for name in who.grantees:
            for g in self._by_grantee.get(name, ()):
                if g.privilege is Privilege.READ and g.covers_ref(ref) and (
                        g.covers_key(key) or g.namespace[:len(key)] == key):
                    return True
        return False

    def is_protected(self, ref: str) -> bool:
        return any(_ref_glob(p).fullmatch(ref) for p in self.protected)


ALL_PRIVILEGES = tuple(Privilege)
