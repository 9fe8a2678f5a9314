"""The objects a request names: a table or view at a ref (and instant), a
namespace from its levels. Nessie's ``name@ref`` lets a name carry its own
reference (``v@dev``, ``v@main#<hash>``, ``v@main#<instant>``)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from core.errors import InvalidKeyError, bad_request
from core.instants import to_micros
from core.keys import ContentKey, check_new_key
from core.refs import AtInstant, RefSpec, parse_ref


def namespace_from_levels(levels: list[str]) -> ContentKey:
    try:
        key = ContentKey(levels)
        check_new_key(key)
        return key
    except InvalidKeyError as e:
        raise bad_request(f"Invalid namespace {levels!r}: {e.message}") from None


def dotted(key: ContentKey) -> str:
    return ".".join(key.elements)


@dataclass(frozen=True, slots=True)
class Target:
    """One table or view as a request names it: where to read it, and when."""

    ref: RefSpec
    key: ContentKey
    # Set when the ref pins an instant: views are rebuilt as of it.
    instant_ms: int | None
    # Whether the name carried its own ref (Nessie's ``name@ref#hash``).
    pinned: bool

    @property
    def name(self) -> str:
        return dotted(self.key)


@lru_cache(maxsize=4096)
def target(ref: RefSpec, namespace: ContentKey, name: str) -> Target:
    """``name`` may carry its own reference, Nessie style: ``v@dev``,
    ``v@main#<hash>`` or ``v@main#<instant>`` (and any ref spec after the @)."""
    own: RefSpec | None = None
    if "@" in name:
        name, _, text = name.partition("@")
        if not name or not text:
            raise bad_request(f"Invalid table or view reference {name + '@' + text!r}: "
                              "expected name@ref, name@ref#hash or name@ref#instant")
        if "#" in text:
            branch, _, at = text.partition("#")
            text = f"{branch}@{at}" if _is_hash(at) else f"{branch}*{at}"
        own = parse_ref(text)
    spec = own or ref
    key = ContentKey([*namespace.elements, name]) if name else None
    if key is None:
        raise bad_request("Invalid identifier: empty name")
    # Refused here, before a create writes any file, not only at the commit.
    check_new_key(key)
    return Target(spec, key, instant_of(spec), own is not None)


def instant_of(spec: RefSpec) -> int | None:
    """The last instant a ref spec pins, in epoch ms, if any."""
    at = next((p.at for p in reversed(spec.parts) if isinstance(p, AtInstant)), None)
    return None if at is None else to_micros(at) // 1000


def _is_hash(text: str) -> bool:
    """After ``#``: a hash (or a prefix of 8+ hex digits), else an instant. Digits
    alone are epoch milliseconds, as the README allows (``v@main#1763712000000``)
    unless they make a whole 64-digit hash; a hash prefix made of digits only
    is named with ``@`` instead (``v@main@12345678``)."""
    if len(text) < 8 or not all(c in "0123456789abcdefABCDEF" for c in text):
        return False
    return not text.isdigit() or len(text) == 64
