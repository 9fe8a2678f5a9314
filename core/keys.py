"""Content keys and their Nessie v2 path encoding.

A key is a non-empty tuple of elements: namespace elements, then the name.
Path form (Nessie spec 2.2): elements joined by ``.``. From the first element
that holds one of ``. / \\ %`` on, escaping is on: that element is prefixed by a
``.`` marker, elements are joined by ``..`` and the four characters are written
``._``, ``.{``, ``.}``, ``.[``. Legacy separators (0x1D, 0x1F, 0x00 standing for
a ``.`` inside an element) are still read.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import GetCoreSchemaHandler
from pydantic_core import core_schema

from core.errors import InvalidKeyError

MAX_ELEMENTS = 20
MAX_LENGTH = 500
SEP = "\x00"  # internal separator: sorts below every allowed character

_ESCAPE = {".": "._", "/": ".{", "\\": ".}", "%": ".["}
_UNESCAPE = {"_": ".", "{": "/", "}": "\\", "[": "%"}
_LEGACY_DOTS = {"\x1d", "\x1f", "\x00"}


def ancestor_internals(internal: str) -> list[str]:
    out = []
    i = internal.find(SEP)
    while i >= 0:
        out.append(internal[:i])
        i = internal.find(SEP, i + 1)
    return out


class ContentKey:
    """Immutable, hashable and ordered like its tuple of elements."""

    __slots__ = ("_elements", "_internal")

    def __init__(self, elements: Iterable[str]) -> None:
        els = tuple(elements)
        _validate(els)
        self._elements = els
        self._internal = SEP.join(els)

    @classmethod
    def of(cls, *elements: str) -> ContentKey:
        return cls(elements)

    @classmethod
    def from_internal(cls, internal: str) -> ContentKey:
        # Trusted input from the store's own index; skip re-validation.
        key = object.__new__(cls)
        key._elements = tuple(internal.split(SEP))
        key._internal = internal
        return key

    @classmethod
    def parse(cls, path: str) -> ContentKey:
        """Parse the path form (escaped or legacy); the inverse of `to_path_string`."""
        return cls(_parse_path(path))

    @property
    def elements(self) -> tuple[str, ...]:
        return self._elements

    @property
    def internal(self) -> str:
        return self._internal

    @property
    def name(self) -> str:
        return self._elements[-1]

    @property
    def namespace(self) -> ContentKey | None:
        return ContentKey.from_internal(SEP.join(self._elements[:-1])) if len(
            self._elements) > 1 else None

    @property
    def parent(self) -> ContentKey:
        """The namespace of a key that has one (a table's, a view's): an
        InvalidKeyError for a key at the top."""
        if len(self._elements) < 2:
            raise InvalidKeyError(f"Key {self} has no namespace")
        return ContentKey.from_internal(SEP.join(self._elements[:-1]))

    def ancestors(self) -> list[ContentKey]:
        """The namespace keys above this key, outermost first."""
        return [ContentKey.from_internal(SEP.join(self._elements[:i]))
                for i in range(1, len(self._elements))]

    def ancestor_internals(self) -> list[str]:
        """Internal forms of the namespaces above this key, outermost first."""
        return ancestor_internals(self._internal)

    def child_prefix(self) -> str:
        """Internal-form prefix shared by every key below this one."""
        return self._internal + SEP

    def is_below(self, other: ContentKey) -> bool:
        return self._internal.startswith(other.child_prefix())

    def to_path_string(self) -> str:
        return _to_path(self._elements)

    def __str__(self) -> str:
        return ".".join(self._elements)

    def __repr__(self) -> str:
        return f"ContentKey({list(self._elements)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ContentKey) and self._internal == other._internal

    def __lt__(self, other: ContentKey) -> bool:
        return self._internal < other._internal

    def __le__(self, other: ContentKey) -> bool:
        return self._internal <= other._internal

    def __hash__(self) -> int:
        return hash(self._internal)

    # pydantic: serialized as Nessie's {"elements": [...]}
    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any,
                                     handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        def validate(value: Any) -> ContentKey:
            if isinstance(value, ContentKey):
                return value
            if isinstance(value, dict) and isinstance(value.get("elements"), list):
                return cls(value["elements"])
            if isinstance(value, list | tuple):
                return cls(value)
            if isinstance(value, str):
                return cls.parse(value)
            raise InvalidKeyError(f"not a content key: {value!r}")

        return core_schema.no_info_plain_validator_function(
            validate,
            serialization=core_schema.plain_serializer_function_ser_schema(
                lambda k: {"elements": list(k.elements)}),
        )


def _validate(els: tuple[str, ...]) -> None:
    if not els:
        raise InvalidKeyError("content key must have at least one element")
    if len(els) > MAX_ELEMENTS:
        raise InvalidKeyError(
            f"content key {list(els)!r} has {len(els)} elements, at most {MAX_ELEMENTS} allowed")
    total = 0
    for e in els:
        if not isinstance(e, str):
            raise InvalidKeyError(f"content key element {e!r} is not a string")
        if not e:
            raise InvalidKeyError(f"content key {list(els)!r} has an empty element")
        if e == ".":
            raise InvalidKeyError(f"content key {list(els)!r} has a '.' element")
        bad = next((c for c in e if c < " "), None)
        if bad is not None:
            raise InvalidKeyError(
                f"content key element {e!r} holds control character 0x{ord(bad):02x}")
        total += len(e)
    if total > MAX_LENGTH:
        raise InvalidKeyError(f"content key is {total} characters long, at most {MAX_LENGTH}")


# Characters no new name may hold. The Iceberg REST routes carry each name in
# one path segment, and clients and proxies decode %2F and %5C before routing,
# so such a name could be created and listed but never addressed again.
_NOT_IN_NEW_NAMES = ("/", "\\")
NEW_NAME_RULE = ("names may not contain '/' or '\\' and may not be '..' (they could not be "
                 "addressed in a URL path)")


def check_new_key(key: ContentKey) -> None:
    """The rule for a key written by a commit (not for keys read: those exist)."""
    for e in key.elements:
        if e == ".." or any(c in e for c in _NOT_IN_NEW_NAMES):
            raise InvalidKeyError(f"Invalid name {e!r} in {list(key.elements)!r}: "
                                  f"{NEW_NAME_RULE}")


def _needs_escape(element: str) -> bool:
    return any(c in _ESCAPE for c in element)


def _to_path(els: tuple[str, ...]) -> str:
    first = next((i for i, e in enumerate(els) if _needs_escape(e)), None)
    if first is None:
        return ".".join(els)
    plain = ".".join(els[:first])
    escaped = "..".join("".join(_ESCAPE.get(c, c) for c in e) for e in els[first:])
    return f"{plain}..{escaped}" if plain else f".{escaped}"


def _parse_path(path: str) -> list[str]:
    if not isinstance(path, str) or not path:
        raise InvalidKeyError("content key path is empty")
    elements: list[str] = []
    cur: list[str] = []
    i, n = 0, len(path)
    escaping = False
    while i < n:
        c = path[i]
        if not escaping:
            if c == "." and not cur:
                escaping = True  # marker: this element and all after it are escaped
                i += 1
                continue
            if c == ".":
                elements.append("".join(cur))
                cur = []
            elif c in _LEGACY_DOTS:
                cur.append(".")
            else:
                cur.append(c)
            i += 1
            continue
        if c != ".":
            cur.append(c)
            i += 1
            continue
        nxt = path[i + 1] if i + 1 < n else ""
        if nxt == ".":
            if not cur:
                raise InvalidKeyError(f"content key path {path!r} has an empty element")
            elements.append("".join(cur))
            cur = []
        elif nxt in _UNESCAPE:
            cur.append(_UNESCAPE[nxt])
        else:
            raise InvalidKeyError(
                f"content key path {path!r} has an invalid escape '.{nxt}' at offset {i}")
        i += 2
    if not cur:
        raise InvalidKeyError(f"content key path {path!r} ends with an empty element")
    elements.append("".join(cur))
    return elements
