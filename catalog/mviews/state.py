"""A materialized view at one commit: the base tables it reads (through
nested views, by their recorded dependencies), what each holds there, and
so whether the stored rows are fresh (core.mv.freshness decides)."""

from __future__ import annotations

from dataclasses import dataclass

from catalog.kernel import Catalog
from catalog.views.invalidation import primary
from catalog.views.status import status
from core.content import IcebergTable, IcebergView, MaterializedView
from core.keys import ContentKey
from core.mv.freshness import Freshness, TableNow, freshness
from core.mv.metadata import MaterializedViewMetadata

MAX_DEPTH = 32


@dataclass(slots=True)
class Bases:
    """What a view reads at a commit, all the way down to tables."""

    tables: dict[ContentKey, IcebergTable | None]
    views: dict[ContentKey, IcebergView | MaterializedView | None]


def bases(catalog: Catalog, at: str, c: IcebergView | MaterializedView) -> Bases:
    """Every table the view reads at commit ``at`` (``@hash``), through the
    views it reads; one store lookup per level of nesting."""
    out = Bases({}, {})
    frontier = [c]
    for _ in range(MAX_DEPTH):
        wanted: dict[ContentKey, str] = {}
        for view in frontier:
            a = primary(view)
            for d in a.dependencies if a else []:
                k = ContentKey(d.key)
                if k not in out.tables and k not in out.views:
                    wanted[k] = d.type
        if not wanted:
            break
        found = catalog.store.lookup(at, list(wanted))[1]
        frontier = []
        for k, kind in wanted.items():
            now = found.get(k)
            if kind == "ICEBERG_TABLE":
                out.tables[k] = now if isinstance(now, IcebergTable) else None
            else:
                ok = now if isinstance(now, IcebergView | MaterializedView) else None
                out.views[k] = ok
                if ok is not None:
                    frontier.append(ok)
    return out


def table_now(catalog: Catalog, c: IcebergTable) -> TableNow:
    meta = catalog.files.table(c.metadata_location)[0]
    return TableNow(c.id or "", meta.current_snapshot_id if meta.current_snapshot_id
                    is not None else -1,
                    tuple((e.snapshot_id, e.timestamp_ms) for e in meta.snapshot_log),
                    meta.last_updated_ms)


def view_version(c: IcebergView | MaterializedView | None) -> int | None:
    return None if c is None else c.version_id


def freshness_at(catalog: Catalog, at: str, key: ContentKey, c: MaterializedView,
                 mv: MaterializedViewMetadata, now_ms: int) -> Freshness:
    """Whether the stored rows of ``c`` (at ``key``) are fresh at commit ``at``."""
    st = status(catalog, at, key, c)
    invalid = (list(st.reasons) if st.status == "invalid" else [] if st.status == "ok"
               else ["the view's SQL could not be analysed"])
    found = bases(catalog, at, c)
    tables = {str(k): (table_now(catalog, t) if t is not None else None)
              for k, t in found.tables.items()}
    views = {str(k): view_version(v) for k, v in found.views.items()}
    return freshness(mv, tables, views, invalid, now_ms)
