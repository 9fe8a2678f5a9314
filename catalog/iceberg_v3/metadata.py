"""Format v3 table metadata to and from JSON, as the table spec writes it
(format/spec.md, "Table Metadata Fields", Appendix C).

PyIceberg 0.12's ``TableMetadataV3`` holds every v3 field but
``next-row-id`` only as optional, and its ``model_dump_json`` raises
("Writing V3 is not yet supported"). Its base class's serialiser writes the
fields PyIceberg models the spec's way (defaults in the JSON single-value
form, snapshots with ``first-row-id`` and ``added-rows``); this module adds
what it does not:

* ``next-row-id`` always (required in v3; a file without it reads as 0, as
  Iceberg's Java parser reads it);
* ``encryption-keys`` and each snapshot's ``key-id``, which PyIceberg's
  models drop: carried over unchanged from the metadata file the new one is
  made from (no update this catalog accepts changes them);
* the ``initial-default`` and ``write-default`` PyIceberg cannot read
  (of ``timestamp_ns``, ``timestamptz_ns`` and struct fields): set aside
  when a file is read and carried over by field id (an initial default
  never changes) to the schemas written after it;
* ``geometry(C)`` and ``geography(C, A)`` in the spec's canonical spelling,
  parameters always written as Java writes them (PyIceberg reads and writes
  them quoted, ``geometry('C')``, and leaves defaults out).

``variant`` has no PyIceberg type: a schema with it is refused (400), as
is a request's default PyIceberg cannot read."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from pyiceberg.table.metadata import TableMetadata, TableMetadataUtil, TableMetadataV3
from pyiceberg.typedef import IcebergBaseModel
from pyiceberg.types import (
    DEFAULT_GEOGRAPHY_ALGORITHM,
    DEFAULT_GEOGRAPHY_CRS,
    DEFAULT_GEOMETRY_CRS,
)

from core.errors import bad_request

V3 = 3
# Cheap first look: only a file that may be v3 is parsed twice.
_MAYBE_V3 = re.compile(rb'"format-version"\s*:\s*3\s*[,}]')
_SPEC_GEO = re.compile(r"^\s*(geometry|geography)\s*\(\s*([^,()'\"]*?)\s*(?:,\s*(\w*)\s*)?\)\s*$",
                       re.IGNORECASE)
_QUOTED_GEO = re.compile(r"^(geometry|geography)\('([^']*)'(?:, '([^']*)')?\)$")
_EXTRAS = (b'"encryption-keys"', b'"key-id"', b'_ns"', b'"struct"')
# Types whose defaults PyIceberg 0.12 cannot read (its from_json has no case).
_DEFAULTS_KEPT = ("timestamp_ns", "timestamptz_ns")
_DEFAULTS = ("initial-default", "write-default")
VARIANT = ("The type variant is not supported by this catalog (PyIceberg 0.12, whose "
           "models it keeps table metadata in, has no variant type)")


def parse(raw: bytes) -> TableMetadata:
    """Table metadata of any format version: v1 and v2 exactly as PyIceberg
    parses them, v3 with its types read in the spec's spelling."""
    if _MAYBE_V3.search(raw) is not None:
        doc = json.loads(raw)
        if isinstance(doc, dict) and doc.get("format-version") == V3:
            return TableMetadataUtil.parse_obj(from_spec(doc))
    return TableMetadataUtil.parse_raw(raw.decode())


def from_spec(doc: dict[str, Any]) -> dict[str, Any]:
    """A v3 metadata document as PyIceberg's models read it."""
    out = dict(doc)
    out.setdefault("next-row-id", 0)
    if isinstance(out.get("schemas"), list):
        out["schemas"] = [_without_unread_defaults(schema_from_spec(s))
                          for s in out["schemas"]]
    return out


def schema_from_spec(schema: Any) -> Any:
    """A schema (or any type) from a file or a request, PyIceberg's spelling."""
    return _walk(schema, _pyiceberg_type)


def dump(meta: TableMetadata, carried: bytes | None = None) -> bytes:
    """The metadata file's bytes; ``carried``: the file ``meta`` was made
    from, whose fields PyIceberg does not model are kept."""
    if meta.format_version != V3:
        return meta.model_dump_json().encode()
    if getattr(meta, "next_row_id", None) is None:
        raise RuntimeError("format v3 table metadata without next-row-id")
    # TableMetadataV3 refuses to serialise; the base class's serialiser is
    # the one every other version uses.
    doc: dict[str, Any] = json.loads(IcebergBaseModel.model_dump_json(meta))
    doc["schemas"] = [_walk(s, _spec_type) for s in doc.get("schemas", [])]
    if carried is not None and any(k in carried for k in _EXTRAS):
        _carry(doc, json.loads(carried))
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode()


def _carry(doc: dict[str, Any], old: dict[str, Any]) -> None:
    if "encryption-keys" in old:
        doc["encryption-keys"] = old["encryption-keys"]
    kept = {f["id"]: f for s in old.get("schemas") or [] for f in _fields(s)
            if _unread_default(f)}
    for s in doc.get("schemas", []):
        for f in _fields(s):
            was = kept.get(f.get("id"))
            if was is not None and was.get("type") == f.get("type"):
                for k in _DEFAULTS:
                    if k in was and k not in f:
                        f[k] = was[k]
    keys = {s.get("snapshot-id"): s["key-id"] for s in old.get("snapshots") or []
            if isinstance(s, dict) and "key-id" in s}
    for s in doc.get("snapshots", []):
        if s.get("snapshot-id") in keys:
            s["key-id"] = keys[s["snapshot-id"]]


def upgraded(meta: TableMetadata) -> TableMetadataV3:
    """``meta`` as format v3: every field it has, ``next-row-id`` 0 (the
    spec's "Row Lineage for Upgraded Tables"; its snapshots stay as they
    were, without row ids). Not validated here: this is a step inside a
    commit's updates, which are validated together."""
    mine = type(meta).model_fields
    fields = {name: getattr(meta, name) for name in TableMetadataV3.model_fields
              if name in mine and hasattr(meta, name)}  # PyIceberg's empty one has no location
    fields.update(format_version=V3, next_row_id=0)
    return TableMetadataV3.model_construct(**fields)


def _fields(t: Any) -> list[dict[str, Any]]:
    """Every struct field of a type's JSON, nested ones included."""
    out: list[dict[str, Any]] = []
    if not isinstance(t, dict):
        return out
    if t.get("type") == "struct" and isinstance(t.get("fields"), list):
        for f in t["fields"]:
            if isinstance(f, dict):
                out.append(f)
                out += _fields(f.get("type"))
    elif t.get("type") == "list":
        out += _fields(t.get("element"))
    elif t.get("type") == "map":
        out += _fields(t.get("key")) + _fields(t.get("value"))
    return out


def _unread_default(f: dict[str, Any]) -> bool:
    t = f.get("type")
    unread = t in _DEFAULTS_KEPT or (isinstance(t, dict) and t.get("type") == "struct")
    return unread and any(f.get(k) is not None for k in _DEFAULTS)


def _without_unread_defaults(schema: Any) -> Any:
    """The schema without the defaults PyIceberg cannot read (``dump``
    puts them back from the file)."""
    if not any(_unread_default(f) for f in _fields(schema)):
        return schema
    schema = json.loads(json.dumps(schema))  # a copy to change
    for f in _fields(schema):
        if _unread_default(f):
            for k in _DEFAULTS:
                f.pop(k, None)
    return schema


def _walk(t: Any, f: Callable[[str], str]) -> Any:
    """``t`` (a type's JSON) with ``f`` applied to every primitive type."""
    if isinstance(t, str):
        return f(t)
    if not isinstance(t, dict):
        return t  # PyIceberg's validation names what is wrong
    kind = t.get("type")
    if kind == "struct" and isinstance(t.get("fields"), list):
        return {**t, "fields": [{**fld, "type": _walk(fld.get("type"), f)}
                                if isinstance(fld, dict) else fld for fld in t["fields"]]}
    if kind == "list":
        return {**t, "element": _walk(t.get("element"), f)}
    if kind == "map":
        return {**t, "key": _walk(t.get("key"), f), "value": _walk(t.get("value"), f)}
    return t


def _pyiceberg_type(t: str) -> str:
    if t.strip().lower() == "variant":
        raise bad_request(VARIANT)
    m = _SPEC_GEO.match(t)
    if m is None:
        return t
    kind, crs, algorithm = m.group(1).lower(), m.group(2), m.group(3)
    if not crs:
        return kind
    return f"{kind}('{crs}'" + (f", '{algorithm}')" if algorithm else ")")


def _spec_type(t: str) -> str:
    """The spec's canonical spelling, parameters always written (as Iceberg's
    Java ``Types`` writes them; PyIceberg leaves defaults out)."""
    if t in ("geometry", "geography"):
        kind, crs, algorithm = t, None, None
    else:
        m = _QUOTED_GEO.match(t)
        if m is None:
            return t
        kind, crs, algorithm = m.groups()
    if kind == "geometry":
        return f"geometry({crs or DEFAULT_GEOMETRY_CRS})"
    return (f"geography({crs or DEFAULT_GEOGRAPHY_CRS}, "
            f"{algorithm or DEFAULT_GEOGRAPHY_ALGORITHM})")


def created(meta: TableMetadata) -> TableMetadata:
    """A new table's metadata (PyIceberg's ``new_table_metadata``): a v3
    table numbers its rows from 0."""
    if meta.format_version == V3 and getattr(meta, "next_row_id", None) is None:
        return meta.model_copy(update={"next_row_id": 0})
    return meta
