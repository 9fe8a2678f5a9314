"""The PyIceberg FileIO the server reads manifests with: fsspec's, like every
other file the server touches (catalog.files), so one set of settings —
the local file system, or s3fs with the usual AWS_* variables
(AWS_ENDPOINT_URL for an S3-compatible store) — reaches the warehouse."""

from __future__ import annotations

from pyiceberg.io import FileIO, load_file_io

_FSSPEC = {"py-io-impl": "pyiceberg.io.fsspec.FsspecFileIO"}


def file_io(location: str) -> FileIO:
    return load_file_io(_FSSPEC, location)
