"""core.numbers: the first integer past 64 bits in a validated value, named
by its JSON path."""

from __future__ import annotations

from pydantic import BaseModel, Field
from pyiceberg.table.update import RemoveSnapshotsUpdate, SetSnapshotRefUpdate

from core.numbers import INT64_MAX, INT64_MIN, out_of_range


class Inner(BaseModel):
    snapshot_id: int = Field(alias="snapshot-id")


class Outer(BaseModel):
    items: list[Inner] = []
    by_name: dict[str, int] = {}
    flag: bool = True


def test_values_within_64_bits_pass() -> None:
    for value in (0, -1, INT64_MAX, INT64_MIN, True, 1e300, "9" * 40, None):
        assert out_of_range(value) is None
    assert out_of_range(Outer(items=[Inner(**{"snapshot-id": INT64_MAX})])) is None


def test_the_first_value_past_64_bits_is_named_by_its_json_path() -> None:
    found = out_of_range(Outer(items=[Inner(**{"snapshot-id": 1}),
                                      Inner(**{"snapshot-id": INT64_MAX + 1})]), "body")
    assert found is not None and found.startswith("body.items[1].snapshot-id: 9223372036854775808")
    assert out_of_range(Outer(by_name={"a": INT64_MIN - 1})) == (
        f"by_name.a: {INT64_MIN - 1} is out of range (a 64-bit integer, {INT64_MIN} to "
        f"{INT64_MAX})")


def test_pyiceberg_models_are_walked_by_their_wire_names() -> None:
    ref = SetSnapshotRefUpdate(**{"ref-name": "main", "type": "branch",
                                  "snapshot-id": 2 ** 63})
    assert (out_of_range([ref], "updates") or "").startswith("updates[0].snapshot-id:")
    removed = RemoveSnapshotsUpdate(**{"snapshot-ids": [1, -(2 ** 64)]})
    assert (out_of_range(removed) or "").startswith("snapshot-ids[1]:")
