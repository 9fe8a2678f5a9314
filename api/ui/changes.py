"""One key of a diff (two refs, or a commit against its parent) as the pages
show it: what happened to it, what changed in it, and where to look at it."""

from __future__ import annotations

import asyncio
from typing import Any

from api.ui.client import Api, ApiError, seg

# The fields of a content value a reader recognises, in the order shown.
_FIELDS = (("versionId", "version"), ("snapshotId", "snapshot"), ("refreshId", "refresh"),
           ("schemaId", "schema"), ("specId", "partition spec"),
           ("sortOrderId", "sort order"))


def change(d: dict[str, Any], frm: str, to: str) -> dict[str, str]:
    """A diff entry of the versioning API between ref specs ``frm`` and ``to``."""
    before, after = d.get("from"), d.get("to")
    kind = "added" if before is None else "removed" if after is None else "changed"
    return {"key": ".".join(d["key"]["elements"]), "change": kind,
            "type": (after or before or {}).get("type", ""),
            "what": what_changed(before, after),
            # A removed key is looked at where it still is.
            "ref": frm if after is None else to}


def what_changed(before: dict[str, Any] | None, after: dict[str, Any] | None) -> str:
    if after is None:
        return "dropped"
    if before is None:
        if "versionId" in after:
            return f"created at version {after['versionId']}"
        if "snapshotId" in after:
            snapshot = _value(after["snapshotId"])
            return ("created, no snapshot yet" if snapshot == "none"
                    else f"created at snapshot {snapshot}")
        return "created"
    if before.get("type") != after.get("type"):
        return f"was a {_noun(before)}, now a {_noun(after)}"
    if before.get("id") != after.get("id"):
        return f"dropped and created again: another {_noun(after)} under this name"
    if after.get("type") == "NAMESPACE":
        return _properties(before.get("properties") or {}, after.get("properties") or {})
    parts = [f"{label} {_value(before.get(f))} → {_value(after.get(f))}"
             for f, label in _FIELDS if before.get(f) != after.get(f)]
    if parts:
        return "; ".join(parts)
    # A new metadata file with the same version (or snapshot): properties,
    # or, across two branches, a version made on each side.
    return "metadata only (properties, or a version of the same number on each side)"


def _properties(old: dict[str, str], new: dict[str, str]) -> str:
    added = [k for k in new if k not in old]
    removed = [k for k in old if k not in new]
    changed = [k for k in new if k in old and old[k] != new[k]]
    parts = [f"{label} {', '.join(sorted(keys))}" for label, keys in
             (("added", added), ("changed", changed), ("removed", removed)) if keys]
    return f"properties {'; '.join(parts)}" if parts else "no change in its properties"


def _noun(content: dict[str, Any]) -> str:
    return str(content.get("type", "object")).lower().replace("iceberg_", "").replace("_", " ")


def _value(v: Any) -> str:
    return "none" if v is None or v == -1 else str(v)


# Views of one diff page whose metadata is read to say what changed in them
# (two reads each, concurrently); the rest keep what their values tell.
VIEWS_DESCRIBED = 20


async def describe_views(api: Api, changes: list[dict[str, str]], frm: str, to: str) -> None:
    """For changed views, what changed in their definitions (SQL per dialect,
    default namespace, schema, properties), read from both sides' metadata."""
    views = [c for c in changes if c["change"] == "changed"
             and c["type"] in ("ICEBERG_VIEW", "MATERIALIZED_VIEW")][:VIEWS_DESCRIBED]

    async def one(c: dict[str, str]) -> None:
        try:
            before, after = await asyncio.gather(_view(api, frm, c["key"]),
                                                 _view(api, to, c["key"]))
        except ApiError:
            return  # unreadable on a side: what the values told stays
        c["what"] = view_changed(before, after) or c["what"]

    await asyncio.gather(*(one(c) for c in views))


async def _view(api: Api, ref: str, key: str) -> dict[str, Any]:
    *ns, name = key.split(".")
    got = await api.get(f"/iceberg/{seg(ref)}/v1/namespaces/{seg(chr(0x1f).join(ns))}"
                        f"/views/{seg(name)}")
    meta: dict[str, Any] = got["metadata"]
    return meta


def view_changed(before: dict[str, Any], after: dict[str, Any]) -> str:
    """What differs between two metadata files of a view, in a line."""
    def current(meta: dict[str, Any]) -> dict[str, Any]:
        return next(v for v in meta["versions"]
                    if v["version-id"] == meta["current-version-id"])

    old, new = current(before), current(after)
    parts = []
    if old["version-id"] != new["version-id"]:
        parts.append(f"version {old['version-id']} → {new['version-id']}")
    sql_a = {r["dialect"]: r["sql"] for r in old.get("representations", [])}
    sql_b = {r["dialect"]: r["sql"] for r in new.get("representations", [])}
    for label, dialects in (
            ("SQL changed", [d for d in sql_b if d in sql_a and sql_a[d] != sql_b[d]]),
            ("SQL added", [d for d in sql_b if d not in sql_a]),
            ("SQL removed", [d for d in sql_a if d not in sql_b])):
        if dialects:
            parts.append(f"{label} ({', '.join(sorted(dialects))})")
    if old.get("default-namespace") != new.get("default-namespace"):
        parts.append(f"default namespace {'.'.join(old.get('default-namespace') or [])} → "
                     f"{'.'.join(new.get('default-namespace') or [])}")
    if old.get("schema-id") != new.get("schema-id"):
        parts.append(f"schema {old.get('schema-id')} → {new.get('schema-id')}")
    props_a, props_b = before.get("properties") or {}, after.get("properties") or {}
    if props_a != props_b:
        parts.append(_properties(props_a, props_b))
    return "; ".join(parts)
