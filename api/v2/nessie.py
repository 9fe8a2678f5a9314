"""Nessie's own clients, as they are: what the versioning API takes from them
and answers them beyond its own shapes (issue 47; docs/nessie-compatibility.md).

Nessie's Java client (inside Iceberg's Spark runtime, and under Nessie's
Spark SQL extensions) sends ``Nessie-Client-Spec`` with every request, and
fails on any field of an answer its model does not know. A request carrying
that header is answered in Nessie's shapes exactly: Sapwood's extras (a
view's ``extensions`` and ``analysis``, a merge's ``retryable``,
``outcome``, ``invalidatedViews``, …) are left out, a view carries Nessie's
``sqlText``/``dialect`` placeholders, and conflicts in an error are Nessie's
polymorphic ``errorDetails``. Every other caller gets Sapwood's shapes.

Content values a Nessie client sends carry fields Sapwood does not store:
a namespace's ``elements`` (its key's, checked), a view's ``sqlText`` and
``dialect`` (only Iceberg's NessieCatalog placeholder ``-``: a view's SQL is
in its metadata file); they are checked and taken off here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fastapi import Request

from core.conflicts import Conflict
from core.content import Content, ContentType
from core.errors import bad_request
from core.keys import ContentKey

HEADER = "nessie-client-spec"
# What NessieCatalog sends as a view's SQL and dialect: "see the metadata file".
PLACEHOLDER = "-"
# Fields of Nessie's models, per content type: a strict client knows no others.
_FIELDS = {
    "ICEBERG_TABLE": ("type", "id", "metadataLocation", "snapshotId", "schemaId", "specId",
                      "sortOrderId"),
    "ICEBERG_VIEW": ("type", "id", "metadataLocation", "versionId", "schemaId", "sqlText",
                     "dialect"),
    "NAMESPACE": ("type", "id", "elements", "properties"),
}


# What a Nessie client can be shown: its model has no MATERIALIZED_VIEW (a
# listing holding one fails whole: "No content type registered"), so
# listings, diffs and logs leave Sapwood's materialized views out for it,
# and reading one is a 400 saying where to read it.
SHOWN = frozenset({ContentType.ICEBERG_TABLE, ContentType.ICEBERG_VIEW, ContentType.NAMESPACE})


def shown(value: Content | None) -> bool:
    return value is None or value.type in SHOWN


def refuse_unshown(values: Mapping[ContentKey, Content]) -> None:
    """A Nessie client asked for a value its model cannot hold: a 400 naming it."""
    for key, value in values.items():
        if value.type not in SHOWN:
            raise bad_request(
                f"'{key}' is a {value.type}, which Nessie's client cannot read: read it "
                "through the Iceberg REST API or Sapwood's materialized-views routes")


def strict(request: Request) -> bool:
    """Whether the caller is a Nessie client (answers in Nessie's shapes only)."""
    return HEADER in request.headers


def content_in(payload: dict[str, Any], key: ContentKey, field: str) -> dict[str, Any]:
    """A content value as sent, without the fields Nessie's model has and
    Sapwood keeps elsewhere (a 400 naming the field when one says something
    other than what Sapwood keeps)."""
    kind = payload.get("type")
    out = dict(payload)
    # Nessie's models carry an optional ``metadata`` (its own catalog's copy
    # of a file's contents): null means none; Sapwood reads the file itself.
    if out.pop("metadata", None) is not None:
        raise bad_request(f"{field}.metadata must be null (or absent): Sapwood reads a "
                          "table's or view's metadata from its metadataLocation")
    if kind == "NAMESPACE" and "elements" in out:
        elements = out.pop("elements")
        if elements is not None and list(elements) != list(key.elements):
            raise bad_request(
                f"{field}.elements {elements!r} is not the key's elements "
                f"{list(key.elements)!r}: a namespace's elements are its key's")
    if kind == "ICEBERG_VIEW":
        for name in ("sqlText", "dialect"):
            value = out.pop(name, None)
            if value is not None and value != PLACEHOLDER:
                raise bad_request(
                    f"{field}.{name} must be {PLACEHOLDER!r} (or absent): a view's SQL and "
                    "dialect are read from its metadata file, not from the content value")
    return out


def content_out(value: dict[str, Any], key: ContentKey | None, nessie: bool,
                ) -> dict[str, Any]:
    """A content value as answered: a namespace with its key's elements (every
    caller: Nessie's model requires them); to a Nessie client, only Nessie's
    fields, a view with the placeholders NessieCatalog itself writes."""
    if value.get("type") == "NAMESPACE" and key is not None:
        value = {**value, "elements": list(key.elements)}
    if not nessie:
        return value
    kind = value.get("type")
    if kind == "ICEBERG_VIEW":
        value = {**value, "sqlText": PLACEHOLDER, "dialect": PLACEHOLDER}
    fields = _FIELDS.get(str(kind))
    if fields is None:
        return value
    return {k: value[k] for k in fields if k in value}


def merge_out(answer: dict[str, Any]) -> dict[str, Any]:
    """A merge's or transplant's answer in Nessie's MergeResponse fields."""
    out = {k: v for k, v in answer.items()
           if k not in ("retryable", "invalidatedViews")}
    out["details"] = [_detail(d) for d in answer.get("details", [])]
    return out


def _detail(d: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {k: d[k] for k in ("key", "mergeBehavior") if k in d}
    conflict = d.get("conflict")
    if conflict is not None:
        out["conflict"] = {k: conflict[k] for k in ("conflictType", "key", "message")
                           if k in conflict}
    return out


def error_details(conflicts: Sequence[Conflict]) -> dict[str, Any] | None:
    """An error's details as Nessie's client reads them: conflicts as
    ``REFERENCE_CONFLICTS`` (each key a ContentKey), nothing else (Nessie
    sends none for a stale hash or the rest, and the client fails on a
    field it does not know)."""
    if not conflicts:
        return None
    return {"type": "REFERENCE_CONFLICTS", "conflicts": [
        {"conflictType": str(c.type),
         "key": {"elements": list(c.key.elements)} if c.key is not None else None,
         "message": c.message} for c in conflicts]}
