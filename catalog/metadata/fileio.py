"""The PyIceberg FileIOs the server reads manifests with.

``file_io``: fsspec's, like every other file the server touches
(catalog.metadata.files), so one set of settings — the local file system, or s3fs
with the usual AWS_* variables (AWS_ENDPOINT_URL for an S3-compatible
store) — reaches the warehouse.

``ReaderIO``: every read through the catalog's MetadataReader
(catalog.metadata.reading), for files a client named (manifest lists, manifests):
the location is judged first (inside the warehouse, real path included),
only regular files are opened, a read stops at the size limit and gives up
after the timeout; PyIceberg then parses the bytes in memory. A file that is
not there raises FileNotFoundError, as PyIceberg's own FileIOs do."""

from __future__ import annotations

import io

from pyiceberg.io import FileIO, InputFile, InputStream, OutputFile, load_file_io

from catalog.metadata.reading import MetadataReader
from core.errors import FileNotFoundInWarehouseError

_FSSPEC = {"py-io-impl": "pyiceberg.io.fsspec.FsspecFileIO"}


def file_io(location: str) -> FileIO:
    return load_file_io(_FSSPEC, location)


class ReaderIO(FileIO):
    """Reads only, through ``reader``."""

    def __init__(self, reader: MetadataReader) -> None:
        super().__init__({})
        self.reader = reader

    def new_input(self, location: str) -> InputFile:
        return _Read(location, self.reader)

    def new_output(self, location: str) -> OutputFile:
        raise NotImplementedError("the catalog writes no manifests through this FileIO")

    def delete(self, location: str | InputFile | OutputFile) -> None:
        raise NotImplementedError("the catalog deletes no files through this FileIO")


class BytesInput(InputFile):
    """A file already read (its bytes), for PyIceberg's readers."""

    def __init__(self, location: str, data: bytes) -> None:
        super().__init__(location)
        self.data = data

    def __len__(self) -> int:
        return len(self.data)

    def exists(self) -> bool:
        return True

    def open(self, seekable: bool = True) -> InputStream:
        return io.BytesIO(self.data)


class _Read(InputFile):
    """A file read whole once, on first use."""

    def __init__(self, location: str, reader: MetadataReader) -> None:
        super().__init__(location)
        self.reader = reader
        self._data: bytes | None = None

    def _bytes(self) -> bytes:
        if self._data is None:
            try:
                self._data = self.reader.read(self.location)
            except FileNotFoundInWarehouseError:
                raise FileNotFoundError(self.location) from None
        return self._data

    def __len__(self) -> int:
        return len(self._bytes())

    def exists(self) -> bool:
        return self.reader.exists(self.location)

    def open(self, seekable: bool = True) -> InputStream:
        return io.BytesIO(self._bytes())
