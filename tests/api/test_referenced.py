"""The files a table version references (catalog.maintenance.referenced), read from
real files PyIceberg writes: with a manifest list, and as format v1 may
have them, with the manifests listed in the snapshot itself."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.manifest import read_manifest_list

from catalog.maintenance.referenced import references
from catalog.metadata.fileio import file_io
from catalog.metadata.files import MetadataFiles
from core.content import IcebergTable
from tests.api.test_pyiceberg import SCHEMA


def _table(tmp_path: Path):  # type: ignore[no-untyped-def]
    cat = SqlCatalog("local", uri=f"sqlite:///{tmp_path / 'cat.db'}",
                     warehouse=(tmp_path / "wh").as_uri())
    cat.create_namespace("ns")
    t = cat.create_table("ns.t", SCHEMA)
    for start in (0, 10):
        t.append(pa.table({"id": pa.array([start, start + 1], pa.int64()),
                           "name": pa.array(["a", "b"])}))
    return t


def test_every_file_of_every_snapshot(tmp_path: Path) -> None:
    t = _table(tmp_path)
    found = {(kind, path) for kind, path, _, _ in references(
        MetadataFiles(), [IcebergTable(id="x", metadata_location=t.metadata_location)])}
    data = {p.removeprefix("file://") for p in t.inspect.files().column("file_path").to_pylist()}
    assert {p for k, p in found if k == "data"} == data
    assert sum(1 for k, _ in found if k == "manifest-list") == 2
    assert sum(1 for k, _ in found if k == "metadata") == 1


def test_manifests_listed_in_the_snapshot_itself(tmp_path: Path) -> None:
    t = _table(tmp_path)
    io = file_io(t.metadata_location)
    doc = json.loads(Path(t.metadata_location.removeprefix("file://")).read_text())
    for snap in doc["snapshots"]:
        listed = snap.pop("manifest-list")
        snap["manifests"] = [m.manifest_path for m in read_manifest_list(io.new_input(listed))]
    v1 = tmp_path / "v1.metadata.json"
    v1.write_text(json.dumps(doc))
    found = {(kind, path) for kind, path, _, _ in references(
        MetadataFiles(), [IcebergTable(id="x", metadata_location=v1.as_uri())])}
    data = {p.removeprefix("file://") for p in t.inspect.files().column("file_path").to_pylist()}
    assert {p for k, p in found if k == "data"} == data
    assert not any(k == "manifest-list" for k, _ in found)
    assert sum(1 for k, _ in found if k == "manifest") == 2
