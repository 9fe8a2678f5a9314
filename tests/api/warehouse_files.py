"""Files in a test server's warehouse, on local disk or on the local
S3-compatible server: put and read one by location, list them all, make
them older (past gc's write window), and the Avro files Iceberg writes
(a manifest list naming given manifests)."""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from pyiceberg.io.pyarrow import PyArrowFileIO
from pyiceberg.manifest import ManifestFile, write_manifest_list

GARBAGE = b"\x89\xfe\xff not an Avro file \x00\x01" * 40


def _bucket_key(location: str) -> tuple[str, str]:
    bucket, key = location.split("://", 1)[1].split("/", 1)
    return bucket, key


def put(server: Any, location: str, data: bytes) -> None:
    """Write ``data`` at ``location`` directly (no catalog in between)."""
    s3 = getattr(server, "s3", None)
    if s3 is not None:
        bucket, key = _bucket_key(location)
        s3.client().put_object(Bucket=bucket, Key=key, Body=data)
        return
    path = Path(urlparse(location).path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def get(server: Any, location: str) -> bytes:
    s3 = getattr(server, "s3", None)
    if s3 is not None:
        bucket, key = _bucket_key(location)
        return bytes(s3.client().get_object(Bucket=bucket, Key=key)["Body"].read())
    return Path(urlparse(location).path).read_bytes()


def delete(server: Any, location: str) -> None:
    s3 = getattr(server, "s3", None)
    if s3 is not None:
        bucket, key = _bucket_key(location)
        s3.client().delete_object(Bucket=bucket, Key=key)
        return
    Path(urlparse(location).path).unlink()


def root(server: Any) -> str:
    """The warehouse as bucket/prefix or a local path."""
    return str(server.warehouse.split("://", 1)[1])


def files(server: Any) -> set[str]:
    """Every file in the server's warehouse, as bucket/key or a local path."""
    s3 = getattr(server, "s3", None)
    if s3 is not None:
        bucket, prefix = root(server).split("/", 1)
        return {f"{bucket}/{k}" for k in s3.keys(prefix + "/")}
    return {str(p) for p in Path(root(server)).rglob("*") if p.is_file() and not p.is_symlink()}


def age(server: Any, seconds: float) -> None:
    """Every file in the warehouse ``seconds`` older (past gc's write window)."""
    s3 = getattr(server, "s3", None)
    if s3 is not None:
        s3.age(root(server).split("/", 1)[1] + "/", seconds)
        return
    for p in Path(root(server)).rglob("*"):
        if p.is_file() and not p.is_symlink():
            st = p.stat()
            os.utime(p, (st.st_atime - seconds, st.st_mtime - seconds))


def manifest_list(tmp: Path, snapshot_id: int, parent: int | None, sequence: int,
                  manifests: list[ManifestFile]) -> bytes:
    """The bytes of a format v2 manifest list for ``snapshot_id``."""
    out = tmp / f"list-{uuid.uuid4().hex}.avro"
    with write_manifest_list(2, PyArrowFileIO().new_output(str(out)), snapshot_id, parent,
                             sequence, "null") as writer:
        writer.add_manifests(manifests)
    return out.read_bytes()


def moved(m: ManifestFile, path: str) -> ManifestFile:
    """The same manifest entry, naming another file."""
    return ManifestFile(path, *m._data[1:])
