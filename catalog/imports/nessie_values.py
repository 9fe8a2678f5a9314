"""A Nessie log entry as Sapwood keeps a commit: its metadata, its time and
its operations as content values (tables and views by their metadata files,
namespaces), each field checked, none dropped without a rule saying so.

* Time: Nessie's ``commitTime`` has nanoseconds, Sapwood's microseconds. It
  is rounded **up**, so for any instant ``T`` (to the microsecond) "made at
  or before ``T``" holds here exactly when it held in Nessie: reads at
  ``ref*T`` agree.
* Authors: Nessie keeps a list, Sapwood one author: the non-empty ones,
  joined by ``", "`` (none: no author). The committer as given (``""``:
  none).
* Properties: ``allProperties`` maps a name to a list of values; one value
  is kept as it is, several refuse the import (naming the commit and the
  property: Sapwood keeps one). A ``sapwood.`` property is refused (the
  server's own word, docs/security.md). ``authorTime``, when it is not the
  commit time, is kept as ``nessie.author-time``; ``allSignedOffBy`` as
  ``nessie.signed-off-by`` (joined by ``", "``).
* Contents: ``ICEBERG_TABLE`` and ``ICEBERG_VIEW`` with their ids
  (``sqlText``/``dialect``, Nessie's deprecated copies of what the view's
  metadata file holds, are not kept: the file is read); ``NAMESPACE`` with
  its properties, its ``elements`` equal to the key's. Anything else — other
  content types, a ``metadata`` object inside a value, ``documentation`` on a
  put, a field Nessie's model does not have — refuses the import, naming it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from core.commits import SERVER_PROPERTY_PREFIX, CommitMeta
from core.content import Content, IcebergTable, IcebergView, Namespace
from core.errors import SapwoodError
from core.keys import ContentKey, check_new_key

AUTHOR_TIME = "nessie.author-time"
SIGNED_OFF_BY = "nessie.signed-off-by"
_DERIVED = (AUTHOR_TIME, SIGNED_OFF_BY)
_INSTANT = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)$")
_META_FIELDS = {"hash", "committer", "authors", "author", "allSignedOffBy", "signedOffBy",
                "message", "commitTime", "authorTime", "allProperties", "properties",
                "parentCommitHashes"}
_ENTRY_FIELDS = {"commitMeta", "parentCommitHash", "operations", "additionalParents"}
_OP_FIELDS = {"type", "key", "content", "expectedContent", "documentation"}
_TABLE_FIELDS = {"type", "id", "metadataLocation", "snapshotId", "schemaId", "specId",
                 "sortOrderId", "metadata"}
_VIEW_FIELDS = {"type", "id", "metadataLocation", "versionId", "schemaId", "sqlText",
                "dialect", "metadata"}
_NAMESPACE_FIELDS = {"type", "id", "elements", "properties"}


class Refused(SapwoodError):
    """What a commit holds that Sapwood cannot keep as it is."""


@dataclass(slots=True)
class SourceCommit:
    """One Nessie commit, converted: ``parents`` are Nessie's hashes."""

    hash: str
    parents: tuple[str, ...]
    at_us: int
    time: str  # Nessie's commitTime, as it gave it
    meta: CommitMeta
    changes: list[tuple[ContentKey, Content | None]] = field(default_factory=list)


def micros(instant: str) -> int:
    """Microseconds since the epoch of an ISO-8601 instant with up to
    nanoseconds, rounded up."""
    m = _INSTANT.match(instant) if isinstance(instant, str) else None
    if m is None:
        raise Refused(f"{instant!r} is not an instant")
    whole, frac, zone = m.groups()
    seconds = int(datetime.fromisoformat(whole + ("+00:00" if zone == "Z" else zone))
                  .timestamp())
    ns = seconds * 1_000_000_000 + int((frac or "0").ljust(9, "0"))
    return -(-ns // 1000)


def source_commit(entry: dict[str, Any]) -> SourceCommit:
    """The commit of one ``fetch=ALL`` log entry; Refused names what cannot be kept."""
    _only(entry, _ENTRY_FIELDS, "log entry")
    meta = entry["commitMeta"]
    _only(meta, _META_FIELDS, "commitMeta")
    h = meta.get("hash")
    if not isinstance(h, str) or not h:
        raise Refused("a log entry has no commit hash")
    parents = meta.get("parentCommitHashes")
    if parents is None:
        parents = [entry.get("parentCommitHash"), *(entry.get("additionalParents") or [])]
    if not parents or not all(isinstance(p, str) and p for p in parents):
        raise Refused(f"commit {h} names no parent")
    time = meta.get("commitTime")
    at_us = micros(time)
    props: dict[str, str] = {}
    raw_props = meta.get("allProperties")
    if raw_props is None:
        raw_props = {k: [v] for k, v in (meta.get("properties") or {}).items()}
    for name, values in sorted(raw_props.items()):
        if name.lower().startswith(SERVER_PROPERTY_PREFIX) or name in _DERIVED:
            raise Refused(f"commit {h} has property {name!r}: that name is Sapwood's own")
        if not isinstance(values, list) or len(values) != 1 or not isinstance(values[0], str):
            raise Refused(f"commit {h} has {len(values) if isinstance(values, list) else 0} "
                          f"values of property {name!r}: Sapwood keeps one value per property")
        props[name] = values[0]
    author_time = meta.get("authorTime")
    if author_time and micros(author_time) != at_us:
        props[AUTHOR_TIME] = author_time
    signed = meta.get("allSignedOffBy") or ([meta["signedOffBy"]] if meta.get("signedOffBy")
                                            else [])
    if signed:
        props[SIGNED_OFF_BY] = ", ".join(str(s) for s in signed)
    authors = meta.get("authors")
    if authors is None:
        authors = [meta.get("author")]
    who = ", ".join(str(a) for a in authors if a)
    out = SourceCommit(h, tuple(parents), at_us, time,
                       CommitMeta(str(meta.get("message") or ""), who or None,
                                  str(meta.get("committer") or "") or None, props))
    seen: set[ContentKey] = set()
    for op in entry.get("operations") or []:
        change = _operation(h, op)
        if change is None:
            continue
        if change[0] in seen:
            raise Refused(f"commit {h} changes {change[0]} twice")
        seen.add(change[0])
        out.changes.append(change)
    return out


def _operation(h: str, op: Any) -> tuple[ContentKey, Content | None] | None:
    if not isinstance(op, dict):
        raise Refused(f"commit {h} has an operation that is not an object")
    _only(op, _OP_FIELDS, f"an operation of commit {h}")
    raw_key = op.get("key")
    elements = raw_key.get("elements") if isinstance(raw_key, dict) else None
    if not isinstance(elements, list) or not elements \
            or not all(isinstance(e, str) and e for e in elements):
        raise Refused(f"commit {h} has an operation without a key")
    key = ContentKey(tuple(elements))
    kind = op.get("type")
    if kind == "UNCHANGED":
        return None
    if kind == "DELETE":
        return key, None
    if kind != "PUT":
        raise Refused(f"commit {h} has a {kind!r} operation on {key}")
    if op.get("documentation") is not None:
        raise Refused(f"commit {h} puts documentation on {key}: Sapwood keeps none")
    try:
        check_new_key(key)
    except SapwoodError as e:
        raise Refused(f"commit {h} puts {key}: {e.message}") from None
    return key, content_value(h, key, op.get("content"))


def content_value(h: str, key: ContentKey, raw: Any) -> Content:
    """A put's content as Sapwood's value (a view's analysis comes later,
    when the import writes it)."""
    if not isinstance(raw, dict):
        raise Refused(f"commit {h} puts nothing at {key}")
    kind = raw.get("type")
    where = f"the {kind} at {key} in commit {h}"
    cid = raw.get("id")
    if not isinstance(cid, str) or not cid:
        raise Refused(f"{where} has no content id")
    if kind == "ICEBERG_TABLE":
        _only(raw, _TABLE_FIELDS, where)
        _no_metadata(raw, where)
        return IcebergTable(id=cid, metadata_location=_text(raw, "metadataLocation", where),
                            snapshot_id=_int(raw, "snapshotId", where, -1),
                            schema_id=_int(raw, "schemaId", where, 0),
                            spec_id=_int(raw, "specId", where, 0),
                            sort_order_id=_int(raw, "sortOrderId", where, 0))
    if kind == "ICEBERG_VIEW":
        _only(raw, _VIEW_FIELDS, where)
        _no_metadata(raw, where)
        return IcebergView(id=cid, metadata_location=_text(raw, "metadataLocation", where),
                           version_id=_int(raw, "versionId", where, None),
                           schema_id=_int(raw, "schemaId", where, 0))
    if kind == "NAMESPACE":
        _only(raw, _NAMESPACE_FIELDS, where)
        elements = raw.get("elements")
        if elements is not None and list(elements) != list(key.elements):
            raise Refused(f"{where} names elements {elements!r}, not its key's")
        props = raw.get("properties") or {}
        if not isinstance(props, dict) or not all(isinstance(v, str) for v in props.values()):
            raise Refused(f"{where} has properties that are not strings")
        return Namespace(id=cid, properties=props)
    raise Refused(f"{where}: Sapwood holds Iceberg tables, Iceberg views and namespaces, "
                  f"not {kind!r}")


def _only(raw: dict[str, Any], known: set[str], where: str) -> None:
    extra = sorted(set(raw) - known)
    if extra:
        raise Refused(f"{where} has field {extra[0]!r}, which Nessie's v2 model does not have "
                      "(the import keeps every field it knows, and none it does not)")


def _no_metadata(raw: dict[str, Any], where: str) -> None:
    if raw.get("metadata") is not None:
        raise Refused(f"{where} carries a metadata object: Sapwood reads metadata from the "
                      "metadata file only")


def _text(raw: dict[str, Any], name: str, where: str) -> str:
    v = raw.get(name)
    if not isinstance(v, str) or not v:
        raise Refused(f"{where} has no {name}")
    return v


def _int(raw: dict[str, Any], name: str, where: str, default: int | None) -> int:
    v = raw.get(name, default)
    if v is None and default is not None:
        v = default
    if not isinstance(v, int) or isinstance(v, bool):
        raise Refused(f"{where} has no integer {name}")
    return v
