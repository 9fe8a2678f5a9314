"""Reading a manifest list with PyIceberg's own reader, resolved once per
writer schema.

PyIceberg's ``read_manifest_list`` converts the file's Avro schema to
Iceberg's and resolves a reader tree against the manifest list's schema for
every file it opens: two thirds of reading a list of 40 manifests, and the
same work for every list its writer wrote (one writer, one schema). Here
the pair is kept by the schema's text, and the records are read by the same
reader, so a list reads, and fails, as with ``read_manifest_list``
(tests/catalog/test_manifest_lists.py holds the two equal).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pyiceberg.avro.decoder import new_decoder
from pyiceberg.avro.file import AvroFile
from pyiceberg.avro.resolver import resolve_reader
from pyiceberg.io import InputFile
from pyiceberg.manifest import (
    DEFAULT_READ_VERSION,
    MANIFEST_LIST_FILE_SCHEMAS,
    ManifestContent,
    ManifestFile,
    PartitionFieldSummary,
)

from core.lru import LRU

# The writer schema's text -> (its Iceberg schema, the resolved reader).
_RESOLVED: LRU[str, tuple[Any, Any]] = LRU(64, 4 << 20, lambda _: 20_000)


class _ListFile(AvroFile[ManifestFile]):
    def __enter__(self) -> _ListFile:
        with self.input_file.open() as f:
            self.decoder = new_decoder(f.read())
        self.header = self._read_header()
        text = self.header.meta.get("avro.schema", "")
        found = _RESOLVED.get(text)
        if found is None:
            schema = self.header.get_schema()
            found = (schema, resolve_reader(schema, self.read_schema or schema,
                                            self.read_types, self.read_enums))
            _RESOLVED.put(text, found)
        self.schema, self.reader = found
        return self


def read_list(input_file: InputFile) -> Iterator[ManifestFile]:
    """``pyiceberg.manifest.read_manifest_list``, its reader kept."""
    with _ListFile(input_file, MANIFEST_LIST_FILE_SCHEMAS[DEFAULT_READ_VERSION],
                   read_types={-1: ManifestFile, 508: PartitionFieldSummary},
                   read_enums={517: ManifestContent}) as reader:
        yield from reader
