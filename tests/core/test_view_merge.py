"""core.view_merge: a view both sides of a merge gave a new version, merged
dialect by dialect without I/O — what combines into one new version (the
view spec's ids and version-log), and what stays a conflict that says per
dialect what each side did, with a diff each."""

from __future__ import annotations

import pytest
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField
from pyiceberg.view.metadata import (
    SQLViewRepresentation,
    ViewMetadata,
    ViewRepresentation,
    ViewVersion,
)

from core.errors import InvalidInputError
from core.view_merge import action, merge_versions, with_version
from core.views import (
    AddSchema,
    AddViewVersion,
    SetCurrentViewVersion,
    apply_view_updates,
    current_version,
    new_view_metadata,
)

SCHEMA = Schema(NestedField(1, "id", LongType(), required=False))
WIDER = Schema(NestedField(1, "id", LongType(), required=False),
               NestedField(2, "x", LongType(), required=False))
SPARK = "SELECT id FROM t"


def version(reps: dict[str, str], ns: str = "ns", engine: str = "x") -> ViewVersion:
    return ViewVersion(version_id=-1, schema_id=-1, timestamp_ms=5, default_namespace=[ns],
                       summary={"engine-name": engine},
                       representations=[ViewRepresentation(SQLViewRepresentation(
                           type="sql", sql=sql, dialect=d)) for d, sql in reps.items()])


def base() -> ViewMetadata:
    return new_view_metadata("file:///w/v", SCHEMA, version({"spark": SPARK}).model_copy(
        update={"schema_id": 0, "version_id": 1}), {}, 100)


def replaced(meta: ViewMetadata, reps: dict[str, str], now: int, schema: Schema = SCHEMA,
             ns: str = "ns", engine: str = "x") -> ViewMetadata:
    return apply_view_updates(meta, [
        AddSchema(schema_=schema), AddViewVersion(view_version=version(reps, ns, engine)),
        SetCurrentViewVersion(view_version_id=-1)], now)


def sql(meta: ViewMetadata) -> dict[str, str]:
    return {r.root.dialect: r.root.sql for r in current_version(meta).representations}


def test_what_each_side_did() -> None:
    assert [action(b, s) for b, s in ((None, "x"), ("x", "y"), ("x", None), ("x", "x"),
                                      (None, None))] == [
        "added", "changed", "removed", "untouched", "untouched"]


def test_dialects_added_on_each_side_make_one_version_with_both() -> None:
    """Main added trino, the branch duckdb, the Spark SQL identical: one new
    version on top of the target's, its representations the union (the
    target's order, then the source's new ones), id one past the highest,
    the version-log's new entry at the merge's instant."""
    b = base()
    target = replaced(b, {"spark": SPARK, "trino": "SELECT id FROM t -- trino"}, 200)
    source = replaced(b, {"spark": SPARK, "duckdb": "SELECT id FROM t -- duckdb"}, 300)
    merged = merge_versions(b, source, target)
    assert merged.reasons == () and merged.side == "both"
    assert merged.taken == {"spark": "target", "trino": "target", "duckdb": "source"}
    out = with_version(target, merged, {"k": "v"}, 400)
    assert sql(out) == {"spark": SPARK, "trino": "SELECT id FROM t -- trino",
                        "duckdb": "SELECT id FROM t -- duckdb"}
    assert list(sql(out)) == ["spark", "trino", "duckdb"]
    assert out.current_version_id == 3 and [v.version_id for v in out.versions] == [1, 2, 3]
    assert [(e.timestamp_ms, e.version_id) for e in out.version_log] == [
        (100, 1), (200, 2), (400, 3)]
    assert current_version(out).timestamp_ms == 400 and current_version(out).schema_id == 0
    assert out.properties == {"k": "v"} and out.view_uuid == target.view_uuid


def test_the_same_sql_on_both_sides_is_the_targets_version() -> None:
    b = base()
    target = replaced(b, {"spark": "SELECT 2"}, 200)
    source = replaced(b, {"spark": "SELECT 2"}, 300)
    merged = merge_versions(b, source, target)
    assert (merged.reasons, merged.side, merged.version) == ((), "target", None)
    assert with_version(target, merged, {}, 400).versions == target.versions


def test_a_version_with_only_the_sources_sql_is_the_sources_version() -> None:
    """The target's new version changed no SQL (an engine's replace with the
    same text): the source's version joins the target's history, as made."""
    b = base()
    target = replaced(b, {"spark": SPARK}, 200, engine="y")
    source = replaced(b, {"spark": "SELECT 7"}, 300)
    merged = merge_versions(b, source, target)
    assert merged.side == "source"
    out = with_version(target, merged, {}, 400)
    assert sql(out) == {"spark": "SELECT 7"} and current_version(out).timestamp_ms == 5
    assert [e.version_id for e in out.version_log] == [1, 2, 3]


def test_one_side_removing_a_dialect_the_other_left_is_kept_only_where_allowed() -> None:
    b = new_view_metadata("file:///w/v", SCHEMA, version(
        {"spark": SPARK, "trino": SPARK}).model_copy(update={"schema_id": 0, "version_id": 1}),
        {"replace.drop-dialect.allowed": "true"}, 100)
    target = replaced(b, {"spark": SPARK, "trino": SPARK, "hive": SPARK}, 200)
    source = replaced(b, {"spark": SPARK}, 300)
    merged = merge_versions(b, source, target)
    assert merged.reasons == () and merged.side == "both"
    assert sql(with_version(target, merged, b.properties, 400)) == {"spark": SPARK,
                                                                    "hive": SPARK}
    with pytest.raises(InvalidInputError, match="loss of view dialects"):
        with_version(target, merged, {}, 400)  # the view keeps its dialects


def test_both_sides_giving_a_dialect_different_sql_say_what_each_did() -> None:
    b = base()
    target = replaced(b, {"spark": SPARK, "duckdb": "SELECT 1"}, 200)
    source = replaced(b, {"spark": SPARK, "duckdb": "SELECT 2"}, 300)
    merged = merge_versions(b, source, target)
    assert merged.reasons == ("both sides gave duckdb different SQL",)
    assert merged.message() == ("both sides gave duckdb different SQL (duckdb: the target "
                                "added 'SELECT 1', the source added 'SELECT 2')")
    assert "None" not in merged.message()
    d = merged.details()
    assert d["dialects"] == {"duckdb": {"target": "added", "source": "added",
                                        "conflict": True}}
    assert d["sql"]["base"] == {"spark": SPARK}
    assert d["sql"]["target"]["duckdb"] == "SELECT 1"
    assert d["sqlDiff"] == {"duckdb": "--- target/duckdb\n+++ source/duckdb\n@@ -1 +1 @@\n"
                                      "-SELECT 1\n+SELECT 2"}


def test_a_dialect_changed_on_one_side_and_removed_on_the_other() -> None:
    b = new_view_metadata("file:///w/v", SCHEMA, version(
        {"spark": SPARK, "trino": "SELECT 0"}).model_copy(
        update={"schema_id": 0, "version_id": 1}), {"replace.drop-dialect.allowed": "true"},
        100)
    target = replaced(b, {"spark": SPARK}, 200)
    source = replaced(b, {"spark": SPARK, "trino": "SELECT 9\nFROM t"}, 300)
    merged = merge_versions(b, source, target)
    assert merged.message() == ("both sides gave trino different SQL (trino: the target "
                                "removed it, the source changed it to 'SELECT 9 FROM t')")
    assert merged.details()["sqlDiff"]["trino"].splitlines() == [
        "--- /dev/null", "+++ source/trino", "@@ -0,0 +1,2 @@", "+SELECT 9", "+FROM t"]


def test_a_changed_query_does_not_take_sql_written_for_the_old_one() -> None:
    """The source changed the Spark SQL; the target added trino for the
    query as it was: combining would put SQL of two queries in one version."""
    b = base()
    target = replaced(b, {"spark": SPARK, "trino": SPARK}, 200)
    source = replaced(b, {"spark": "SELECT id FROM t WHERE id > 1"}, 300)
    merged = merge_versions(b, source, target)
    assert merged.reasons == ("the source changed the query (spark) while the target wrote "
                              "SQL for the query as it was (trino)",)
    assert merged.details()["dialects"] == {
        "spark": {"target": "untouched", "source": "changed", "conflict": True},
        "trino": {"target": "added", "source": "untouched", "conflict": True}}
    assert set(merged.details()["sqlDiff"]) == {"spark", "trino"}
    both = merge_versions(b, replaced(b, {"spark": "SELECT 2"}, 300),
                          replaced(replaced(b, {"spark": SPARK, "trino": "SELECT 0"}, 150),
                                   {"spark": SPARK, "trino": "SELECT 3"}, 200))
    assert both.reasons == merged.reasons  # trino is new since the base: added, however often


def test_each_side_changing_another_dialect_is_one_reason() -> None:
    b = new_view_metadata("file:///w/v", SCHEMA, version(
        {"spark": SPARK, "trino": SPARK}).model_copy(update={"schema_id": 0, "version_id": 1}),
        {}, 100)
    target = replaced(b, {"spark": SPARK, "trino": "SELECT 1"}, 200)
    source = replaced(b, {"spark": "SELECT 2", "trino": SPARK}, 300)
    merged = merge_versions(b, source, target)
    assert merged.reasons == ("each side changed the query in another dialect (the target "
                              "trino, the source spark)",)


def test_schemas_and_default_namespaces_are_merged_three_way() -> None:
    b = base()
    target = replaced(b, {"spark": SPARK, "trino": SPARK}, 200, schema=WIDER)
    source = replaced(b, {"spark": SPARK, "duckdb": SPARK}, 300)
    merged = merge_versions(b, source, target)
    assert merged.reasons == () and merged.schema is not None
    assert len(merged.schema.fields) == 2  # the target's change, the source left it
    narrower = Schema(NestedField(1, "id", LongType(), required=True))
    clash = merge_versions(b, replaced(b, {"spark": SPARK, "duckdb": SPARK}, 300,
                                       schema=narrower), target)
    assert clash.reasons == ("both sides changed the view's schema differently",)
    ns = merge_versions(b, replaced(b, {"spark": SPARK, "duckdb": SPARK}, 300, ns="a"),
                        replaced(b, {"spark": SPARK, "trino": SPARK}, 200, ns="b"))
    assert ns.reasons == ("both sides changed the default namespace differently (b on the "
                          "target, a on the source)",)


def test_long_sql_is_quoted_short_in_the_message_and_whole_in_the_diff() -> None:
    b = base()
    long_a = "SELECT " + ", ".join(f"c{i}" for i in range(40)) + " FROM t"
    long_b = long_a.replace("c39", "c99")
    merged = merge_versions(b, replaced(b, {"spark": long_b}, 300),
                            replaced(b, {"spark": long_a}, 200))
    assert "…'" in merged.message() and len(merged.message()) < 250
    assert "+" + long_b in merged.details()["sqlDiff"]["spark"]
