import pytest

from core.content import IcebergView, MaterializedView, Namespace, parse_content
from core.dialects import DremioExtension, HiveExtension, parse_extension, register_dialect
from core.errors import InvalidContentError, InvalidExtensionError


def _view(extensions):
    return {"type": "ICEBERG_VIEW", "metadataLocation": "file:///w/v.json", "versionId": 2,
            "extensions": extensions}


def test_nessie_json_names_round_trip():
    t = parse_content({"type": "ICEBERG_TABLE", "id": "x", "metadataLocation": "s3://b/m.json",
                       "snapshotId": 7, "schemaId": 1, "specId": 2, "sortOrderId": 3})
    assert t.to_json() == {"type": "ICEBERG_TABLE", "id": "x",
                           "metadataLocation": "s3://b/m.json", "snapshotId": 7,
                           "schemaId": 1, "specId": 2, "sortOrderId": 3}
    assert parse_content(t.to_json()) == t
    assert parse_content({"type": "NAMESPACE", "properties": {"a": "b"}}) == Namespace(
        properties={"a": "b"})


def test_known_dialects_are_typed_and_unknown_ones_kept_as_strings():
    v = parse_content(_view({
        "Dremio": {"dataset-id": "d1", "field-origins": [
            {"name": "c", "origins": [{"table": ["s", "t"], "column": "a"}], "derived": True}]},
        "hive": {"original-text": "select *", "expanded-text": "select `a`"},
        "duckdb": {"anything": "goes"},
    }))
    assert isinstance(v, IcebergView)
    assert isinstance(v.extensions["dremio"], DremioExtension)
    assert v.extensions["dremio"].field_origins[0].origins[0].table == ["s", "t"]
    assert isinstance(v.extensions["hive"], HiveExtension)
    assert v.extensions["duckdb"] == {"anything": "goes"}
    assert parse_content(v.to_json()) == v
    assert v.to_json()["extensions"]["dremio"]["dataset-id"] == "d1"


@pytest.mark.parametrize(("extensions", "message"), [
    ({"dremio": {}}, "invalid dremio extension: field 'dataset-id': Field required"),
    ({"dremio": {"dataset-id": "d", "field-origins": [{"name": "c", "origins": [
        {"table": ["t"]}]}]}}, "field 'field-origins.0.origins.0.column'"),
    ({"hive": {"original-text": 1, "expanded-text": "x"}}, "field 'original-text'"),
    ({"trino": {"security-mode": "ROOT"}}, "field 'security-mode'"),
    ({"spark": {"unknown-field": "x"}}, "field 'unknown-field'"),
    ({"duckdb": {"n": 1}}, "unknown dialect"),
    ({"dremio": {"dataset-id": "d"}, "DREMIO": {"dataset-id": "e"}}, "twice"),
    ("not-a-map", "keyed by dialect"),
])
def test_invalid_extension_payloads_name_the_field(extensions, message):
    with pytest.raises(InvalidExtensionError, match=message):
        parse_content(_view(extensions))


def test_registering_a_dialect():
    from pydantic import BaseModel, ConfigDict

    class Flink(BaseModel):
        model_config = ConfigDict(extra="forbid")
        job: str

    register_dialect("flink", Flink)
    assert parse_extension("Flink", {"job": "j"}) == Flink(job="j")
    with pytest.raises(InvalidExtensionError, match="invalid flink extension: field 'job'"):
        parse_extension("flink", {})


@pytest.mark.parametrize(("payload", "message"), [
    ({"type": "ICEBERG_TABLE"}, "field 'metadataLocation'"),
    ({"type": "WHAT"}, "field 'type'"),
    ({"type": "ICEBERG_TABLE", "metadataLocation": "m", "snapshotId": "x"}, "'snapshotId'"),
    ({"type": "NAMESPACE", "extra": 1}, "field 'extra'"),
])
def test_invalid_content_names_the_field(payload, message):
    with pytest.raises(InvalidContentError, match=message):
        parse_content(payload)


def test_materialized_view():
    mv = parse_content({"type": "MATERIALIZED_VIEW", "metadataLocation": "m", "versionId": 1,
                        "snapshotId": 7, "refreshId": 2})
    assert isinstance(mv, MaterializedView)
    assert (mv.snapshot_id, mv.refresh_id) == (7, 2)
    assert parse_content(mv.to_json()) == mv
    never = parse_content({"type": "MATERIALIZED_VIEW", "metadataLocation": "m", "versionId": 1})
    assert (never.snapshot_id, never.refresh_id) == (-1, -1)


def test_value_hash_covers_the_id():
    a = Namespace(properties={"x": "1"})
    assert a.value_hash() == Namespace(properties={"x": "1"}).value_hash()
    assert a.value_hash() != a.with_id("i").value_hash()


def test_equal_values_hash_equal_whatever_their_map_order():
    a = Namespace(properties={"b": "1", "a": "2"})
    b = Namespace(properties={"a": "2", "b": "1"})
    assert a.value_hash() == b.value_hash()
    assert a.canonical_bytes() == b'{"type":"NAMESPACE","properties":{"a":"2","b":"1"}}'
    v1 = parse_content(_view({"zz": {"y": "1", "x": "2"}, "trino": {}}))
    v2 = parse_content(_view({"trino": {}, "zz": {"x": "2", "y": "1"}}))
    assert v1.value_hash() == v2.value_hash()
    mv = parse_content({**_view({"zz": {"y": "1", "x": "2"}}), "type": "MATERIALIZED_VIEW"})
    mv2 = parse_content({**_view({"zz": {"x": "2", "y": "1"}}), "type": "MATERIALIZED_VIEW"})
    assert mv.value_hash() == mv2.value_hash()


def test_a_cached_hash_never_follows_a_copy():
    a = Namespace(properties={"x": "1"})
    first = a.value_hash()
    b = a.model_copy(update={"properties": {"x": "2"}})
    assert b.value_hash() != first
    assert a.value_hash() == first == Namespace(properties={"x": "1"}).value_hash()
