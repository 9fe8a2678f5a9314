"""A manifest list read with the reader kept per writer schema
(catalog.metadata.manifest_lists) reads, and fails, as PyIceberg's
``read_manifest_list`` does."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.manifest import read_manifest_list

from catalog.metadata import manifest_lists
from catalog.metadata.fileio import BytesInput
from catalog.metadata.manifest_lists import read_list

ROW = pa.table({"id": pa.array([1], pa.int64()), "name": pa.array(["x"])})


@pytest.fixture(scope="module")
def lists(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """Manifest lists PyIceberg wrote: format v1 and v2 (their schemas
    differ), of one manifest and of many."""
    base = tmp_path_factory.mktemp("lists")
    cat = SqlCatalog("lists", uri=f"sqlite:///{base}/c.db", warehouse=f"file://{base}")
    cat.create_namespace("n")
    out: dict[str, bytes] = {}
    for version in (1, 2):
        table = cat.create_table(f"n.v{version}", ROW.schema,
                                 properties={"format-version": str(version)})
        for i in range(12):
            table.append(ROW)
            snap = table.current_snapshot()
            assert snap is not None
            if i in (0, 11):
                out[f"v{version}-{i + 1}"] = Path(
                    snap.manifest_list.removeprefix("file://")).read_bytes()
        manifest = snap.manifests(table.io)[0].manifest_path
        out[f"v{version}-manifest"] = Path(manifest.removeprefix("file://")).read_bytes()
    return out


def both(data: bytes) -> Iterator[list[object]]:
    for read in (read_manifest_list, read_list):
        yield list(read(BytesInput("s3://b/snap.avro", data)))


def test_lists_read_as_pyiceberg_reads_them(lists: dict[str, bytes]) -> None:
    hits = manifest_lists._RESOLVED.hits
    for name in ["v1-1", "v2-1", "v1-12", "v2-12", "v1-1"]:
        theirs, ours = both(lists[name])
        assert ours == theirs and len(ours) == int(name.split("-")[1]), name
        assert [m.manifest_path for m in ours] == [m.manifest_path for m in theirs]
    # One reader per writer schema: v1's and v2's, each resolved once.
    assert manifest_lists._RESOLVED.hits >= hits + 3


@pytest.mark.parametrize("damage", ["truncated", "garbage blocks", "a manifest"])
def test_a_damaged_list_fails_as_in_pyiceberg(lists: dict[str, bytes], damage: str) -> None:
    data = lists["v2-12"]
    header_end = data.index(data[-16:]) + 16  # the sync marker ends the header
    broken = {"truncated": data[: len(data) - 40],
              "garbage blocks": data[:header_end] + b"\x02\x40" + b"\xff" * 40,
              "a manifest": lists["v2-manifest"]}[damage]
    failures = []
    for read in (read_manifest_list, read_list):
        try:
            list(read(BytesInput("s3://b/snap.avro", broken)))
            failures.append(None)
        except Exception as e:
            failures.append(type(e))
    assert failures[0] is not None and failures[0] == failures[1], failures
