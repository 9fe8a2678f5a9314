"""core.views: the view spec's update rules and the as-of rebuild, without I/O."""

from __future__ import annotations

import pytest
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField
from pyiceberg.view.metadata import SQLViewRepresentation, ViewRepresentation, ViewVersion

from core.errors import InvalidInputError, RequirementFailedError
from core.views import (
    AddSchema,
    AddViewVersion,
    AssertViewUUID,
    SetCurrentViewVersion,
    SetProperties,
    apply_view_updates,
    check_view_requirements,
    current_version,
    new_view_metadata,
    view_as_of,
)

SCHEMA = Schema(NestedField(1, "id", LongType(), required=False))
OTHER = Schema(NestedField(1, "id", LongType(), required=False),
               NestedField(2, "x", LongType(), required=False))


def version(sql: str, *dialects: str, schema_id: int = 0, vid: int = 1) -> ViewVersion:
    return ViewVersion(version_id=vid, schema_id=schema_id, timestamp_ms=5,
                       default_namespace=["ns"],
                       representations=[ViewRepresentation(SQLViewRepresentation(
                           type="sql", sql=sql, dialect=d)) for d in dialects or ("spark",)])


def replace(meta, sql: str, now: int, *dialects: str, schema: Schema = SCHEMA):  # type: ignore[no-untyped-def]
    return apply_view_updates(meta, [
        AddSchema(schema=schema), AddViewVersion(view_version=version(sql, *dialects,
                                                                      schema_id=-1, vid=-1)),
        SetCurrentViewVersion(view_version_id=-1)], now)


def test_new_view_and_replacements() -> None:
    m = new_view_metadata("file:///w/v", SCHEMA, version("SELECT 1"), {"comment": "c"}, 100)
    assert (m.current_version_id, m.properties, len(m.schemas)) == (1, {"comment": "c"}, 1)
    assert [(e.timestamp_ms, e.version_id) for e in m.version_log] == [(100, 1)]
    m2 = replace(m, "SELECT 2", 200, schema=OTHER)
    assert m2.current_version_id == 2 and current_version(m2).schema_id == 1
    assert len(m2.schemas) == 2  # a new schema; the same one again would be reused
    m3 = replace(m2, "SELECT 3", 300, schema=OTHER)
    assert len(m3.schemas) == 2 and current_version(m3).schema_id == 1
    assert [e.version_id for e in m3.version_log] == [1, 2, 3]


def test_setting_the_current_version_again_adds_no_log_entry() -> None:
    m = new_view_metadata("file:///w/v", SCHEMA, version("SELECT 1"), {}, 100)
    same = apply_view_updates(m, [SetCurrentViewVersion(view_version_id=1)], 200)
    assert same.version_log == m.version_log


def test_bad_updates_name_the_problem() -> None:
    m = new_view_metadata("file:///w/v", SCHEMA, version("SELECT 1"), {}, 100)
    with pytest.raises(InvalidInputError, match="unknown version: 7"):
        apply_view_updates(m, [SetCurrentViewVersion(view_version_id=7)], 1)
    with pytest.raises(InvalidInputError, match="no view version has been added"):
        apply_view_updates(m, [SetCurrentViewVersion(view_version_id=-1)], 1)
    with pytest.raises(InvalidInputError, match="no schema has been added"):
        apply_view_updates(m, [AddViewVersion(view_version=version("x", schema_id=-1))], 1)
    with pytest.raises(InvalidInputError, match="unknown schema: 4"):
        apply_view_updates(m, [AddViewVersion(view_version=version("x", schema_id=4))], 1)
    with pytest.raises(InvalidInputError, match="num-entries must be positive"):
        apply_view_updates(m, [SetProperties(updates={"version.history.num-entries": "0"})], 1)
    with pytest.raises(RequirementFailedError, match="UUID does not match"):
        check_view_requirements(m, [AssertViewUUID(uuid="other")])


def test_drop_dialect_rule() -> None:
    m = new_view_metadata("file:///w/v", SCHEMA, version("SELECT 1", "spark", "trino"), {}, 1)
    with pytest.raises(InvalidInputError, match=r"Previous dialects: \['spark', 'trino'\]"):
        replace(m, "SELECT 2", 2, "spark")
    assert current_version(replace(m, "SELECT 2", 2, "trino", "spark", "hive")).version_id == 2
    allowed = apply_view_updates(m, [SetProperties(
        updates={"replace.drop-dialect.allowed": "true"})], 2)
    assert replace(allowed, "SELECT 2", 3, "spark").current_version_id == 2


def test_view_as_of() -> None:
    m = new_view_metadata("file:///w/v", SCHEMA, version("SELECT 1"), {}, 100)
    m = replace(m, "SELECT 2", 200)
    m = replace(m, "SELECT 3", 300)
    for t, sql in ((100, "SELECT 1"), (199, "SELECT 1"), (250, "SELECT 2"), (300, "SELECT 3")):
        then = view_as_of(m, t)
        assert current_version(then).representations[0].root.sql == sql, t
        assert all(e.timestamp_ms <= t for e in then.version_log)
    assert view_as_of(m, 50) is m  # nothing that old: served as the commit has it
    assert view_as_of(m, 10**13) is m
