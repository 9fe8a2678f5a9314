"""New view versions the catalog makes itself: a representation in another
dialect, transpiled by sqlglot from one the view has (marked generated in the
version summary), committed like any replace."""

from __future__ import annotations

from pyiceberg.view.metadata import SQLViewRepresentation, ViewVersion

from api.catalog.analysis import analyse_version
from api.catalog.files import load_result
from api.catalog.service import Change, Who
from api.catalog.views import Views, view_content
from api.errors import already_exists, bad_request, no_such_view
from api.paths import Target
from core.commits import Put
from core.content import Content, IcebergView
from core.keys import ContentKey
from core.sql.transpile import GENERATED, provenance, transpile
from core.views import LAST_ADDED, AddViewVersion, SetCurrentViewVersion, apply_view_updates
from core.views import current_version as current


def add_representation(views: Views, t: Target, source: str, target: str, who: Who) -> bytes:
    catalog = views.catalog
    source, target = source.lower(), target.lower()

    def plan(found: dict[ContentKey, Content]) -> Change[bytes]:
        cur = found.get(t.key)
        if not isinstance(cur, IcebergView):
            raise no_such_view(t.name)
        base = catalog.files.view(cur.metadata_location)[0]
        version = current(base)
        reps = {r.root.dialect.lower(): r.root for r in version.representations}
        if source not in reps:
            raise bad_request(f"View {t.name} has no {source} representation to transpile "
                              f"from (it has: {', '.join(sorted(reps))})")
        if target in reps:
            raise already_exists(f"View {t.name} already has a {target} representation")
        sql = transpile(reps[source].sql, source, target)  # type: ignore[union-attr]
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
                      load_result(loc, data), [loc])

    return catalog.write(t.ref, [t.key], who, plan)  # type: ignore[return-value]
