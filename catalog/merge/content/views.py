"""Merging a view, or a namespace's properties, that both sides changed.

A view: a new version on one side and only properties on the other keep
both; both sides adding a version merge dialect by dialect (core.view_merge:
SQL one side added for a dialect the other did not touch joins one new
version; the same SQL is one version, the target's); what cannot be combined
is a conflict saying per dialect what each side did, with a diff each.
Properties merge key by key, as a namespace's do: the same key set to
different values is a conflict. A definer view's recorded definer is kept
only with SQL it was recorded for."""

from __future__ import annotations

from typing import Any

from pyiceberg.view.metadata import ViewMetadata

from catalog.merge.content.not_mergeable import NotMergeable
from catalog.views.security import kept_with_version
from core.content import IcebergView
from core.dialects import HiveExtension
from core.errors import InvalidInputError
from core.sql.stored import DialectAnalysis
from core.view_merge import VersionMerge, merge_versions, with_version
from core.views import sql_representations


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


def merge_views(base: ViewMetadata, source: ViewMetadata, target: ViewMetadata, now_ms: int,
                ) -> tuple[ViewMetadata, VersionMerge, dict[str, Any]]:
    """The combined metadata, how its version was merged (``side``: whose
    version it is, "both" for a new one; ``taken``: whose SQL each dialect
    has), and what was taken from each side."""
    props, taken = merge_properties(base.properties, source.properties, target.properties)
    src_moved = source.current_version_id != base.current_version_id
    tgt_moved = target.current_version_id != base.current_version_id
    if src_moved and tgt_moved:
        merged = merge_versions(base, source, target)
        if merged.reasons:
            raise NotMergeable(merged.message(), merged.details())
    else:
        merged = VersionMerge((), side="source" if src_moved else "target")
    combined: dict[str, Any] = {"version": merged.side}
    if merged.side == "both":
        combined["dialects"] = dict(sorted(merged.taken.items()))
    if taken:
        combined["propertiesFromSource"] = taken
    if merged.side == "source" and not tgt_moved:
        # Only the source moved: its metadata, versions and log as they are.
        return source.model_copy(update={"properties": kept_with_version(
            props, source.properties)}), merged, combined
    # A definer recorded on one side vouched for that side's SQL only: a
    # version with SQL of both keeps it only if both sides recorded it.
    for side, meta in (("source", source), ("target", target)):
        if merged.side in (side, "both"):
            props = kept_with_version(props, meta.properties)
    try:
        return with_version(target, merged, props, now_ms), merged, combined
    except InvalidInputError as e:  # the merged version drops a dialect the view keeps
        why = f"the merged version cannot replace the target's: {' '.join(e.message.split())}"
        raise NotMergeable(why, {**merged.details(), "reasons": [why]}) from None


def merged_analysis(merged: VersionMerge, source: IcebergView, target: IcebergView,
                    ) -> tuple[list[DialectAnalysis] | None, dict[str, HiveExtension]]:
    """What the merged view's content records of its SQL (dependencies,
    lineage; Hive's frozen text): the kept side's, or for a version with SQL
    of both, each dialect's analysis from the side whose SQL it has."""
    if merged.side != "both" or merged.version is None:
        kept = source if merged.side == "source" else target
        return kept.analysis, dict(kept.extensions)
    extensions = {**source.extensions, **target.extensions}
    if source.analysis is None or target.analysis is None:
        return None, extensions  # a side was stored unanalysed
    found = []
    for r in sql_representations(merged.version):
        side = source if merged.taken.get(r.dialect.lower()) == "source" else target
        one = next((a for a in side.analysis or [] if a.dialect.lower() == r.dialect.lower()),
                   None)
        if one is not None:
            found.append(one)
    return found, extensions
