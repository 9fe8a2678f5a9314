"""Creating a metadata file outside a file warehouse: once, never over
another, in one request.

On S3 that is a PUT with ``If-None-Match: *`` (s3fs's create mode): the
store refuses it, 412, when the key exists, so two writers of one name
cannot both succeed and nothing is looked up first. A store that predates
conditional writes answers the header 501 NotImplemented (as AWS S3 did
before August 2024); there the file is looked up, then written with a plain
PUT, as before conditional writes, and the store is remembered so each
later file costs no refused request. The conditional PUT is sent directly
where it can be (catalog.metadata.s3_direct), else through s3fs. In a
local file system the create is ``O_EXCL`` (used only where
catalog.metadata.local_files cannot be); elsewhere fsspec's create mode is
as exclusive as its file system makes it.
"""

from __future__ import annotations

import errno
import weakref
from typing import Any

from catalog.metadata import s3_direct
from core.errors import SapwoodError, bad_request

# File systems (fsspec instances, one per store and settings) that answered
# a conditional write 501 NotImplemented.
_UNCONDITIONAL: weakref.WeakSet[Any] = weakref.WeakSet()


def create(fs: Any, path: str, data: bytes, shown: str) -> None:
    """Create ``path`` holding ``data``; a 400 when a file is there already
    (``shown``: the location as the answer names it). FileNotFoundError
    when a folder or the bucket is missing."""
    try:
        if "file" in fs.protocol:
            with fs.open(path, "xb") as f:
                f.write(data)
        elif fs in _UNCONDITIONAL:
            _looked_up_then_written(fs, path, data, shown)
        elif not s3_direct.create(fs, path, data):
            fs.pipe_file(path, data, mode="create")
    except FileExistsError:
        raise _exists(shown) from None
    except s3_direct.Unconditional:
        _UNCONDITIONAL.add(fs)
        _looked_up_then_written(fs, path, data, shown)
    except OSError as e:
        code = _code(e)
        # Two conditional PUTs of one name at once: S3 may answer the second
        # 409 ConditionalRequestConflict (s3fs: EIO): the file is being created.
        if code == "ConditionalRequestConflict":
            raise _exists(shown) from None
        if code == "NotImplemented" or e.errno == errno.ENOSYS:
            _UNCONDITIONAL.add(fs)
            _looked_up_then_written(fs, path, data, shown)
            return
        raise


def _looked_up_then_written(fs: Any, path: str, data: bytes, shown: str) -> None:
    if fs.exists(path):
        raise _exists(shown)
    fs.pipe_file(path, data)


def _code(e: OSError) -> str | None:
    """The storage client's error code (s3fs keeps botocore's error as the
    cause of the OSError it raises)."""
    response = getattr(e.__cause__, "response", None)
    if isinstance(response, dict):
        code = response.get("Error", {}).get("Code")
        return code if isinstance(code, str) else None
    return None


def _exists(shown: str) -> SapwoodError:
    return bad_request(f"Metadata file {shown} exists already: files are never overwritten")
