"""Metadata files compressed with gzip, as their names say (issue 47: Iceberg's
NessieCatalog writes views as ``*.gz.metadata.json``, which a Nessie import
brings along): read uncompressed, within the same size limit as any
metadata file, and refused with a 400 naming the file when the name says
gzip and the bytes do not."""

from __future__ import annotations

import gzip
import time
from pathlib import Path

import pytest
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField
from pyiceberg.view.metadata import SQLViewRepresentation, ViewVersion

from catalog.metadata.files import Locations, MetadataFiles
from catalog.metadata.reading import MetadataReader
from core.errors import BadRequestError
from core.views import new_view_metadata, sql_representations


def _files(tmp_path: Path, max_bytes: int = 1 << 20) -> MetadataFiles:
    return MetadataFiles(MetadataReader(Locations(f"file://{tmp_path}", False), max_bytes, 10))


def _view_json(tmp_path: Path) -> bytes:
    version = ViewVersion(version_id=1, schema_id=0, timestamp_ms=int(time.time() * 1000),
                          summary={}, representations=[SQLViewRepresentation(
                              type="sql", sql="SELECT 1 AS id", dialect="spark")],
                          default_namespace=["db"])
    meta = new_view_metadata(f"file://{tmp_path}/v", Schema(NestedField(1, "id", LongType())),
                             version, {}, int(time.time() * 1000))
    return meta.model_dump_json().encode()


def test_a_gzip_view_metadata_file_reads_as_its_json(tmp_path: Path) -> None:
    data = _view_json(tmp_path)
    for name in ("00000-a.gz.metadata.json", "00000-b.metadata.json.gz"):
        (tmp_path / name).write_bytes(gzip.compress(data))
        meta, _ = _files(tmp_path).view(f"file://{tmp_path}/{name}")
        assert meta.current_version_id == 1
        assert [r.sql for r in sql_representations(meta.versions[0])] == ["SELECT 1 AS id"]


def test_a_gzip_name_over_plain_bytes_or_past_the_limit_is_refused(tmp_path: Path) -> None:
    data = _view_json(tmp_path)
    (tmp_path / "00000-plain.gz.metadata.json").write_bytes(data)
    with pytest.raises(BadRequestError, match="named as gzip-compressed but is not gzip"):
        _files(tmp_path).view(f"file://{tmp_path}/00000-plain.gz.metadata.json")
    # A small file that would inflate past the limit is refused, not inflated.
    bomb = gzip.compress(data + b" " * (4 << 20))
    (tmp_path / "00000-bomb.gz.metadata.json").write_bytes(bomb)
    assert len(bomb) < 1 << 20
    with pytest.raises(BadRequestError, match="more than 1048576 bytes uncompressed"):
        _files(tmp_path).view(f"file://{tmp_path}/00000-bomb.gz.metadata.json")
    (tmp_path / "00000-cut.gz.metadata.json").write_bytes(gzip.compress(data)[:-20])
    with pytest.raises(BadRequestError, match="ends inside its gzip stream"):
        _files(tmp_path).view(f"file://{tmp_path}/00000-cut.gz.metadata.json")
