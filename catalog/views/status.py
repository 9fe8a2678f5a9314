"""Views' statuses at a commit: the one verdict every surface shows.

What each view reads is looked up there, one store lookup per level of
views reading views; the one rule (core.sql.validity.status_of) is applied
to each view once, and carried through the views that read views
(core.sql.transitive: a view holds only if everything it reads, at any
depth, holds; its reasons name the way). Every surface that says whether a
view holds asks here: the status listing (and so ``sapwood view check``),
the dependency, dependents and lineage answers, the audit, the change feed,
a merge's dry run (catalog.merge.impact) and the UI."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from catalog.kernel import Catalog
from catalog.limits import MAX_VIEW_NESTING
from catalog.views.analysis import Resolver
from core.content import Content, ContentType, IcebergView, MaterializedView
from core.keys import ContentKey
from core.sql.model import Key
from core.sql.stored import DialectAnalysis
from core.sql.transitive import transitive
from core.sql.validity import ViewStatus, status_of

VIEW_TYPES = (ContentType.ICEBERG_VIEW, ContentType.MATERIALIZED_VIEW)


def primary(c: Content) -> DialectAnalysis | None:
    """The analysis that speaks for the view: the first representation that
    was analysed (its dependencies are the view's), else the first one (its
    reasons say why none could be)."""
    found = getattr(c, "analysis", None) or []
    return next((a for a in found if a.status != "unanalysed"), found[0] if found else None)


class Verdicts:
    """Views' statuses at commit ``at`` (``@hash``), each view judged once
    however many views read it, for the life of this object (one request).
    ``overlay`` answers for some keys instead of the commit (None: nothing
    there): a merge's result, which no commit holds yet."""

    def __init__(self, catalog: Catalog, at: str,
                 overlay: Mapping[ContentKey, Content | None] | None = None) -> None:
        self.resolve = Resolver(catalog, at, overlay)
        # Where a base is now, by its content id, when it is gone from its
        # key: the commit's history says; a merge's result has none.
        self.moved = _Moved(catalog, at) if overlay is None else None
        self.views: dict[Key, Content] = {}
        self.direct: dict[Key, ViewStatus] = {}
        # Per view judged: the views it reads that still are what it read.
        self.reads: dict[Key, list[Key]] = {}

    def of(self, views: Mapping[ContentKey, Content]) -> dict[ContentKey, ViewStatus]:
        """The status of each of ``views`` (the views their keys hold at ``at``)."""
        for k, c in views.items():
            self.views.setdefault(k.elements, c)
        wanted = [k.elements for k in views]
        self._look(wanted)
        done = transitive(self.direct, self.reads, wanted, MAX_VIEW_NESTING)
        return {k: done[k.elements] for k in views}

    def _look(self, wanted: list[Key]) -> None:
        """Each view down to MAX_VIEW_NESTING levels below ``wanted`` judged
        on its own: one lookup per level for those not judged yet."""
        frontier = list(dict.fromkeys(wanted))
        seen = set(frontier)
        for _ in range(MAX_VIEW_NESTING + 1):
            new = [k for k in frontier if k not in self.direct]
            if new:
                self._judge(new)
            frontier = [d for k in frontier for d in self.reads[k] if d not in seen]
            seen.update(frontier)
            if not frontier:
                break

    def _judge(self, keys: list[Key]) -> None:
        analyses = {k: primary(self.views[k]) for k in keys}
        wanted = sorted({tuple(d.key) for a in analyses.values()
                         if a is not None and a.status != "unanalysed" for d in a.dependencies})
        if wanted:
            self.resolve.many(wanted)
        for k, a in analyses.items():
            self.direct[k] = status_of(a, self.resolve.known, self.moved)
            self.reads[k] = []
            for d in a.dependencies if a is not None and a.status != "unanalysed" else []:
                now = self.resolve.contents.get(tuple(d.key))
                if isinstance(now, IcebergView | MaterializedView) and now.id == d.content_id:
                    self.reads[k].append(tuple(d.key))
                    self.views.setdefault(tuple(d.key), now)


def statuses(catalog: Catalog, at: str, views: Mapping[ContentKey, Content],
             ) -> dict[ContentKey, ViewStatus]:
    """Each view's status at commit ``at`` (``@hash``), the views given by
    the keys that hold them there."""
    return Verdicts(catalog, at).of(views)


def status(catalog: Catalog, at: str, key: ContentKey, view: Content) -> ViewStatus:
    """One view's status at commit ``at``, ``key`` holding it there."""
    return statuses(catalog, at, {key: view})[key]


def listing(catalog: Catalog, at: str, keys: Sequence[ContentKey] | None = None,
            ) -> list[tuple[ContentKey, Content, ViewStatus]]:
    """The views at commit ``at`` (all of them, or those of ``keys`` that
    are views) with their statuses, in key order."""
    store = catalog.store
    found: dict[ContentKey, Content] = {}
    if keys is not None:
        found = {k: c for k, c in store.lookup(at, keys)[1].items()
                 if isinstance(c, IcebergView | MaterializedView)}
    else:
        token = None
        while True:
            page = store.entries(at, types=VIEW_TYPES, page_token=token, page_size=1000,
                                 with_content=True)
            found |= {e.key: e.content for e in page.items if e.content is not None}
            token = page.next_token
            if not token:
                break
    done = statuses(catalog, at, found)
    return [(k, found[k], done[k]) for k in sorted(found, key=lambda k: k.elements)]


class _Moved:
    """Where an object is now at ``at``, by its content id (a base renamed
    since the view was written): the key the newest commit that put it used,
    if that key still holds it. Asked only for a dependency that is gone."""

    def __init__(self, catalog: Catalog, at: str) -> None:
        self.catalog = catalog
        self.at = at
        self.seen: dict[str, Key | None] = {}

    def __call__(self, content_id: str) -> Key | None:
        if content_id not in self.seen:
            self.seen[content_id] = self._find(content_id)
        return self.seen[content_id]

    def _find(self, content_id: str) -> Key | None:
        store = self.catalog.store
        commits = store.lineage(self.at, content_id)
        key = next((op.key for c in commits[:1] for op in c.operations
                    if op.entry is not None and op.entry.content_id == content_id), None)
        if key is None:
            return None
        found = store.lookup(self.at, [key])[1].get(key)
        return key.elements if found is not None and found.id == content_id else None

