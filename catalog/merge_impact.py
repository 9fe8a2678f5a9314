"""The views on a merge's target that the merge would break: for each key the
merge changes, the target's views that read it (store.edges), checked
against the value the merge brings (core.sql.validity). Shown in a merge's dry
run, so a publisher sees what breaks before merging."""

from __future__ import annotations

from dataclasses import dataclass

from catalog.analysis import find_cycle, relation
from catalog.service import Catalog
from core.commits import KeyOutcome, MergeResult
from core.content import Content, IcebergView, MaterializedView
from core.keys import ContentKey
from core.sql.validity import dependency_reasons

_TAKEN = (KeyOutcome.APPLIED, KeyOutcome.FORCED)


@dataclass(frozen=True, slots=True)
class InvalidatedView:
    """A view on the target that the merge would break, and why."""

    key: ContentKey
    reasons: list[str]


def invalidated_views(catalog: Catalog, target_hash: str, r: MergeResult,
                      ) -> list[InvalidatedView]:
    store = catalog.store
    keys = [d.key for d in r.details if d.outcome in _TAKEN]
    if not keys:
        return []
    incoming = store.lookup(f"@{r.source_hash}", keys)[1]
    changed = set(keys)
    broken: dict[ContentKey, list[str]] = {}
    for key in keys:
        new = incoming.get(key)
        now = relation(catalog, key.elements, new) if new is not None else None
        for view_key, view in store.dependents(f"@{target_hash}", key)[1].items():
            if view_key in changed or not isinstance(view, IcebergView | MaterializedView):
                continue  # the merge brings that view too, as it holds on the source
            for a in view.analysis or []:
                for dep in a.dependencies:
                    if tuple(dep.key) == key.elements:
                        why = dependency_reasons(dep, now)
                        if why:
                            broken.setdefault(view_key, []).extend(why)
                break  # the first analysis speaks for the view
    return [InvalidatedView(k, sorted(set(v))) for k, v in sorted(broken.items())]


def merge_cycle(catalog: Catalog, target_hash: str, r: MergeResult) -> list[ContentKey] | None:
    """A view read-cycle the merge would make: each half may hold on its own
    branch (``a`` reads ``b`` on one, ``b`` reads ``a`` on the other)."""
    store = catalog.store
    keys = [d.key for d in r.details if d.outcome in _TAKEN]
    incoming = store.lookup(f"@{r.source_hash}", keys)[1] if keys else {}
    gone = set(keys) - set(incoming)

    def merged(wanted: list[ContentKey]) -> dict[ContentKey, Content]:
        rest = [k for k in wanted if k not in incoming and k not in gone]
        found = store.lookup(f"@{target_hash}", rest)[1] if rest else {}
        return {**found, **{k: incoming[k] for k in wanted if k in incoming}}

    for key, value in incoming.items():
        analyses = getattr(value, "analysis", None)
        if analyses:
            cycle = find_cycle(catalog, f"@{target_hash}", key, analyses, merged)
            if cycle:
                return cycle
    return None
