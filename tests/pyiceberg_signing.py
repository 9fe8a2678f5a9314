"""PyIceberg's remote signing made safe across threads in the test process
(the server is not involved: tests/conftest.py installs this).

PyIceberg 0.12's FsspecFileIO builds its S3 file system with s3fs, which
fsspec caches per process: every FileIO with the same S3 settings gets the
same instance. Each FileIO then, once per thread (its file systems are
cached per thread), takes the client's ``before-sign.s3`` handler down and
puts its own signer up (``unregister``, then ``register_last``, unique id
1925). A request another thread signs between the two goes out unsigned,
and S3 answers 403 — the suite saw it as HeadObject's ``PermissionError:
Forbidden`` during a scan; and a FileIO's request may be signed through
another table's or principal's signer, whichever took the client last.
Upstream: apache/iceberg-python#3896 (and #3625, #3783).

Here a FileIO with a signer gets a file system of its own (the same
settings, outside fsspec's cache) with its signer put up once before any
request uses it; PyIceberg's own work, shared instance included, is left
as it is. tests/api/test_signing_threads.py holds the moment between the
two open and shows no request goes out unsigned."""

from __future__ import annotations

from typing import Any

from pyiceberg.io import S3_SIGNER
from pyiceberg.io import fsspec as pyiceberg_fsspec

_SHARED = pyiceberg_fsspec._s3  # the function this wraps
_SIGNER_ID = 1925  # PyIceberg's unique id for its signer


def _own_s3(properties: Any) -> Any:
    shared = _SHARED(properties)
    signer = properties.get(S3_SIGNER)
    if not signer:
        return shared
    fs = type(shared)(*shared.storage_args, **shared.storage_options,
                      skip_instance_cache=True)
    fs.s3.meta.events.register_last("before-sign.s3",
                                    pyiceberg_fsspec.SIGNERS[signer](properties),
                                    unique_id=_SIGNER_ID)
    return fs


def install() -> None:
    """Every scheme PyIceberg reads through s3fs (FsspecFileIO copies the
    table when a FileIO is made)."""
    for scheme, make in list(pyiceberg_fsspec.SCHEME_TO_FS.items()):
        if make is _SHARED:
            pyiceberg_fsspec.SCHEME_TO_FS[scheme] = _own_s3
