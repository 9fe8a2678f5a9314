"""Iceberg views: metadata updates by core's view logic, one ICEBERG_VIEW
content value per view on the branch, and views rebuilt as of an instant."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyiceberg.view.metadata import ViewMetadata

from catalog.commands import Loaded, NewView, Registration, ViewCommit
from catalog.kernel import (
    Catalog,
    Change,
    Who,
    adopted,
    refuse_clash,
    require_namespace,
)
from catalog.metadata.claims import claims, moved
from catalog.metadata.locations import spelled
from catalog.targets import Target, dotted, target
from catalog.views.analysis import analyse_version, refuse_cycle, view_relation
from catalog.views.definers import adopted as adopted_definer
from catalog.views.definers import vouch, writer
from catalog.views.invalidation import check_changes
from catalog.views.security import asks_definer, check_security, recorded
from core.commits import Put, ResolvedRef
from core.content import Content, ContentType, IcebergView, MaterializedView
from core.dialects import HiveExtension
from core.errors import bad_request, no_such_view
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
    from catalog.mviews.mviews import MaterializedViews


def view_content(meta: ViewMetadata, location: str, content_id: str | None,
                 analysis: tuple[list[DialectAnalysis] | None, dict[str, HiveExtension]]
                 | None = None,
                 ) -> IcebergView:
    found, frozen = analysis if analysis is not None else (None, {})
    return IcebergView(id=content_id, metadata_location=location,
                       version_id=meta.current_version_id,
                       schema_id=current_version(meta).schema_id,
                       extensions=frozen, analysis=found)


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

    def load(self, t: Target) -> Loaded:
        c = self.current(t)
        if isinstance(c, MaterializedView) and self.materialized is not None:
            return self.materialized.load_view(t, c)
        loc = c.metadata_location
        meta, data = self.files.view(loc)
        if t.instant_ms is not None:
            then = view_as_of(meta, t.instant_ms)
            if then is not meta:  # as it was then: built for this request
                return Loaded(loc, then.model_dump_json().encode())
        return Loaded(loc, data, cache_key=loc)

    # -- writes -------------------------------------------------------------------
    def create(self, ref: RefSpec, ns: ContentKey, req: NewView, who: Who) -> Loaded:
        # A name may carry its own branch (``t@etl``), as it may for reads.
        t = target(ref, ns, req.name)
        ref, key = t.ref, t.key
        location = (spelled(self.catalog.locations.check(req.location), req.location)
                    if req.location else self.catalog.locations.default(ns.elements, key.name))

        def plan(found: dict[ContentKey, Content]) -> Change[Loaded]:
            require_namespace(found, ns)
            refuse_clash(found, key, ContentType.ICEBERG_VIEW)
            check_security(req.properties)
            props, vouches = recorded(req.properties, None, True, writer(who))
            meta = new_view_metadata(location, req.schema, req.version, props, self._now_ms())
            analysis = analyse_version(self.catalog, ref, meta)
            refuse_cycle(self.catalog, ref, key, analysis[0])
            if vouches:
                vouch(self.catalog, ref, key, analysis[0], who)
            loc = self.catalog.metadata_file(meta.location, meta.properties, None)
            data = self.files.write_view(meta, loc)
            return Change([Put(key, view_content(meta, loc, None, analysis))],
                          f"create view {dotted(key)}", Loaded(loc, data, loc), [loc],
                          claims(key, meta.location, meta.properties))

        return self.catalog.write(ref, [key, ns], who, plan)

    def replace(self, t: Target, req: ViewCommit, who: Who) -> Loaded:
        # Planned again from the newest metadata when the view moved meanwhile:
        # the requirements are checked again and an added version is renumbered.
        def plan(head: ResolvedRef, found: dict[ContentKey, Content]) -> Change[Loaded]:
            cur = found.get(t.key)
            if isinstance(cur, MaterializedView) and self.materialized is not None:
                return self._replace_materialized(head, t, cur, req, who)
            if not isinstance(cur, IcebergView):
                raise no_such_view(t.name)
            base = self.files.view(cur.metadata_location)[0]
            check_view_requirements(base, req.requirements)
            meta = apply_view_updates(base, req.updates, self._now_ms())
            check_security(meta.properties)
            replaced = meta.current_version_id != base.current_version_id
            props, vouches = recorded(meta.properties, base.properties,
                                      replaced or asks_definer(req.updates), writer(who))
            if props != meta.properties:
                meta = meta.model_copy(update={"properties": props})
            if any(isinstance(u, SetLocation) for u in req.updates):
                # The caller's spelling of the location the check passed.
                checked = spelled(self.catalog.locations.check(meta.location), meta.location)
                if checked != meta.location:
                    meta = meta.model_copy(update={"location": checked})
            if meta == base:
                loc = cur.metadata_location
                return Change([], "", Loaded(loc, self.files.view(loc)[1], loc))
            # A new version is analysed against the bases at the head; an
            # altered one (properties, location) keeps its analysis.
            analysis = (analyse_version(self.catalog, t.ref, meta)
                        if replaced or cur.analysis is None
                        else (cur.analysis, dict(cur.extensions)))
            refuse_cycle(self.catalog, t.ref, t.key, analysis[0])
            if vouches:
                vouch(self.catalog, t.ref, t.key, analysis[0], who)
            loc = self.catalog.metadata_file(meta.location, meta.properties, cur.metadata_location)
            new = view_content(meta, loc, cur.id, analysis)
            if replaced:  # the views that read this one must still hold (strict mode)
                check_changes(self.catalog, head, "the definition of view", {
                    t.key: (new, view_relation(t.key.elements, new, meta))})
            data = self.files.write_view(meta, loc)
            verb = "replace" if replaced else "alter"
            after = (meta.location, meta.properties)
            return Change([Put(t.key, new, expected=cur)],
                          f"{verb} view {t.name}", Loaded(loc, data, loc), [loc],
                          claims(t.key, *after)
                          if moved((base.location, base.properties), after) else [])

        return self.catalog.write_at(t.ref, [t.key], who, plan)

    def _replace_materialized(self, head: ResolvedRef, t: Target, cur: MaterializedView,
                              req: ViewCommit, who: Who) -> Change[Loaded]:
        """``replaceView`` on a materialized view (Spark's CREATE OR REPLACE
        VIEW, ALTER VIEW … SET TBLPROPERTIES): the view half changes, the
        storage stays until the next refresh."""
        mv = self.materialized
        base = self.files.mv(cur.metadata_location)
        check_view_requirements(view_part(base), req.requirements)
        if any(isinstance(u, SetLocation) for u in req.updates):
            raise bad_request(f"Cannot move materialized view {t.name}: its storage is there")
        assert mv is not None  # only called with materialized views on
        change = mv.plan_view_updates(head, t, cur, base, list(req.updates), who)
        loc = change.files[0] if change.files else cur.metadata_location
        meta = self.files.mv(loc)
        return Change(change.operations, change.message,
                      Loaded(loc, view_part(meta).model_dump_json().encode(), f"view:{loc}"),
                      change.files)

    def register(self, ref: RefSpec, ns: ContentKey, req: Registration, who: Who) -> Loaded:
        t, location, (meta, data), taken = adopted(self.catalog, ref, ns, req, "view",
                                                   self.files.view)

        def plan(found: dict[ContentKey, Content]) -> Change[Loaded]:
            require_namespace(found, ns)
            refuse_clash(found, t.key, ContentType.ICEBERG_VIEW)
            analysis = analyse_version(self.catalog, t.ref, meta)
            refuse_cycle(self.catalog, t.ref, t.key, analysis[0])
            adopted_definer(self.catalog, t.ref, t.key, meta.properties, analysis[0], who)
            return Change([Put(t.key, view_content(meta, location, None, analysis))],
                          f"register view {t.name}", Loaded(location, data, location),
                          claims=taken)

        return self.catalog.write(t.ref, [t.key, ns], who, plan)
