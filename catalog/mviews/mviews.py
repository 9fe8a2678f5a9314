"""Materialized views: one MATERIALIZED_VIEW content value per view on the
branch, pointing at one metadata file (core.mv.metadata) that holds the view,
its storage and its refreshes.

Served through the Iceberg REST API in two forms. ``loadView`` always
answers the view form (an engine runs the SQL over the base tables).
``loadTable`` answers the storage form only when the stored rows may be
served: fresh, or stale by no more than the reader accepts (the view's
``max-staleness-ms``, or the reader's ``Sapwood-Max-Staleness-Ms`` header);
otherwise it answers 404, and an engine that asks for a table first (Spark)
goes on to the view form. A refresh (catalog.mviews.refresh) reads the
storage form whatever its freshness.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pyiceberg.schema import Schema
from pyiceberg.types import NestedField
from pyiceberg.view.metadata import SQLViewRepresentation, ViewMetadata, ViewVersion

from catalog.commands import Loaded, ReadOptions
from catalog.kernel import Catalog, Change, Who, refuse_clash, require_namespace
from catalog.metadata.claims import claims
from catalog.metadata.engine_gc import answer_key, served
from catalog.mviews.state import freshness_at
from catalog.targets import Target, dotted
from catalog.views.analysis import Resolver, analyse_version, refuse_cycle, view_relation
from catalog.views.definers import vouch, writer
from catalog.views.engine_types import iceberg_type
from catalog.views.invalidation import check_changes
from catalog.views.security import asks_definer, check_security, recorded
from core.commits import Put, ResolvedRef
from core.content import Content, ContentType, MaterializedView
from core.errors import (
    InvalidInputError,
    NoSuchViewError,
    bad_request,
    no_such_table,
    no_such_view,
)
from core.keys import ContentKey
from core.mv.freshness import Freshness
from core.mv.metadata import (
    MaterializedViewMetadata,
    new_mv_metadata,
    table_part,
    view_part,
    with_view,
)
from core.refs import RefSpec
from core.sql.analysis import analyze
from core.sql.budget import Deadline
from core.views import (
    LAST_ADDED,
    AddSchema,
    AddViewVersion,
    SetCurrentViewVersion,
    SetProperties,
    ViewUpdate,
    apply_view_updates,
    current_version,
    view_as_of,
)

# A reader's own bound on staleness (ms), overriding the view's max-staleness-ms.
STALENESS_HEADER = "Sapwood-Max-Staleness-Ms"


@dataclass(frozen=True, slots=True)
class Definition:
    """A materialized view's definition as the versioning API takes it."""

    sql: str
    dialect: str = "spark"
    default_namespace: tuple[str, ...] = ()
    schema: Schema | None = None


def content(meta: MaterializedViewMetadata, location: str, content_id: str | None,
            analysis: Any) -> MaterializedView:
    found, frozen = analysis
    refresh = meta.current_refresh()
    return MaterializedView(
        id=content_id, metadata_location=location, version_id=meta.current_version_id,
        schema_id=current_version(view_part(meta)).schema_id, extensions=frozen,
        analysis=found,
        snapshot_id=meta.current_snapshot_id if meta.current_snapshot_id is not None else -1,
        refresh_id=refresh.refresh_id if refresh else -1)


@dataclass(frozen=True, slots=True)
class Described:
    """A materialized view as it is at a commit."""

    key: ContentKey
    content: MaterializedView
    meta: MaterializedViewMetadata


class MaterializedViews:
    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.files = catalog.files

    def _now_ms(self) -> int:
        return self.catalog.store.clock() // 1000

    # -- reads --------------------------------------------------------------------
    def at(self, t: Target) -> tuple[ResolvedRef, MaterializedView, MaterializedViewMetadata]:
        resolved, found = self.catalog.read(t.ref, [t.key])
        c = found.get(t.key)
        if not isinstance(c, MaterializedView):
            raise NoSuchViewError(
                               f"Materialized view does not exist: {t.name}")
        return resolved, c, self.files.mv(c.metadata_location)

    def freshness(self, t: Target) -> tuple[Freshness, int, MaterializedViewMetadata]:
        resolved, c, meta = self.at(t)
        now = t.instant_ms if t.instant_ms is not None else self._now_ms()
        return freshness_at(self.catalog, f"@{resolved.hash}", t.key, c, meta, now), now, meta

    def describe(self, t: Target) -> Described:
        _, c, meta = self.at(t)
        return Described(t.key, c, meta)

    def load_table(self, t: Target, resolved: ResolvedRef, c: MaterializedView,
                   options: ReadOptions) -> Loaded:
        """The storage form, if the reader may have the stored rows; else 404
        (the reader then asks for the view form)."""
        loc = c.metadata_location
        meta = self.files.mv(loc)
        if not options.refresh:
            now = t.instant_ms if t.instant_ms is not None else self._now_ms()
            fresh = freshness_at(self.catalog, f"@{resolved.hash}", t.key, c, meta, now)
            bound = (options.max_staleness_ms if options.max_staleness_ms is not None
                     else meta.max_staleness_ms())
            if not fresh.servable(bound):
                raise no_such_table(f"{t.name} (a materialized view whose stored rows are "
                                    f"{fresh.status}: {'; '.join(fresh.reasons)}; it is "
                                    "read as a view)")
        # The storage form depends on the file alone: encoded once, kept.
        key = f"table:{answer_key(loc)}"
        data = self.files.encoded.get(key)
        if data is None:
            data = served(table_part(meta)).model_dump_json().encode()
            self.files.encoded.put(key, data)
        return Loaded(loc, data, key)

    def load_view(self, t: Target, c: MaterializedView) -> Loaded:
        loc = c.metadata_location
        meta = view_part(self.files.mv(loc))
        if t.instant_ms is not None:
            return Loaded(loc, view_as_of(meta, t.instant_ms).model_dump_json().encode())
        key = f"view:{loc}"
        data = self.files.encoded.get(key)
        if data is None:
            data = meta.model_dump_json().encode()
            self.files.encoded.put(key, data)
        return Loaded(loc, data, key)

    # -- writes -------------------------------------------------------------------
    def create(self, ref: RefSpec, key: ContentKey, d: Definition, properties: dict[str, str],
               who: Who) -> Described:
        ns = key.namespace
        if ns is None:
            raise bad_request(f"Cannot create materialized view {dotted(key)}: no namespace")
        location = self.catalog.locations.default(ns.elements, key.name)

        def plan(found: dict[ContentKey, Content]) -> Change[Described]:
            require_namespace(found, ns)
            refuse_clash(found, key, ContentType.MATERIALIZED_VIEW)
            now = self._now_ms()
            deadline = Deadline()  # inferring and analysing: one budget
            schema = d.schema if d.schema is not None else \
                self._infer_schema(ref, key, d, deadline)
            version = ViewVersion(
                version_id=1, schema_id=0, timestamp_ms=now,
                summary={"engine-name": "sapwood"},
                representations=[SQLViewRepresentation(type="sql", sql=d.sql,
                                                       dialect=d.dialect)],
                default_namespace=list(d.default_namespace))
            check_security(properties)
            props, vouches = recorded(properties, None, True, writer(who))
            try:
                meta = new_mv_metadata(location, schema, version, props, now)
            except InvalidInputError as e:
                raise bad_request(e.message) from None
            analysis = self._analysed(ref, key, view_part(meta), deadline)
            if vouches:
                vouch(self.catalog, ref, key, analysis[0], who)
            loc = self.catalog.metadata_file(meta.location, meta.properties, None)
            self.files.write_mv(meta, loc)
            c = content(meta, loc, None, analysis)
            return Change([Put(key, c)], f"create materialized view {dotted(key)}",
                          Described(key, c, meta), [loc], claims(key, meta.location,
                                                                 meta.properties))

        return self.catalog.write(ref, [key, ns], who, plan)

    def replace(self, t: Target, d: Definition | None, properties: dict[str, str],
                who: Who) -> Described:
        """A new version (``d``) and/or properties; a new version makes the
        stored rows stale until the next refresh."""

        def plan(head: ResolvedRef, found: dict[ContentKey, Content]) -> Change[Described]:
            cur = found.get(t.key)
            if not isinstance(cur, MaterializedView):
                raise no_such_view(t.name)
            base = self.files.mv(cur.metadata_location)
            updates: list[ViewUpdate] = []
            deadline = Deadline()  # inferring and analysing: one budget
            if d is not None:
                now = self._now_ms()
                view = view_part(base)
                version = ViewVersion(
                    version_id=max(v.version_id for v in view.versions) + 1,
                    schema_id=LAST_ADDED, timestamp_ms=now, summary={"engine-name": "sapwood"},
                    representations=[SQLViewRepresentation(type="sql", sql=d.sql,
                                                           dialect=d.dialect)],
                    default_namespace=list(d.default_namespace))
                schema = d.schema if d.schema is not None else \
                    self._infer_schema(t.ref, t.key, d, deadline)
                updates += [AddSchema(schema_=schema), AddViewVersion(view_version=version),
                            SetCurrentViewVersion(view_version_id=LAST_ADDED)]
            if properties:
                updates.append(SetProperties(updates=properties))
            return self.plan_view_updates(head, t, cur, base, updates, who, deadline)

        return self.catalog.write_at(t.ref, [t.key], who, plan)

    def plan_view_updates(self, head: ResolvedRef, t: Target, cur: MaterializedView,
                          base: MaterializedViewMetadata, updates: list[ViewUpdate],
                          who: Who, deadline: Deadline | None = None) -> Change[Described]:
        """View updates applied to the view half (a replace from the
        versioning API or an Iceberg REST ``replaceView``): a new version is
        analysed, checked for cycles and against strict dependents; who
        makes it definer, or gives a definer one a new version, becomes its
        definer (catalog.views.definers)."""
        was = view_part(base)
        view = apply_view_updates(was, updates, self._now_ms())
        check_security(view.properties)
        props, vouches = recorded(view.properties, was.properties,
                                  view.current_version_id != was.current_version_id
                                  or asks_definer(updates), writer(who))
        if props != view.properties:
            view = view.model_copy(update={"properties": props})
        try:
            meta = with_view(base, view, self._now_ms())
        except InvalidInputError as e:
            raise bad_request(e.message) from None
        if meta.model_copy(update={"last_updated_ms": base.last_updated_ms}) == base:
            return Change([], "", Described(t.key, cur, base))
        replaced = meta.current_version_id != base.current_version_id
        analysis = (self._analysed(t.ref, t.key, view, deadline) if replaced
                    else (cur.analysis, dict(cur.extensions)))
        if vouches:
            vouch(self.catalog, t.ref, t.key, analysis[0], who)
        loc = self.catalog.metadata_file(meta.location, meta.properties, cur.metadata_location)
        new = content(meta, loc, cur.id, analysis)
        if replaced:
            check_changes(self.catalog, head, "the definition of view", {
                t.key: (new, view_relation(t.key.elements, new, view))})
        self.files.write_mv(meta, loc)
        verb = "replace" if replaced else "alter"
        return Change([Put(t.key, new, expected=cur)], f"{verb} materialized view {t.name}",
                      Described(t.key, new, meta), [loc])

    def _analysed(self, ref: RefSpec, key: ContentKey, view: ViewMetadata,
                  deadline: Deadline | None = None) -> Any:
        """The analysis of the current version, which a materialized view
        cannot do without (its refreshes record the base tables it finds)."""
        analysis = analyse_version(self.catalog, ref, view, deadline)
        found = analysis[0] or []
        broken = [a for a in found if a.status != "ok"]
        if not found or len(broken) == len(found):
            why = "; ".join(r for a in broken for r in a.reasons) or "analysis is switched off"
            raise bad_request(f"Cannot define materialized view {dotted(key)}: its SQL must "
                              f"be analysed against the tables it reads: {why}")
        refuse_cycle(self.catalog, ref, key, found)
        # The storage holds the schema's columns: they must be the query's.
        query = [f.name for f in next(a for a in found if a.status == "ok").field_origins]
        schema = next(s for s in view.schemas if s.schema_id == current_version(view).schema_id)
        named = [f.name for f in schema.fields]
        if [n.lower() for n in named] != [n.lower() for n in query]:
            raise bad_request(f"Cannot define materialized view {dotted(key)}: the schema's "
                              f"columns ({', '.join(named) or 'none'}) are not the query's "
                              f"({', '.join(query)})")
        return analysis

    def _infer_schema(self, ref: RefSpec, key: ContentKey, d: Definition,
                      deadline: Deadline) -> Schema:
        """Output columns and types as sqlglot infers them against the bases
        (an engine that knows better sends its own schema)."""
        a = analyze(d.sql, d.dialect.lower(), d.default_namespace, Resolver(self.catalog, ref).many,
                    with_types=True, deadline=deadline)
        if not a.analysed or a.problems:
            why = a.error or "; ".join(a.problems)
            raise bad_request(f"Cannot define materialized view {dotted(key)}: {why}")
        fields = []
        for i, ((name, _), engine_type) in enumerate(zip(a.columns, a.types, strict=True)):
            kind = iceberg_type(engine_type)
            if kind is None:
                raise bad_request(f"Cannot define materialized view {dotted(key)}: no Iceberg "
                                  f"type for column {name} ({engine_type or 'unknown'}); "
                                  "send the schema")
            fields.append(NestedField(field_id=i + 1, name=name, field_type=kind,
                                      required=False))
        return Schema(*fields)
