"""Views' statuses at a commit: what each reads, looked up there in one go,
and the one rule (core.sql.validity.status_of) applied. Every surface that
says whether a view holds asks here: the status listing (and so ``sapwood
views check``), the dependency, dependents and lineage answers, the audit,
the change feed and the UI."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import TypeVar

from catalog.analysis import Resolver
from catalog.service import Catalog
from core.content import Content, ContentType, IcebergView, MaterializedView
from core.keys import ContentKey
from core.sql.model import Key
from core.sql.stored import DialectAnalysis
from core.sql.validity import ViewStatus, status_of

K = TypeVar("K", bound=Hashable)
VIEW_TYPES = (ContentType.ICEBERG_VIEW, ContentType.MATERIALIZED_VIEW)


def primary(c: Content) -> DialectAnalysis | None:
    """The analysis that speaks for the view: the first representation that
    was analysed (its dependencies are the view's), else the first one (its
    reasons say why none could be)."""
    found = getattr(c, "analysis", None) or []
    return next((a for a in found if a.status != "unanalysed"), found[0] if found else None)


def statuses(catalog: Catalog, at: str, views: Mapping[K, Content]) -> dict[K, ViewStatus]:
    """Each view's status at commit ``at`` (``@hash``): what the views read
    is looked up there in one store lookup (and, for an object gone from its
    key, where it is now, once per object)."""
    analyses = {k: primary(c) for k, c in views.items()}
    wanted = sorted({tuple(d.key) for a in analyses.values()
                     if a is not None and a.status != "unanalysed" for d in a.dependencies})
    now = Resolver(catalog, at).many(wanted) if wanted else {}
    moved = _Moved(catalog, at)
    return {k: status_of(a, now.get, moved) for k, a in analyses.items()}


def status(catalog: Catalog, at: str, view: Content) -> ViewStatus:
    """One view's status at commit ``at``."""
    return statuses(catalog, at, {0: view})[0]


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

