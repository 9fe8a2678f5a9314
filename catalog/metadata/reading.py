"""Reading a metadata file that a client named, safely.

Register names a file, and the versioning API can store any metadata
location, so every read is treated as hostile: the location is checked
(scheme, inside the warehouse) before anything is opened, so the answer for
a file outside never depends on whether it exists; only regular files are
opened (a FIFO or device would block a worker or never end), without
blocking even if one is swapped in; reads stop at a size limit; remote reads
give up after a timeout; and no error quotes what a file holds.
"""

from __future__ import annotations

import io
import os
import stat
import zlib
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, TypeVar

import fsspec

from catalog.metadata import s3_direct
from catalog.metadata.locations import Locations, Where
from core.errors import FileNotFoundInWarehouseError, SapwoodError, UnavailableError, bad_request

T = TypeVar("T")

_CHUNK = 1024 * 1024
# Remote reads run here so that a stalled one can be given up on; the thread
# stays blocked until the storage client's own timeout ends it.
_REMOTE = ThreadPoolExecutor(max_workers=8, thread_name_prefix="sapwood-read")


def decoded(location: str, raw: bytes, max_bytes: int) -> bytes:
    """A metadata file's JSON: gunzipped when its name says gzip (Iceberg
    names the codec there: ``*.gz.metadata.json``, which Iceberg's Java
    writers use for views, and the older ``*.metadata.json.gz``), within the
    same size limit as the file itself (a small file must not inflate past it)."""
    if not (location.endswith(".gz.metadata.json") or location.endswith(".metadata.json.gz")):
        return raw
    unzip = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    try:
        out = unzip.decompress(raw, max_bytes + 1)
    except zlib.error:
        raise bad_request(f"Metadata file {location} is named as gzip-compressed but is "
                          "not gzip") from None
    if len(out) > max_bytes or unzip.unconsumed_tail:
        raise bad_request(f"Metadata file {location} holds more than {max_bytes} bytes "
                          "uncompressed (SAPWOOD_MAX_METADATA_BYTES)")
    if not unzip.eof:
        raise bad_request(f"Metadata file {location} ends inside its gzip stream")
    return out


def not_found(location: str) -> SapwoodError:
    # Iceberg's words (HadoopInputFile), which its clients and the REST kit read.
    return FileNotFoundInWarehouseError(f"Failed to open input stream for file: {location} "
                                        "(the metadata file does not exist)")


class MetadataReader:
    def __init__(self, locations: Locations, max_bytes: int, timeout_s: float) -> None:
        self.locations = locations
        self.max_bytes = max_bytes
        self.timeout_s = timeout_s

    def read(self, location: str) -> bytes:
        return self.head(location, None)

    def head(self, location: str, size: int | None) -> bytes:
        """The first ``size`` bytes of a file (all of it, when shorter), read
        as ``read`` reads; ``None``: the whole file, up to the limit."""
        return self.start(location, size)()

    def start(self, location: str, size: int | None) -> Callable[[], bytes]:
        """``head``, begun now and finished by the call it returns (which
        gives the bytes or raises what ``head`` would): a remote read runs
        in the readers' pool meanwhile, so several can be in flight; a
        local one is read when asked for."""
        # where(): in a file warehouse, a link inside it that leads out is
        # refused as any location outside is (without saying where it leads).
        try:
            where = self.locations.where(location)
        except SapwoodError as e:
            refused = e

            def fail() -> bytes:
                raise refused
            return fail
        if where.local:
            return lambda: self._local(where, size)
        future = _REMOTE.submit(self._remote, where, size)
        return lambda: self._wait(future, f"Reading {where.uri}")

    def exists(self, location: str) -> bool:
        """Whether a file is at ``location``; checked as a read is (outside
        the warehouse: the same 400, whatever is there)."""
        where = self.locations.where(location)
        if where.local:
            return os.path.isfile(where.path)
        return self._within_timeout(lambda: _remote_exists(where.uri),
                                    f"Looking up {where.uri}")

    def _within_timeout(self, call: Callable[[], T], doing: str) -> T:
        return self._wait(_REMOTE.submit(call), doing)

    def _wait(self, future: Future[T], doing: str) -> T:
        try:
            return future.result(timeout=self.timeout_s)
        except FutureTimeout:
            future.cancel()
            raise UnavailableError(
                f"{doing} took longer than {self.timeout_s:g} s "
                "(SAPWOOD_METADATA_READ_TIMEOUT_S); retry later") from None

    def _local(self, where: Where, size: int | None) -> bytes:
        path, uri = where.path, where.uri
        try:
            if not stat.S_ISREG(os.stat(path).st_mode):
                raise bad_request(f"Cannot read metadata file {uri}: not a regular file")
            # O_NONBLOCK: should a FIFO replace the file after the stat, the
            # open does not wait for a writer (and fstat below refuses it).
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        except FileNotFoundError:
            raise not_found(uri) from None
        except OSError as e:
            raise bad_request(f"Cannot read metadata file {uri}: {e.strerror}") from None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise bad_request(f"Cannot read metadata file {uri}: not a regular file")
            return self._capped(lambda n: os.read(fd, n), uri, size)
        except OSError as e:
            raise bad_request(f"Cannot read metadata file {uri}: {e.strerror}") from None
        finally:
            os.close(fd)

    def _remote(self, where: Where, size: int | None) -> bytes:
        uri = where.uri
        want = self.max_bytes + 1 if size is None else min(size, self.max_bytes + 1)
        try:
            # One ranged GET (on S3): no HEAD for the size first, as a file
            # opened for reading asks, and never more than the limit fetched;
            # sent directly where it can be (catalog.metadata.s3_direct).
            direct = s3_direct.get(uri, want)
            if direct is not None:
                data = direct
            else:
                fs, path = fsspec.core.url_to_fs(uri)
                data = _ranged(fs, path, want)
        except FileNotFoundError:
            raise not_found(uri) from None
        except ImportError:
            raise bad_request(f"Cannot read metadata file {uri}: no file system for "
                              f"'{where.scheme}' is installed") from None
        except (OSError, ValueError) as e:
            # The storage client's message names the request, not the file's bytes.
            raise bad_request(f"Cannot read metadata file {uri}: {type(e).__name__}") from None
        # Outside the handlers above: the limit's own 400 says what it is.
        return self._capped(io.BytesIO(data).read, uri, size)

    def _capped(self, read: Callable[[int], bytes], uri: str, size: int | None) -> bytes:
        """Read to the end (or ``size`` bytes), refusing anything larger than
        the limit."""
        want = self.max_bytes + 1 if size is None else min(size, self.max_bytes + 1)
        out = bytearray()
        while True:
            chunk = read(min(_CHUNK, want - len(out)))
            if not chunk:
                return bytes(out)
            out += chunk
            if len(out) > self.max_bytes:
                raise bad_request(f"Metadata file {uri} is larger than the limit of "
                                  f"{self.max_bytes} bytes (SAPWOOD_MAX_METADATA_BYTES)")
            if len(out) >= want:  # ``size`` bytes read
                return bytes(out)


def _ranged(fs: Any, path: str, want: int) -> bytes:
    """The first ``want`` bytes of a file (all of it, when shorter)."""
    try:
        return bytes(fs.cat_file(path, start=0, end=want))
    except OSError as e:
        # S3 answers a range of an empty object 416 InvalidRange (s3fs: an
        # EINVAL whose cause is the storage client's error): it holds nothing.
        response = getattr(e.__cause__, "response", None)
        if isinstance(response, dict) and response.get("Error", {}).get("Code") == "InvalidRange":
            return b""
        raise


def _remote_exists(uri: str) -> bool:
    fs, path = fsspec.core.url_to_fs(uri)
    return bool(fs.exists(path))
