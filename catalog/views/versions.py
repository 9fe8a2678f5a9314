"""New view versions the catalog makes itself: a representation in another
dialect, transpiled by sqlglot from one the view has (marked generated in the
version summary), and a recompile; committed like any replace."""

from __future__ import annotations

from dataclasses import dataclass

from pyiceberg.schema import Schema
from pyiceberg.types import NestedField
from pyiceberg.view.metadata import SQLViewRepresentation, ViewMetadata, ViewVersion

from catalog.commands import Loaded
from catalog.kernel import Catalog, Change, Who
from catalog.targets import Target
from catalog.views.analysis import Resolver, analyse_version
from catalog.views.engine_types import iceberg_type
from catalog.views.views import Views, view_content
from core.commits import Put
from core.content import Content, IcebergView
from core.errors import (
    RequirementFailedError,
    already_exists,
    bad_request,
    no_such_view,
)
from core.keys import ContentKey
from core.sql.analysis import Analysis, analyze, known_dialect
from core.sql.budget import Deadline
from core.sql.transpile import GENERATED, provenance, transpile
from core.views import (
    LAST_ADDED,
    AddSchema,
    AddViewVersion,
    SetCurrentViewVersion,
    apply_view_updates,
    sql_representations,
)
from core.views import current_version as current

RECOMPILED = "sapwood.recompiled-from-version"


def add_representation(views: Views, t: Target, source: str, target: str, who: Who,
                       ) -> Loaded:
    catalog = views.catalog
    source, target = source.lower(), target.lower()
    for dialect in (source, target):  # before anything is read or written
        if not known_dialect(dialect):
            raise bad_request(f"sqlglot does not know the SQL dialect {dialect!r}")

    def plan(found: dict[ContentKey, Content]) -> Change[Loaded]:
        cur, base, version = _current_view(catalog, found, t)
        reps = {r.dialect.lower(): r for r in sql_representations(version)}
        if source not in reps:
            raise bad_request(f"View {t.name} has no {source} representation to transpile "
                              f"from (it has: {', '.join(sorted(reps))})")
        if target in reps:
            raise already_exists(f"View {t.name} already has a {target} representation")
        sql = transpile(reps[source].sql, source, target)
        added = ViewVersion(
            version_id=max(v.version_id for v in base.versions) + 1,
            schema_id=version.schema_id, timestamp_ms=views._now_ms(),
            summary={**version.summary, GENERATED: provenance(source, target)},
            representations=[*version.representations,
                             SQLViewRepresentation(type="sql", sql=sql, dialect=target)],
            default_namespace=version.default_namespace,
            default_catalog=version.default_catalog)
        meta = apply_view_updates(base, [AddViewVersion(view_version=added),
                                         SetCurrentViewVersion(view_version_id=LAST_ADDED)],
                                  views._now_ms())
        analysis = analyse_version(catalog, t.ref, meta)
        loc = catalog.metadata_file(meta.location, meta.properties, cur.metadata_location)
        data = catalog.files.write_view(meta, loc)
        return Change([Put(t.key, view_content(meta, loc, cur.id, analysis), expected=cur)],
                      f"transpile view {t.name} from {source} to {target}",
                      Loaded(loc, data, loc), [loc])

    return catalog.write(t.ref, [t.key], who, plan)


@dataclass(frozen=True, slots=True)
class Recompiled:
    recompiled: bool
    version_id: int
    expanded_text: str | None
    # The output columns of the new version (None when none was made).
    columns: list[str] | None = None


def recompile(views: Views, t: Target, who: Who) -> Recompiled:
    """Hive's ALTER VIEW … RECOMPILE: the view's SQL analysed again against
    the objects it reads now; when the expanded text or the output columns
    changed, a new version with the same SQL and the new schema (columns that
    were there keep their type; new ones take the type sqlglot infers). A view
    that does not hold stays as it is: 409 with its reasons."""
    catalog = views.catalog

    def plan(found: dict[ContentKey, Content]) -> Change[Recompiled]:
        cur, base, version = _current_view(catalog, found, t)
        schema = next(s for s in base.schemas if s.schema_id == version.schema_id)
        a = _analysed_again(catalog, t, version)
        fields = _columns(t, schema, a)
        was = getattr(cur.extensions.get("hive"), "expanded_text", None)
        same_columns = [(f.name, str(f.field_type)) for f in schema.fields] == \
            [(f.name, str(f.field_type)) for f in fields]
        if same_columns and was == a.expanded_sql:
            return Change([], "", Recompiled(False, version.version_id, a.expanded_sql))
        added = ViewVersion(
            version_id=max(v.version_id for v in base.versions) + 1, schema_id=LAST_ADDED,
            timestamp_ms=views._now_ms(),
            summary={**version.summary, RECOMPILED: str(version.version_id)},
            representations=version.representations,
            default_namespace=version.default_namespace,
            default_catalog=version.default_catalog)
        meta = apply_view_updates(base, [
            AddSchema(schema_=Schema(*fields, schema_id=LAST_ADDED)),
            AddViewVersion(view_version=added),
            SetCurrentViewVersion(view_version_id=LAST_ADDED)], views._now_ms())
        analysis = analyse_version(catalog, t.ref, meta)
        loc = catalog.metadata_file(meta.location, meta.properties, cur.metadata_location)
        catalog.files.write_view(meta, loc)
        return Change([Put(t.key, view_content(meta, loc, cur.id, analysis), expected=cur)],
                      f"recompile view {t.name}",
                      Recompiled(True, meta.current_version_id, a.expanded_sql,
                                 [f.name for f in fields]), [loc])

    return catalog.write(t.ref, [t.key], who, plan)


def _current_view(catalog: Catalog, found: dict[ContentKey, Content], t: Target,
                  ) -> tuple[IcebergView, ViewMetadata, ViewVersion]:
    """The view at ``t`` as found, its metadata and its current version."""
    cur = found.get(t.key)
    if not isinstance(cur, IcebergView):
        raise no_such_view(t.name)
    base = catalog.files.view(cur.metadata_location)[0]
    return cur, base, current(base)


def _analysed_again(catalog: Catalog, t: Target, version: ViewVersion) -> Analysis:
    """The first representation that analyses, with its output types; 409
    when none holds against what it reads now."""
    resolve = Resolver(catalog, t.ref)
    deadline = Deadline()  # one budget for all of them
    reps = sql_representations(version)
    analysed = [analyze(r.sql, r.dialect.lower(), tuple(version.default_namespace or ()),
                        resolve.many, version.default_catalog, with_types=True,
                        deadline=deadline) for r in reps]
    a = next((x for x in analysed if x.analysed), None)
    if a is None or a.problems:
        why = "; ".join(a.problems) if a else "; ".join(x.error or "" for x in analysed)
        raise RequirementFailedError(f"View {t.name} cannot be recompiled: {why}")
    return a


def _columns(t: Target, schema: Schema, a: Analysis) -> list[NestedField]:
    """The recompiled output columns: those that were there keep their type."""
    old = {f.name: f.field_type for f in schema.fields}
    fields = []
    for i, ((name, _), engine_type) in enumerate(zip(a.columns, a.types, strict=True)):
        kind = old.get(name) or iceberg_type(engine_type)
        if kind is None:
            raise RequirementFailedError(
                f"View {t.name} cannot be recompiled: no Iceberg type for its new column "
                f"{name} ({engine_type or 'unknown'})")
        fields.append(NestedField(field_id=i + 1, name=name, field_type=kind, required=False))
    return fields
