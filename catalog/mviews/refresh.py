"""Refreshing a materialized view, consistent by construction.

A refresh starts with a plan (``refresh_plan``): the branch's head is pinned
(``branch@hash``), and the plan names the SQL to run and, when only appends
happened to its one base table since the last refresh and the SQL is a
filter/projection or a re-aggregable GROUP BY, the incremental way
(core.sql.incremental). The engine reads every base table through a catalog
at that pinned commit, so all of them come from one commit, and writes the
result into the view's storage with an Iceberg table commit that carries the
``Sapwood-Refresh`` header (``commit_refresh``). That commit lands on the
branch head: it records a refresh whose base tables are exactly the
snapshots at the pinned commit, and it is refused when the view's
definition changed, or another refresh landed, since the pin. Base tables
that moved meanwhile are fine: the refresh is simply already a little stale.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pyiceberg.table.metadata import TableMetadata

from catalog.commands import Loaded, TableCommit
from catalog.kernel import Change, Who
from catalog.metadata.engine_gc import refuse_turning_on, served
from catalog.metadata.table_updates import apply, check_requirements
from catalog.mviews.mviews import MaterializedViews, content
from catalog.mviews.state import bases
from catalog.targets import Target
from core.commits import Put, RefType, ResolvedRef
from core.content import Content, IcebergTable, MaterializedView
from core.errors import NoSuchTableError, bad_request, commit_failed
from core.keys import ContentKey
from core.mv.metadata import (
    CONTENT_ID,
    REFRESH_KIND,
    BaseTable,
    MaterializedViewMetadata,
    Refresh,
    next_refresh_id,
    table_part,
    view_part,
    with_table,
)
from core.refs import parse_ref
from core.sql.incremental import plan_incremental
from core.views import current_version, sql_representations

REFRESH_HEADER = "Sapwood-Refresh"
MODES = ("auto", "full")


class Pinned:
    """A materialized view and everything it reads, at one commit."""

    def __init__(self, views: MaterializedViews, name: str, at: str, c: MaterializedView,
                 meta: MaterializedViewMetadata) -> None:
        self.at = at
        self.c = c
        self.meta = meta
        catalog = views.catalog
        found = bases(catalog, at, c)
        self.views = {str(k): v.version_id for k, v in found.views.items() if v is not None}
        self.tables: dict[str, tuple[IcebergTable, TableMetadata]] = {}
        for k, t in found.tables.items():
            if t is None:
                raise commit_failed(f"Cannot refresh {name}: table {k} does not exist "
                                    f"at commit {at[1:13]}")
            self.tables[str(k)] = (t, catalog.files.table(t.metadata_location)[0])

    def base_tables(self) -> dict[str, BaseTable]:
        return {name: BaseTable(identifier=name, snapshot_reference=_snapshot(meta),
                                properties={CONTENT_ID: t.id or ""})
                for name, (t, meta) in self.tables.items()}


def _snapshot(meta: TableMetadata) -> int:
    return meta.current_snapshot_id if meta.current_snapshot_id is not None else -1


def _sql(meta: MaterializedViewMetadata, dialect: str) -> tuple[str, list[str]]:
    version = current_version(view_part(meta))
    reps = {r.dialect.lower(): r.sql for r in
            sql_representations(version)}
    if dialect not in reps:
        raise bad_request(f"The view has no {dialect} representation to refresh with "
                          f"(it has: {', '.join(sorted(reps))})")
    return reps[dialect], list(version.default_namespace or [])


def appends_since(meta: TableMetadata, since: int) -> str | None:
    """Why the snapshots after ``since`` up to the current one are not all
    plain appends in the same schema (None: they are)."""
    by_id = {s.snapshot_id: s for s in meta.snapshots}
    first = by_id.get(since)
    if first is None:
        return f"snapshot {since} read last time is no longer in the table"
    at = meta.current_snapshot_id
    while at is not None and at != since:
        s = by_id.get(at)
        if s is None:
            return "the snapshots since the last refresh are not all kept"
        op = s.summary.operation.value if s.summary else "unknown"
        if op != "append":
            return f"snapshot {at} is an {op}, not an append"
        if s.schema_id != first.schema_id:
            return f"the table's schema changed in snapshot {at}"
        at = s.parent_snapshot_id
    return None if at == since else f"snapshot {since} is not an ancestor of the current one"


@dataclass(frozen=True, slots=True)
class IncrementalStep:
    """How an incremental refresh runs: the view's SQL over the appended rows
    (``delta_sql``), and for an aggregate the merge with the stored groups."""

    shape: str
    table: str
    from_snapshot: int
    to_snapshot: int
    delta_sql: str
    merge_sql: str | None


@dataclass(frozen=True, slots=True)
class Decision:
    kind: Literal["full", "incremental", "none"]
    reason: str
    incremental: IncrementalStep | None = None


@dataclass(frozen=True, slots=True)
class RefreshPlan:
    """What an engine refreshing the view does: read the base tables at the
    pinned commit (branch@hash), run ``sql``, write with a table commit."""

    key: ContentKey
    branch: str
    hash: str
    version_id: int
    dialect: str
    sql: str
    default_namespace: list[str]
    base_tables: dict[str, int]
    views: dict[str, int]
    decision: Decision

    @property
    def pinned_reference(self) -> str:
        return f"{self.branch}@{self.hash}"


def decide(p: Pinned, mode: str, dialect: str) -> Decision:
    """Full or incremental, and the SQL of each step; "none" when fresh."""
    meta = p.meta
    last = meta.current_refresh()
    if mode == "full":
        return Decision("full", "a full refresh was asked for")
    if last is None:
        return Decision("full", "never refreshed")
    if last.version_id != meta.current_version_id:
        return Decision("full", "the definition changed since the last refresh")
    if last.views != p.views:
        return Decision("full", "a view it reads changed since the last refresh")
    base = p.base_tables()
    read = {k: b.snapshot_reference for k, b in last.base_tables.items()}
    if read == {k: b.snapshot_reference for k, b in base.items()}:
        return Decision("none", "fresh: no base table changed since the last refresh")
    if p.views or len(base) != 1:
        return Decision("full", f"it reads {len(base)} tables"
                        + (" through views" if p.views else ""))
    (name, b), = base.items()
    was = last.base_tables.get(name)
    if was is None or was.properties.get(CONTENT_ID) != b.properties.get(CONTENT_ID):
        return Decision("full", f"table {name} is not the one read last time")
    why = appends_since(p.tables[name][1], was.snapshot_reference)
    if why:
        return Decision("full", f"table {name}: {why}")
    version = current_version(view_part(meta))
    schema = next(s for s in meta.schemas if s.schema_id == version.schema_id)
    plan = plan_incremental(_sql(meta, dialect)[0], dialect, [f.name for f in schema.fields])
    if plan.shape is None:
        return Decision("full", plan.why)
    return Decision("incremental", f"only appends to {name} since the last refresh",
                    IncrementalStep(plan.shape, name, was.snapshot_reference,
                                    b.snapshot_reference, plan.delta_sql,
                                    plan.merge_sql or None))


def refresh_plan(views: MaterializedViews, t: Target, mode: str = "auto",
                 dialect: str = "spark") -> RefreshPlan:
    if mode not in MODES:
        raise bad_request(f"Invalid refresh mode {mode!r}: expected one of {', '.join(MODES)}")
    resolved, c, meta = views.at(t)
    if resolved.type is not RefType.BRANCH or resolved.name is None or t.instant_ms is not None:
        raise bad_request(f"Cannot refresh {t.name} at '{t.ref}': a refresh lands on a "
                          "branch (name one, optionally pinned as branch@hash)")
    p = Pinned(views, t.name, f"@{resolved.hash}", c, meta)
    sql, default_ns = _sql(meta, dialect.lower())
    return RefreshPlan(t.key, resolved.name, resolved.hash, meta.current_version_id,
                       dialect.lower(), sql, default_ns,
                       {k: b.snapshot_reference for k, b in p.base_tables().items()},
                       p.views, decide(p, mode, dialect.lower()))


def commit_refresh(views: MaterializedViews, t: Target, req: TableCommit,
                   header: str, who: Who) -> Loaded:
    """An Iceberg table commit to a materialized view's storage, made through
    a catalog pinned at ``branch@hash``: lands on the branch as a refresh."""
    try:
        version = int(header)
    except ValueError:
        raise bad_request(f"Invalid {REFRESH_HEADER} header {header!r}: expected the view "
                          "version the refresh computed") from None
    catalog = views.catalog
    pinned = catalog.store.resolve(t.ref)
    if pinned.type is not RefType.BRANCH or pinned.name is None or t.ref.hash is None \
            or t.instant_ms is not None:
        raise bad_request(f"A refresh of {t.name} is written through a catalog pinned at "
                          f"branch@hash (the commit its base tables were read at), not "
                          f"at '{t.ref}'")
    at = f"@{pinned.hash}"
    then = catalog.store.lookup(at, [t.key])[1].get(t.key)
    if not isinstance(then, MaterializedView):
        raise NoSuchTableError(f"Materialized view does not exist: {t.name} at '{t.ref}'")
    if then.version_id != version:
        raise commit_failed(f"Refresh of {t.name} refused: it computed version {version}, "
                            f"but version {then.version_id} is the one at {pinned.hash[:12]}")
    p = Pinned(views, t.name, at, then, catalog.files.mv(then.metadata_location))

    def plan(head: ResolvedRef, found: dict[ContentKey, Content]) -> Change[Loaded]:
        cur = found.get(t.key)
        _still_refreshable(t, cur, then, pinned.hash)
        assert isinstance(cur, MaterializedView)
        return _refresh_change(views, t, req, p, cur, pinned.hash)

    return catalog.write_at(parse_ref(pinned.name), [t.key], who, plan)


def _still_refreshable(t: Target, cur: Content | None, then: MaterializedView,
                       pinned: str) -> None:
    """409 when the view at the head is not the one the refresh computed."""
    if not isinstance(cur, MaterializedView) or cur.id != then.id:
        raise commit_failed(f"Refresh of {t.name} refused: the materialized view was "
                            f"dropped or replaced by another object since {pinned[:12]}")
    if cur.version_id != then.version_id:
        raise commit_failed(f"Refresh of {t.name} refused: its definition changed since "
                            f"the refresh began (version {then.version_id} → "
                            f"{cur.version_id}); refresh again")
    if cur.refresh_id != then.refresh_id:
        raise commit_failed(f"Refresh of {t.name} refused: another refresh "
                            f"({cur.refresh_id}) landed since the refresh began")


def _refresh_change(views: MaterializedViews, t: Target, req: TableCommit, p: Pinned,
                    cur: MaterializedView, pinned: str) -> Change[Loaded]:
    """The storage commit applied to the view's current metadata, with a
    refresh record of the base tables at the pinned commit."""
    catalog = views.catalog
    base = catalog.files.mv(cur.metadata_location)
    table = table_part(base)
    check_requirements(table, req.requirements)
    refuse_turning_on(t.name, req.updates)
    catalog.files.require_snapshots(t.name, req.updates, table, table)
    new = apply(table, req.updates, cur.metadata_location)
    snap = new.current_snapshot()
    if snap is None or snap.snapshot_id == table.current_snapshot_id:
        raise bad_request(f"A refresh of {t.name} must write a new current snapshot")
    kind = (snap.summary.get(REFRESH_KIND) if snap.summary else None) or "full"
    if kind not in ("full", "incremental"):
        raise bad_request(f"Invalid {REFRESH_KIND}={kind!r} in the snapshot summary: "
                          "expected full or incremental")
    if kind == "incremental" and decide(p, "auto", _dialect(p.meta)).kind != "incremental":
        raise bad_request(f"Refresh of {t.name} refused: it says incremental, but only "
                          "a full refresh is right at the pinned commit")
    now = views._now_ms()
    refresh = Refresh(refresh_id=next_refresh_id(base), version_id=cur.version_id,
                      base_tables=p.base_tables(), sequence_number=snap.sequence_number,
                      timestamp_ms=now, snapshot_id=snap.snapshot_id, kind=kind,
                      source_commit=pinned, views=p.views)
    meta = with_table(base, new, refresh, now)
    loc = catalog.metadata_file(meta.location, meta.properties, cur.metadata_location)
    catalog.files.write_mv(meta, loc)
    value = content(meta, loc, cur.id, (cur.analysis, dict(cur.extensions)))
    return Change([Put(t.key, value, expected=cur)],
                  f"refresh materialized view {t.name} ({kind}, base tables at {pinned[:12]})",
                  Loaded(loc, served(table_part(meta)).model_dump_json().encode()), [loc])


def _dialect(meta: MaterializedViewMetadata) -> str:
    """The dialect a refresh runs: Spark's when the view has it."""
    version = current_version(view_part(meta))
    dialects = [r.dialect.lower() for r in sql_representations(version)]
    return "spark" if "spark" in dialects else dialects[0]
