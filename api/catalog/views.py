"""Iceberg views: metadata updates by core's view logic, one ICEBERG_VIEW
content value per view on the branch, and views rebuilt as of an instant."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyiceberg.view.metadata import ViewMetadata

from api.catalog.analysis import analyse_version, find_cycle, view_relation
from api.catalog.claims import claims, moved
from api.catalog.files import load_result
from api.catalog.invalidation import check_changes
from api.catalog.service import Catalog, Change, Who, clash, require_namespace
from api.errors import IcebergError, bad_request, no_such_view
from api.models import CommitViewRequest, CreateViewRequest, RegisterViewRequest
from api.paths import Target, check_identifier, dotted, target
from core.commits import Put, ResolvedRef
from core.content import Content, ContentType, IcebergView, MaterializedView
from core.dialects import HiveExtension
from core.keys import ContentKey
from core.mv.metadata import view_part
from core.refs import RefSpec
from core.sql.stored import DialectAnalysis
from core.views import (
    SetLocation,
    apply_view_updates,
    check_view_requirements,
    current_version,
    new_view_metadata,
    view_as_of,
)

if TYPE_CHECKING:
    from api.catalog.mviews import MaterializedViews


def view_content(meta: ViewMetadata, location: str, content_id: str | None,
                 analysis: tuple[list[DialectAnalysis] | None, dict[str, HiveExtension]]
                 | None = None,
                 ) -> IcebergView:
    found, frozen = analysis if analysis is not None else (None, {})
    return IcebergView(id=content_id, metadata_location=location,
                       version_id=meta.current_version_id,
                       schema_id=current_version(meta).schema_id,
                       extensions=frozen, analysis=found)


def refuse_cycle(catalog: Catalog, ref: RefSpec, key: ContentKey,
                 analyses: list[DialectAnalysis] | None) -> None:
    cycle = find_cycle(catalog, ref, key, analyses)
    if cycle:
        raise bad_request(f"View {dotted(key)} would read itself: "
                          + " → ".join(dotted(k) for k in cycle))


class Views:
    def __init__(self, catalog: Catalog, materialized: MaterializedViews | None = None) -> None:
        self.catalog = catalog
        self.files = catalog.files
        # A materialized view loads and is replaced as a view too.
        self.materialized = materialized

    def _now_ms(self) -> int:
        return self.catalog.store.clock() // 1000

    # -- reads --------------------------------------------------------------------
    def current(self, t: Target) -> IcebergView | MaterializedView:
        c = self.catalog.get(t.ref, t.key)
        if not isinstance(c, IcebergView | MaterializedView) or (
                isinstance(c, MaterializedView) and self.materialized is None):
            raise no_such_view(t.name)
        return c

    def load(self, t: Target) -> bytes:
        c = self.current(t)
        if isinstance(c, MaterializedView):
            return self.materialized.load_view(t, c)  # type: ignore[union-attr]
        loc = c.metadata_location
        if t.instant_ms is not None:
            meta, data = self.files.view(loc)
            then = view_as_of(meta, t.instant_ms)
            return load_result(loc, data if then is meta else then.model_dump_json().encode())
        body = self.files.bodies.get(loc)
        if body is None:
            body = load_result(loc, self.files.view(loc)[1])
            self.files.bodies.put(loc, body)
        return body

    # -- writes -------------------------------------------------------------------
    def create(self, ref: RefSpec, ns: ContentKey, req: CreateViewRequest, who: Who) -> bytes:
        # A name may carry its own branch (``t@etl``), as it may for reads.
        t = target(ref, ns, req.name)
        ref, key = t.ref, t.key
        location = (self.catalog.locations.check(req.location) if req.location
                    else self.catalog.locations.default(ns.elements, key.name))

        def plan(found: dict[ContentKey, Content]) -> Change[bytes]:
            require_namespace(found, ns)
            err = clash(found, key, ContentType.ICEBERG_VIEW)
            if err:
                raise err
            meta = new_view_metadata(location, req.schema_, req.view_version,
                                     dict(req.properties), self._now_ms())
            analysis = analyse_version(self.catalog, ref, meta)
            refuse_cycle(self.catalog, ref, key, analysis[0])
            loc = self.catalog.metadata_file(meta.location, meta.properties, None)
            data = self.files.write_view(meta, loc)
            return Change([Put(key, view_content(meta, loc, None, analysis))],
                          f"create view {dotted(key)}", load_result(loc, data), [loc],
                          claims(key, meta.location, meta.properties))

        return self.catalog.write(ref, [key, ns], who, plan)  # type: ignore[return-value]

    def replace(self, t: Target, req: CommitViewRequest, who: Who) -> bytes:
        ident = req.identifier
        check_identifier(ident.namespace if ident else None, ident.name if ident else None, t)

        # Planned again from the newest metadata when the view moved meanwhile:
        # the requirements are checked again and an added version is renumbered.
        def plan(head: ResolvedRef, found: dict[ContentKey, Content]) -> Change[bytes]:
            cur = found.get(t.key)
            if isinstance(cur, MaterializedView) and self.materialized is not None:
                return self._replace_materialized(head, t, cur, req)
            if not isinstance(cur, IcebergView):
                raise no_such_view(t.name)
            base = self.files.view(cur.metadata_location)[0]
            check_view_requirements(base, req.requirements)
            meta = apply_view_updates(base, req.updates, self._now_ms())
            if any(isinstance(u, SetLocation) for u in req.updates):
                checked = self.catalog.locations.check(meta.location)
                if checked != meta.location:  # keep the spelling that was checked
                    meta = meta.model_copy(update={"location": checked})
            if meta == base:
                return Change([], "", load_result(cur.metadata_location,
                                                self.files.view(cur.metadata_location)[1]))
            replaced = meta.current_version_id != base.current_version_id
            # A new version is analysed against the bases at the head; an
            # altered one (properties, location) keeps its analysis.
            analysis = (analyse_version(self.catalog, t.ref, meta)
                        if replaced or cur.analysis is None
                        else (cur.analysis, dict(cur.extensions)))
            refuse_cycle(self.catalog, t.ref, t.key, analysis[0])
            loc = self.catalog.metadata_file(meta.location, meta.properties, cur.metadata_location)
            new = view_content(meta, loc, cur.id, analysis)
            if replaced:  # the views that read this one must still hold (strict mode)
                check_changes(self.catalog, head, "the definition of view", {
                    t.key: (new, view_relation(t.key.elements, new, meta))})
            data = self.files.write_view(meta, loc)
            verb = "replace" if replaced else "alter"
            after = (meta.location, meta.properties)
            return Change([Put(t.key, new, expected=cur)],
                          f"{verb} view {t.name}", load_result(loc, data), [loc],
                          claims(t.key, *after)
                          if moved((base.location, base.properties), after) else [])

        return self.catalog.write_at(t.ref, [t.key], who, plan)  # type: ignore[return-value]

    def _replace_materialized(self, head: ResolvedRef, t: Target, cur: MaterializedView,
                              req: CommitViewRequest) -> Change[bytes]:
        """``replaceView`` on a materialized view (Spark's CREATE OR REPLACE
        VIEW, ALTER VIEW … SET TBLPROPERTIES): the view half changes, the
        storage stays until the next refresh."""
        mv = self.materialized
        base = self.files.mv(cur.metadata_location)
        check_view_requirements(view_part(base), req.requirements)
        if any(isinstance(u, SetLocation) for u in req.updates):
            raise bad_request(f"Cannot move materialized view {t.name}: its storage is there")
        change = mv.plan_view_updates(head, t, cur, base, list(req.updates))  # type: ignore[union-attr]
        loc = change.files[0] if change.files else cur.metadata_location
        meta = self.files.mv(loc)
        return Change(change.operations, change.message,
                      load_result(loc, view_part(meta).model_dump_json().encode()), change.files)

    def register(self, ref: RefSpec, ns: ContentKey, req: RegisterViewRequest, who: Who) -> bytes:
        # A name may carry its own branch (``t@etl``), as it may for reads.
        t = target(ref, ns, req.name)
        ref, key = t.ref, t.key
        try:
            # Checked before anything is opened (the reader checks it again).
            location = self.catalog.locations.check(req.metadata_location)
            meta, data = self.files.view(location)
        except IcebergError as e:  # a missing or unreadable file is the request's fault
            raise bad_request(f"Cannot register view {dotted(key)}: "
                              f"{e.message}") from None

        # As for tables: only views from outside this catalog are adopted.
        taken = claims(key, meta.location, meta.properties, exclusive=True)

        def plan(found: dict[ContentKey, Content]) -> Change[bytes]:
            require_namespace(found, ns)
            err = clash(found, key, ContentType.ICEBERG_VIEW)
            if err:
                raise err
            analysis = analyse_version(self.catalog, ref, meta)
            refuse_cycle(self.catalog, ref, key, analysis[0])
            return Change([Put(key, view_content(meta, location, None, analysis))],
                          f"register view {dotted(key)}", load_result(location, data),
                          claims=taken)

        return self.catalog.write(ref, [key, ns], who, plan)  # type: ignore[return-value]
