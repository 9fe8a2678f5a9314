"""Content-aware merges: for each key both sides of a merge changed (same
object, same content id), look inside — an Iceberg table both sides only
appended to, a view with a new version on one side and properties on the
other, a namespace's properties — and combine them into a new value, or say
why not. The store applies the combinations (``Resolution``) only while the
target still holds what they were worked out from.

The store does not read metadata files; this layer does, so it lives here.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from catalog.kernel import Catalog
from catalog.merge.content.not_mergeable import NotMergeable
from catalog.merge.content.tables import merge_tables
from catalog.merge.content.views import merge_properties, merge_views, merged_analysis
from catalog.tables import table_content
from catalog.views.views import view_content
from core.commits import Combiner, KeyMergeDetail, KeyOutcome, MergeResult, Resolution
from core.conflicts import Conflict, ConflictType
from core.content import Content, IcebergTable, IcebergView, Namespace
from core.errors import FileNotFoundInWarehouseError
from core.keys import ContentKey


@dataclass
class Combined:
    resolutions: dict[ContentKey, Resolution] = field(default_factory=dict)
    # Why a key changed on both sides could not be combined, and what was found.
    reasons: dict[ContentKey, str] = field(default_factory=dict)
    details: dict[ContentKey, dict[str, Any]] = field(default_factory=dict)
    # Files written for the combinations (removed if the merge does not land).
    files: list[str] = field(default_factory=list)


def combine(catalog: Catalog, preview: MergeResult, write: bool) -> Combined:
    """Combinations for the conflicts of a merge's dry run ``preview``;
    ``write``: write their metadata files (a real merge), else only plan."""
    out = Combined()
    keys = [d.key for d in preview.details if d.outcome is KeyOutcome.CONFLICT
            and d.conflict is not None and d.conflict.type is ConflictType.VALUE_DIFFERS]
    if not keys:
        return out
    if preview.common_ancestor is None:
        out.reasons.update((k, "the two branches share no history to merge from") for k in keys)
        return out
    store = catalog.store
    base = store.contents_at(preview.common_ancestor, keys)
    source = store.contents(f"@{preview.source_hash}", keys)
    target = store.contents(f"@{preview.expected_target_hash}", keys)
    for key in keys:
        b, s, t = base.get(key), source.get(key), target.get(key)
        why = _not_one_object(b, s, t)
        if why is not None:
            out.reasons[key] = why
            continue
        try:
            content, combined = _combine(catalog, b, s, t, write, out.files)  # type: ignore[arg-type]
        except FileNotFoundInWarehouseError as e:
            out.reasons[key] = _gone(e)
            continue
        except NotMergeable as e:
            out.reasons[key] = str(e)
            if e.details:
                out.details[key] = e.details
            continue
        if content is not None:
            out.resolutions[key] = Resolution(t, content, combined)  # type: ignore[arg-type]
        else:
            out.reasons[key] = (f"a {t.type} changed on both sides is not combined "  # type: ignore[union-attr]
                                "(only tables, views and namespaces are)")
    return out


def _gone(e: FileNotFoundInWarehouseError) -> str:
    """Why a version's files cannot be read: where the branches forked lies
    in history past every reference's retention, whose files gc deleted."""
    return (f"a version the merge needs cannot be read ({e.message}): the branches "
            "forked in history past retention, so both sides' changes cannot be "
            "combined; resolve the key with force (take the source's) or drop (keep the "
            "target's)")


def _not_one_object(b: Content | None, s: Content | None, t: Content | None) -> str | None:
    """Why the base, source and target values are not one object's (None:
    they are): only one object's changes are combined."""
    if b is None:
        return "the key did not exist where the branches forked: both sides created it"
    if s is None or t is None:
        return "one side deleted the key"
    if not (b.id == s.id == t.id):
        return ("the two sides hold different objects (one was dropped and created again), "
                "and different objects are never combined")
    if not (type(b) is type(s) is type(t)):
        return f"the key holds a {s.type} on one side and a {t.type} on the other"
    return None


def combiner(catalog: Catalog, write: bool, files: list[str]) -> Combiner:
    """The same rules for a transplant, asked by the store per commit and key
    (files written go into ``files``, to be removed if it does not land)."""

    def combine_one(key: ContentKey, b: Content, s: Content, t: Content,
                    ) -> tuple[Content, dict[str, Any]] | str | None:
        if not (b.id == s.id == t.id):
            return None
        try:
            content, combined = _combine(catalog, b, s, t, write, files)
        except FileNotFoundInWarehouseError as e:
            return _gone(e)
        except NotMergeable as e:
            return str(e)
        return (content, combined) if content is not None else None

    return combine_one


def _combine(catalog: Catalog, b: Content, s: Content, t: Content, write: bool,
             files: list[str]) -> tuple[Content | None, dict[str, Any]]:
    if isinstance(b, Namespace) and isinstance(s, Namespace) and isinstance(t, Namespace):
        props, taken = merge_properties(b.properties, s.properties, t.properties)
        return t.model_copy(update={"properties": props}), {"propertiesFromSource": taken}
    if isinstance(b, IcebergTable) and isinstance(s, IcebergTable) and isinstance(t, IcebergTable):
        tb, ts, tt = (catalog.files.table(c.metadata_location)[0] for c in (b, s, t))
        loc = catalog.metadata_file(tt.location, tt.properties, t.metadata_location)
        folder = loc.rsplit("/", 1)[0]

        def manifest_list(snapshot_id: int) -> str:
            return catalog.locations.check(
                f"{folder}/snap-{snapshot_id}-0-{loc.rsplit('/', 1)[1][:36]}.avro")

        merged = merge_tables(tb, ts, tt, manifest_list, write)
        files.extend(merged.written)
        if write:
            catalog.files.write_table(merged.metadata, loc,
                                      catalog.files.table(t.metadata_location)[1])
            files.append(loc)
        return table_content(merged.metadata, loc, t.id), merged.combined
    if isinstance(b, IcebergView) and isinstance(s, IcebergView) and isinstance(t, IcebergView):
        vb, vs, vt = (catalog.files.view(c.metadata_location)[0] for c in (b, s, t))
        meta, how, combined = merge_views(vb, vs, vt, catalog.store.clock() // 1000)
        loc = catalog.metadata_file(vt.location, meta.properties, t.metadata_location)
        if write:
            catalog.files.write_view(meta, loc)
            files.append(loc)
        return view_content(meta, loc, t.id, merged_analysis(how, s, t)), combined
    return None, {}


def report(preview: MergeResult, combined: Combined) -> MergeResult:
    """The dry run as the content merge would end it: combined keys MERGED,
    the others' conflicts saying why they could not be combined."""
    details: list[KeyMergeDetail] = []
    for d in preview.details:
        res = combined.resolutions.get(d.key)
        why = combined.reasons.get(d.key)
        if res is not None:
            details.append(KeyMergeDetail(d.key, d.behavior, KeyOutcome.MERGED,
                                          combined=res.combined))
        elif why is not None and d.conflict is not None:
            details.append(replace(d, conflict=Conflict(
                d.conflict.type, d.conflict.key, f"{d.conflict.message}: {why}"),
                conflict_details=combined.details.get(d.key)))
        else:
            details.append(d)
    return replace(preview, details=details)


def discard(catalog: Catalog, combined: Combined) -> None:
    for f in combined.files:
        catalog.files.discard(f)
