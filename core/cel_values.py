"""What a Nessie ``filter`` (CEL) sees: the variables Nessie documents for the
commit log and for entries, their fields, and how a commit or an entry
becomes CEL values (cel-python's ``celtypes``).

Nessie (``org.projectnessie.services.cel.CELUtil``, the v2 API's
``CommitLogParams``/``EntriesParams``) gives the log ``commit`` (its
CommitMeta: ``author``, ``committer``, ``commitTime`` a timestamp,
``hash``, ``message``, ``properties``…) and ``operations`` (each with
``type``, ``key``, ``keyElements``, ``namespace``, ``namespaceElements``,
``name``, ``encodedKey`` and a PUT's ``content`` with ``type`` and ``id``),
and entries ``entry`` (``key``, ``keyElements``, ``namespace``,
``namespaceElements``, ``name``, ``encodedKey``, ``contentType``). Those
are exactly the names here; anything else is refused when the filter is
compiled (core.cel_filter). Keys are spelled as Nessie spells them in
CEL: ``key`` joins the elements with ``.``; ``namespace`` and
``encodedKey`` are Nessie's path strings (a ``.`` inside an element
written as the group separator 0x1D).

Only the fields a filter reads are built (``Needs``): a value costs
microseconds, and a log walks thousands of commits.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from celpy import celtypes as T

from core.commits import Commit, CommitOperation, Entry
from core.keys import ContentKey


@dataclass(frozen=True, eq=False)
class Record:
    """A variable (or a field) with named fields; compared by identity."""

    name: str
    fields: Mapping[str, Shape]


@dataclass(frozen=True)
class ListOf:
    item: Shape


# A field's shape: a record, a list of one, or any other value (None).
Shape = Record | ListOf | None

CONTENT = Record("content", {"type": None, "id": None})
_KEYED = {"key": None, "encodedKey": None, "keyElements": None, "namespace": None,
          "namespaceElements": None, "name": None}
OPERATION = Record("operation", {**_KEYED, "type": None, "content": CONTENT})
OPERATIONS = ListOf(OPERATION)
COMMIT = Record("commit", {
    "hash": None, "committer": None, "author": None, "authors": None, "message": None,
    "commitTime": None, "authorTime": None, "properties": None, "allProperties": None,
    "parentCommitHashes": None, "signedOffBy": None, "allSignedOffBy": None})
ENTRY = Record("entry", {**_KEYED, "contentType": None})

# The variables of each kind of filter.
HISTORY: dict[str, Shape] = {"commit": COMMIT, "operations": OPERATIONS}
ENTRIES: dict[str, Shape] = {"entry": ENTRY}


@dataclass
class Needs:
    """The variables a filter names, and the fields it reads, by record; a
    record in ``whole`` is used as a value of its own (all its fields are
    built)."""

    variables: set[str] = field(default_factory=set)
    fields: dict[str, set[str]] = field(default_factory=dict)
    whole: set[str] = field(default_factory=set)

    def wants(self, record: Record) -> frozenset[str]:
        if record.name in self.whole:
            return frozenset(record.fields)
        return frozenset(self.fields.get(record.name, ()))


def _s(text: str | None) -> T.StringType | None:
    return T.StringType(text) if text is not None else None


def _strings(items: Any) -> T.ListType:
    return T.ListType([T.StringType(s) for s in items])


def _path(elements: tuple[str, ...]) -> str:
    """Nessie's ContentKey.toPathString: a '.' inside an element is 0x1D."""
    return ".".join(e.replace(".", "\x1d") for e in elements)


def _timestamp(at: datetime) -> T.TimestampType:
    return T.TimestampType(at if at.tzinfo is not None else at.replace(tzinfo=UTC))


_KEY_FIELDS: dict[str, Callable[[ContentKey], Any]] = {
    "key": lambda k: T.StringType(".".join(k.elements)),
    "encodedKey": lambda k: T.StringType(_path(k.elements)),
    "keyElements": lambda k: _strings(k.elements),
    "namespace": lambda k: T.StringType(_path(k.elements[:-1])),
    "namespaceElements": lambda k: _strings(k.elements[:-1]),
    "name": lambda k: T.StringType(k.name),
}

_COMMIT_FIELDS: dict[str, Callable[[Commit], Any]] = {
    "hash": lambda c: T.StringType(c.hash),
    "committer": lambda c: _s(c.committer),
    "author": lambda c: _s(c.author),
    "authors": lambda c: _strings([c.author] if c.author else []),
    "message": lambda c: T.StringType(c.message),
    "commitTime": lambda c: _timestamp(c.created_at),
    "authorTime": lambda c: _timestamp(c.created_at),
    "properties": lambda c: T.MapType({T.StringType(k): T.StringType(v)
                                       for k, v in c.properties.items()}),
    "allProperties": lambda c: T.MapType({T.StringType(k): _strings([v])
                                          for k, v in c.properties.items()}),
    "parentCommitHashes": lambda c: _strings(c.parents),
    "signedOffBy": lambda c: None,
    "allSignedOffBy": lambda c: _strings(()),
}


def _content(op: CommitOperation) -> T.MapType | None:
    if op.entry is None:
        return None
    return T.MapType({T.StringType("type"): T.StringType(op.entry.type.value),
                      T.StringType("id"): T.StringType(op.entry.content_id)})


def _operation(op: CommitOperation, wanted: frozenset[str]) -> T.MapType:
    out: dict[T.StringType, Any] = {}
    for name in wanted:
        if name == "type":
            out[T.StringType(name)] = T.StringType(op.kind.value)
        elif name == "content":
            out[T.StringType(name)] = _content(op)
        else:
            out[T.StringType(name)] = _KEY_FIELDS[name](op.key)
    return T.MapType(out)


def commit_values(c: Commit, needs: Needs) -> dict[str, Any]:
    """The log's variables for ``c``: what ``needs`` names of them."""
    out: dict[str, Any] = {}
    if "commit" in needs.variables:
        out["commit"] = T.MapType({T.StringType(n): _COMMIT_FIELDS[n](c)
                                   for n in needs.wants(COMMIT)})
    if "operations" in needs.variables:
        ops = needs.wants(OPERATION)
        out["operations"] = T.ListType([_operation(op, ops) for op in c.operations])
    return out


# What each field's value is made of, hashable: commits or entries alike
# there get the same answer from a filter that reads only those fields.
_COMMIT_RAW: dict[str, Callable[[Commit], Hashable]] = {
    "hash": lambda c: c.hash, "committer": lambda c: c.committer,
    "author": lambda c: c.author, "authors": lambda c: c.author,
    "message": lambda c: c.message, "commitTime": lambda c: c.created_at,
    "authorTime": lambda c: c.created_at,
    "properties": lambda c: tuple(sorted(c.properties.items())),
    "allProperties": lambda c: tuple(sorted(c.properties.items())),
    "parentCommitHashes": lambda c: c.parents, "signedOffBy": lambda c: None,
    "allSignedOffBy": lambda c: None,
}
_ENTRY_RAW: dict[str, Callable[[Entry], Hashable]] = {
    "contentType": lambda e: e.type.value, "name": lambda e: e.key.name,
    "namespace": lambda e: e.key.elements[:-1],
    "namespaceElements": lambda e: e.key.elements[:-1],
    "key": lambda e: e.key.elements, "encodedKey": lambda e: e.key.elements,
    "keyElements": lambda e: e.key.elements,
}


def commit_projection(c: Commit, needs: Needs) -> tuple[Hashable, ...] | None:
    """What the filter's answer for ``c`` depends on (evaluated once per
    distinct value); None when it reads the operations (rarely alike, and
    costly to compare)."""
    if "operations" in needs.variables:
        return None
    return tuple(_COMMIT_RAW[n](c) for n in sorted(needs.wants(COMMIT)))


def entry_values(e: Entry, needs: Needs) -> dict[str, Any]:
    """The entries' variable for ``e``: the fields ``needs`` names."""
    out: dict[T.StringType, Any] = {}
    for name in needs.wants(ENTRY):
        out[T.StringType(name)] = T.StringType(e.type.value) if name == "contentType" \
            else _KEY_FIELDS[name](e.key)
    return {"entry": T.MapType(out)} if "entry" in needs.variables else {}


def entry_projection(e: Entry, needs: Needs) -> tuple[Hashable, ...]:
    """What the filter's answer for ``e`` depends on (see commit_projection)."""
    return tuple(_ENTRY_RAW[n](e) for n in sorted(needs.wants(ENTRY)))
