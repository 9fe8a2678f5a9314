"""The reference grammar (Nessie's, plus git's ``^n``).

    spec     := name [ '@' hash ] part*  |  '@' hash part*
    part     := '~' [n]     n-th first-parent ancestor (n >= 0, default 1)
              | '^' [n]     n-th parent (1 = first, 2 = merged-in; default 1)
              | '*' instant ISO-8601 with a zone, or epoch milliseconds

``name*T`` (the instant straight after a bare name) is the head the ref had at
T, from the reflog. Anywhere else, ``*T`` walks first parents back to the newest
commit created at or before T. Parts apply left to right. A hash may be a
unique prefix of at least 8 hex characters.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache

from core.errors import (
    InvalidHashError,
    InvalidInstantError,
    InvalidRefError,
    ReadOnlyReferenceError,
)
from core.instants import format_instant, parse_instant

MIN_HASH_PREFIX = 8
HASH_LENGTH = 64
# No history is this deep; a larger ``~n``/``^n`` would overflow the
# database's integers (SQLite: 64 bits) where the walk is done in SQL.
MAX_ANCESTORS = 10**9

_NAME_RE = re.compile(r"[A-Za-z](?:(?:(?!\.\.)[A-Za-z0-9./_-])*[A-Za-z0-9_-])?")
_HEX_RE = re.compile(r"[0-9a-fA-F]+")
_NAME_RULE = ("names start with a letter, hold only letters, digits and '.', '/', '_', '-', "
              "have no '..' and do not end with '.' or '/'")


@dataclass(frozen=True, slots=True)
class Ancestor:
    n: int

    def __str__(self) -> str:
        return f"~{self.n}"


@dataclass(frozen=True, slots=True)
class Parent:
    n: int

    def __str__(self) -> str:
        return f"^{self.n}"


@dataclass(frozen=True, slots=True)
class AtInstant:
    at: datetime

    def __str__(self) -> str:
        return f"*{format_instant(self.at)}"


Part = Ancestor | Parent | AtInstant


@dataclass(frozen=True, slots=True)
class RefSpec:
    name: str | None
    hash: str | None = None
    parts: tuple[Part, ...] = ()

    @property
    def is_plain(self) -> bool:
        """A bare name: the only form a write may address."""
        return self.name is not None and self.hash is None and not self.parts

    @property
    def reflog_instant(self) -> datetime | None:
        """The instant of ``name*T`` (reflog lookup), if that is how it starts."""
        if self.name is not None and self.hash is None and self.parts and isinstance(
                self.parts[0], AtInstant):
            return self.parts[0].at
        return None

    def __str__(self) -> str:
        return format_ref(self)


def branch_to_write(spec: RefSpec, is_tag: bool = False) -> str:
    """The one rule for what a write (commit, merge, transplant, Iceberg write)
    may address: a bare branch name. Returns that name; anything else is
    read-only, and the message says why."""
    if spec.is_plain and not is_tag:
        return spec.name  # type: ignore[return-value]
    why = ("it is a tag" if is_tag and spec.is_plain else
           "it pins a commit (a hash, an ancestor or an instant), which is read-only")
    raise ReadOnlyReferenceError(
        f"Cannot write to reference '{spec}': {why}; writes need a branch name")


def validate_ref_name(name: str) -> str:
    if not isinstance(name, str) or not name:
        raise InvalidRefError("reference name is empty")
    if not _NAME_RE.fullmatch(name):
        raise invalid_name(name)
    return name


def invalid_name(name: str) -> InvalidRefError:
    """The refusal of ``name`` as a reference name; a bare hash (a digit
    first, as 10 in 16 are) is told how a commit is named, as one that
    starts with a letter is when no reference has its name (cli.missing)."""
    hint = ""
    if _HEX_RE.fullmatch(name) and MIN_HASH_PREFIX <= len(name) <= HASH_LENGTH:
        hint = f" (a commit is named @{name}, or NAME@{name})"
    return InvalidRefError(f"invalid reference name {name!r}: {_NAME_RULE}{hint}")


def normalize_hash(text: str, *, context: str | None = None, full: bool = False) -> str:
    where = f" in {context!r}" if context else ""
    if not text:
        raise InvalidHashError(f"missing commit hash{where}")
    if not _HEX_RE.fullmatch(text):
        raise InvalidHashError(f"invalid commit hash {text!r}{where}: only hex digits allowed")
    lo = MIN_HASH_PREFIX if not full else HASH_LENGTH
    if not lo <= len(text) <= HASH_LENGTH:
        want = f"{HASH_LENGTH}" if full else f"{MIN_HASH_PREFIX} to {HASH_LENGTH}"
        raise InvalidHashError(
            f"invalid commit hash {text!r}{where}: expected {want} hex characters, "
            f"got {len(text)}")
    return text.lower()


def parse_ref(text: str) -> RefSpec:
    if not isinstance(text, str) or not text:
        raise InvalidRefError("reference is empty")
    return _parse_ref(text)


@lru_cache(maxsize=4096)
def _parse_ref(text: str) -> RefSpec:
    # Specs are immutable and every API call parses one: parse each text once.
    i = 0
    name: str | None = None
    if text[0] != "@":
        m = _NAME_RE.match(text)
        end = m.end() if m else 0
        # The name runs to the first grammar character; anything else is a bad name.
        stop = _first_of(text, "@~^*", 0)
        if not m or end != stop:
            raise invalid_name(text[:stop])
        name = text[:end]
        i = end
    hash_: str | None = None
    if i < len(text) and text[i] == "@":
        stop = _first_of(text, "~^*", i + 1)
        raw = text[i + 1:stop]
        if not raw:
            raise InvalidHashError(f"missing commit hash after '@' in {text!r}")
        hash_ = normalize_hash(raw, context=text)
        i = stop
    parts: list[Part] = []
    while i < len(text):
        c = text[i]
        if c in "~^":
            j = i + 1
            while j < len(text) and text[j].isdigit():
                j += 1
            digits = text[i + 1:j]
            if j < len(text) and text[j] not in "~^*":
                bad = text[i + 1:_first_of(text, "~^*", i + 1)]
                what = "ancestor count" if c == "~" else "parent number"
                raise InvalidRefError(
                    f"invalid {what} {bad!r} after '{c}' in {text!r}: expected a whole number")
            # Count the digits first: int() of thousands of digits is itself refused.
            if len(digits) > len(str(MAX_ANCESTORS)) or int(digits or 1) > MAX_ANCESTORS:
                raise InvalidRefError(f"{'ancestor count' if c == '~' else 'parent number'} "
                                      f"after '{c}' is at most {MAX_ANCESTORS} in {text[:100]!r}")
            n = int(digits) if digits else 1
            if c == "^" and n < 1:
                raise InvalidRefError(f"parent number must be 1 or more in {text!r}, got {n}")
            parts.append(Ancestor(n) if c == "~" else Parent(n))
            i = j
        elif c == "*":
            stop = _first_of(text, "~^*", i + 1)
            raw = text[i + 1:stop]
            if not raw:
                raise InvalidInstantError(f"missing instant after '*' in {text!r}")
            try:
                parts.append(AtInstant(parse_instant(raw)))
            except InvalidInstantError as e:
                raise InvalidInstantError(f"{e.message} (in reference {text!r})") from None
            i = stop
        else:
            raise InvalidRefError(f"unexpected {c!r} at offset {i} in reference {text!r}")
    if name is None and hash_ is None:
        raise InvalidRefError(f"reference {text!r} names neither a ref nor a hash")
    return RefSpec(name, hash_, tuple(parts))


def format_ref(spec: RefSpec) -> str:
    out = spec.name or ""
    if spec.hash:
        out += "@" + spec.hash
    return out + "".join(str(p) for p in spec.parts)


def _first_of(text: str, chars: str, start: int) -> int:
    for j in range(start, len(text)):
        if text[j] in chars:
            return j
    return len(text)
