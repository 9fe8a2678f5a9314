"""Format v3 manifests and manifest lists the catalog writes for snapshots
of its own (a content merge's combined snapshot), built on PyIceberg's
writers, which stop at v2.

A v3 manifest list stores each manifest's ``first_row_id`` (field 520), a
v3 manifest each data file's ``first_row_id`` (142) and the deletion-vector
fields (143-145). PyIceberg reads both with its v2 read schema, which drops
those fields; here they are read with the v3 schema it defines but does not
use. The list writer assigns row ids as the spec's "First Row ID
Assignment" says (and Iceberg's Java V3 writer does): a data manifest that
has a ``first_row_id`` keeps it; one without gets the next free id, and the
ids advance by its added and existing rows; delete manifests have none."""

from __future__ import annotations

from collections.abc import Iterable
from types import TracebackType
from typing import Literal

from pyiceberg.avro.codecs import AvroCompressionCodec
from pyiceberg.avro.file import AvroFile, AvroOutputFile
from pyiceberg.io import FileIO, OutputFile
from pyiceberg.manifest import (
    MANIFEST_ENTRY_SCHEMAS,
    MANIFEST_LIST_FILE_SCHEMAS,
    DataFile,
    DataFileContent,
    FileFormat,
    ManifestContent,
    ManifestEntry,
    ManifestEntryStatus,
    ManifestFile,
    ManifestListWriterV2,
    ManifestWriterV2,
    PartitionFieldSummary,
    _inherit_from_manifest,
)
from pyiceberg.schema import Schema
from pyiceberg.typedef import TableVersion

V3: Literal[3] = 3
# Positions in PyIceberg's records read with the v3 schemas (the v2 fields
# come first, in the same order).
LIST_FIRST_ROW_ID = len(MANIFEST_LIST_FILE_SCHEMAS[2].fields)
FILE_FIRST_ROW_ID = len(MANIFEST_ENTRY_SCHEMAS[2].find_field(2).field_type.fields)  # type: ignore[attr-defined]


def read_manifest_list(io: FileIO, location: str) -> list[ManifestFile]:
    """A manifest list's manifests, ``first_row_id`` included (None where a
    v1 or v2 list, or a v3 list's delete manifest, has none)."""
    with AvroFile[ManifestFile](
            io.new_input(location), MANIFEST_LIST_FILE_SCHEMAS[V3],
            read_types={-1: ManifestFile, 508: PartitionFieldSummary},
            read_enums={517: ManifestContent}) as reader:
        return list(reader)


def first_row_id(m: ManifestFile) -> int | None:
    value = m[LIST_FIRST_ROW_ID] if len(m) > LIST_FIRST_ROW_ID else None
    return int(value) if value is not None else None


def without_row_ids(m: ManifestFile) -> ManifestFile:
    """The manifest as a new list should number it afresh."""
    return ManifestFile(*m._data[:LIST_FIRST_ROW_ID], None)


def read_entries(io: FileIO, m: ManifestFile) -> list[ManifestEntry]:
    """A manifest's entries with the v3 data file fields (as PyIceberg's
    ``fetch_manifest_entry`` reads them otherwise: sequence numbers and the
    snapshot id inherited from the list)."""
    with AvroFile[ManifestEntry](
            io.new_input(m.manifest_path), MANIFEST_ENTRY_SCHEMAS[V3],
            read_types={-1: ManifestEntry, 2: DataFile},
            read_enums={0: ManifestEntryStatus, 101: FileFormat,
                        134: DataFileContent}) as reader:
        return [_inherit_from_manifest(e, m) for e in reader]


def unnumbered_rows(manifests: Iterable[ManifestFile]) -> int:
    """The row ids a v3 list writer assigns to ``manifests`` (see
    ManifestListWriterV3): a snapshot's ``added-rows``."""
    return sum((m.added_rows_count or 0) + (m.existing_rows_count or 0) for m in manifests
               if m.content == ManifestContent.DATA and first_row_id(m) is None)


def new_file(f: DataFile) -> DataFile:
    """A data file read from a manifest, to be added again by a new snapshot:
    its ``first_row_id`` is left for inheritance (the spec: new data files
    are written with a null ``first_row_id``), so its rows get the ids the
    new manifest list gives."""
    data = list(f._data) + [None] * (FILE_FIRST_ROW_ID + 4 - len(f._data))
    data[FILE_FIRST_ROW_ID] = None
    out = DataFile(*data)
    out.spec_id = f.spec_id
    return out


class ManifestListWriterV3(ManifestListWriterV2):
    """PyIceberg's v2 list writer (its sequence number rules) writing the v3
    schema, ``first-row-id`` in the file's metadata as Java writes it, and
    ``first_row_id`` per manifest as the module says. ``next_row_id``: the
    first id not assigned (the snapshot's ``added-rows`` is the difference)."""

    def __init__(self, output_file: OutputFile, snapshot_id: int,
                 parent_snapshot_id: int | None, sequence_number: int, first_row_id: int,
                 compression: AvroCompressionCodec) -> None:
        super().__init__(output_file, snapshot_id, parent_snapshot_id, sequence_number,
                         compression)
        self._format_version = V3
        self._meta = {**self._meta, "first-row-id": str(first_row_id), "format-version": "3"}
        self.next_row_id = first_row_id

    def __enter__(self) -> ManifestListWriterV3:
        self._writer = AvroOutputFile[ManifestFile](
            output_file=self._output_file, record_schema=MANIFEST_LIST_FILE_SCHEMAS[V3],
            file_schema=MANIFEST_LIST_FILE_SCHEMAS[V3], schema_name="manifest_file",
            metadata=self._meta)
        self._writer.__enter__()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc_value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self._writer.__exit__(exc_type, exc_value, traceback)

    def prepare_manifest(self, manifest_file: ManifestFile) -> ManifestFile:
        m = super().prepare_manifest(manifest_file)
        first = first_row_id(manifest_file)
        if m.content != ManifestContent.DATA:
            first = None
        elif first is None:
            first = self.next_row_id
            self.next_row_id += (m.added_rows_count or 0) + (m.existing_rows_count or 0)
        return ManifestFile(*m._data[:LIST_FIRST_ROW_ID], first)


class ManifestWriterV3(ManifestWriterV2):
    """PyIceberg's v2 data manifest writer, writing the v3 data file schema
    (records read with it: ``read_entries``)."""

    @property
    def version(self) -> TableVersion:
        return V3

    def new_writer(self) -> AvroOutputFile[ManifestEntry]:
        schema: Schema = self._with_partition(V3)
        return AvroOutputFile[ManifestEntry](
            output_file=self._output_file, file_schema=schema, record_schema=schema,
            schema_name="manifest_entry", metadata=self._meta)


class DeleteManifestWriterV3(ManifestWriterV3):
    """The same for a delete manifest (deletion vectors)."""

    def content(self) -> ManifestContent:
        return ManifestContent.DELETES

    @property
    def _meta(self) -> dict[str, str]:
        return {**super()._meta, "content": "deletes"}
