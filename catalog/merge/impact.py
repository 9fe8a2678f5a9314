"""The views on a merge's target that the merge would break: the target's
views that read a key the merge changes, directly or through other views
(store.edges), judged by the one verdict (catalog.views.status) on the
merge's result — the target with the incoming values — against what they
were on the target: a view is listed with the reasons the merge adds, the
way through the views it reads included (``shop.top → shop.big_regions →
shop.revenue: table shop.revenue dropped``). Shown in a merge's dry run, so
a publisher sees what breaks before merging."""

from __future__ import annotations

from dataclasses import dataclass

from catalog.kernel import Catalog
from catalog.views.analysis import find_cycle
from catalog.views.invalidation import dependents
from catalog.views.status import Verdicts
from core.commits import KeyOutcome, MergeResult
from core.content import Content, IcebergView, MaterializedView
from core.keys import ContentKey
from core.sql.validity import ViewStatus

_TAKEN = (KeyOutcome.APPLIED, KeyOutcome.FORCED)


@dataclass(frozen=True, slots=True)
class InvalidatedView:
    """A view on the target that the merge would break, and why: its
    verdict on the merge's result narrowed to the reasons the merge adds
    (with the causes behind them, so an answer can tell which objects they
    name: core.redact.invalidated)."""

    key: ContentKey
    status: ViewStatus

    @property
    def reasons(self) -> list[str]:
        return list(self.status.reasons)


def invalidated_views(catalog: Catalog, target_hash: str, r: MergeResult,
                      ) -> list[InvalidatedView]:
    store = catalog.store
    keys = [d.key for d in r.details if d.outcome in _TAKEN]
    if not keys:
        return []
    at, changed = f"@{target_hash}", set(keys)
    # The views the merge brings hold as they do on the source: left to it.
    readers = {k: v for k, v in dependents(catalog, at, keys).items()
               if k not in changed and isinstance(v, IcebergView | MaterializedView)}
    if not readers:
        return []
    incoming = store.lookup(f"@{r.source_hash}", keys)[1]
    merged = {k: incoming.get(k) for k in keys}
    after = Verdicts(catalog, at, merged).of(readers)
    # Compared alike: the overlay's verdict does not look for renamed bases.
    before = Verdicts(catalog, at, {}).of(readers)
    out = []
    for k in sorted(readers):
        had = set(before[k].reasons)
        if after[k].status == "invalid" and any(why not in had for why in after[k].reasons):
            out.append(InvalidatedView(k, _added(after[k], had)))
    return out


def _added(s: ViewStatus, had: set[str]) -> ViewStatus:
    """``s`` with only the reasons not in ``had``, and their causes (each
    reason is rendered from the cause beside it; were they ever not paired,
    every cause is kept: an answer then hides more, never less)."""
    reasons = tuple(why for why in s.reasons if why not in had)
    causes = s.causes
    if len(causes) == len(s.reasons):
        causes = tuple(c for why, c in zip(s.reasons, s.causes, strict=True) if why not in had)
    return ViewStatus(s.status, reasons, s.analysis, causes)


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
