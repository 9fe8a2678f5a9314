"""catalog.merge.content.views: a definer view whose merged version has SQL
of both sides (core.view_merge) keeps its recorded definer only if both
sides recorded the same one — each vouched for its own SQL only."""

from __future__ import annotations

from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField
from pyiceberg.view.metadata import (
    SQLViewRepresentation,
    ViewMetadata,
    ViewRepresentation,
    ViewVersion,
)

from catalog.merge.content.views import merge_views
from core.views import (
    AddViewVersion,
    SetCurrentViewVersion,
    SetProperties,
    apply_view_updates,
    current_version,
    new_view_metadata,
)

SCHEMA = Schema(NestedField(1, "id", LongType(), required=False))
DEFINER = {"sapwood.security": "definer", "sapwood.definer": "ana"}


def version(reps: dict[str, str]) -> ViewVersion:
    return ViewVersion(version_id=-1, schema_id=0, timestamp_ms=5, default_namespace=["ns"],
                       representations=[ViewRepresentation(SQLViewRepresentation(
                           type="sql", sql=sql, dialect=d)) for d, sql in reps.items()])


def add(meta: ViewMetadata, reps: dict[str, str], props: dict[str, str],
        now: int) -> ViewMetadata:
    return apply_view_updates(meta, [
        SetProperties(updates=props), AddViewVersion(view_version=version(reps)),
        SetCurrentViewVersion(view_version_id=-1)], now)


def test_a_version_with_sql_of_both_keeps_a_definer_both_recorded() -> None:
    base = new_view_metadata("file:///w/v", SCHEMA, version({"spark": "SELECT 1"}), DEFINER,
                             100)
    target = add(base, {"spark": "SELECT 1", "trino": "SELECT 1"}, {}, 200)
    source = add(base, {"spark": "SELECT 1", "duckdb": "SELECT 1"}, {}, 300)
    meta, how, combined = merge_views(base, source, target, 400)
    assert how.side == "both" and combined["version"] == "both"
    assert [r.root.dialect for r in current_version(meta).representations] == [
        "spark", "trino", "duckdb"]
    assert meta.properties["sapwood.definer"] == "ana"
    # The source's side recorded another definer for its SQL: neither vouched
    # for the whole merged version, so it lends nothing.
    other = add(base, {"spark": "SELECT 1", "duckdb": "SELECT 1"},
                {"sapwood.definer": "bo"}, 300)
    meta, _, _ = merge_views(base, other, target, 400)
    assert "sapwood.definer" not in meta.properties
    assert meta.properties["sapwood.security"] == "definer"
