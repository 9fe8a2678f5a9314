"""Merging a view, or a namespace's properties, that both sides changed.

A view: a new version on one side and only properties on the other keep
both; both sides adding a version with the same SQL in every dialect is one
version (the target's); different SQL is a conflict that carries both texts
and their diff. Properties merge key by key, as a namespace's do: the same
key set to different values is a conflict. A definer view's recorded
definer is kept only with the version it was recorded for."""

from __future__ import annotations

import difflib
from typing import Any

from pyiceberg.view.metadata import ViewMetadata

from catalog.content_merge.not_mergeable import NotMergeable
from catalog.delegation.view_security import kept_with_version
from core.views import current_version, sql_representations


def merge_properties(base: dict[str, str], source: dict[str, str], target: dict[str, str],
                     ) -> tuple[dict[str, str], list[str]]:
    """Key by key; returns the merged map and the keys taken from the source."""
    out = dict(target)
    taken = []
    for k in sorted(set(base) | set(source) | set(target)):
        b, s, t = base.get(k), source.get(k), target.get(k)
        if s in (b, t):
            continue
        if t != b:
            raise NotMergeable(f"property {k} set to {s!r} on the source and {t!r} on the "
                               "target")
        taken.append(k)
        if s is None:
            out.pop(k, None)
        else:
            out[k] = s
    return out, taken


def _sql(meta: ViewMetadata) -> dict[str, str]:
    return {r.dialect.lower(): r.sql for r in sql_representations(current_version(meta))}


def merge_views(base: ViewMetadata, source: ViewMetadata, target: ViewMetadata,
                ) -> tuple[ViewMetadata, str, dict[str, Any]]:
    """The combined metadata, which side's version it keeps ("source" or
    "target"), and what was taken from each side."""
    props, taken = merge_properties(base.properties, source.properties, target.properties)
    src_moved = source.current_version_id != base.current_version_id
    tgt_moved = target.current_version_id != base.current_version_id
    if src_moved and tgt_moved and _sql(source) != _sql(target):
        a, b = _sql(target), _sql(source)
        texts = "; ".join(f"{d}: target {a.get(d)!r}, source {b.get(d)!r}"
                          for d in sorted(set(a) | set(b)) if a.get(d) != b.get(d))
        diff = "\n".join(
            line for d in sorted(set(a) | set(b))
            for line in difflib.unified_diff((a.get(d) or "").splitlines(),
                                             (b.get(d) or "").splitlines(), lineterm="",
                                             fromfile=f"target/{d}", tofile=f"source/{d}"))
        raise NotMergeable(f"both sides replaced the view with different SQL ({texts})",
                           {"sql": {"target": a, "source": b}, "sqlDiff": diff})
    side, meta = ("source", source) if src_moved and not tgt_moved else ("target", target)
    combined: dict[str, Any] = {"version": side}
    if taken:
        combined["propertiesFromSource"] = taken
    # A definer recorded on one side vouched for that side's version only.
    props = kept_with_version(props, meta.properties)
    return meta.model_copy(update={"properties": props}), side, combined
