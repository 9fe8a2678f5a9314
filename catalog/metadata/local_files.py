"""Writing a file into a file warehouse without following links.

Locations are judged as real paths before anything is written
(catalog.metadata.locations), but a link could be swapped in between that check and
the write: whoever writes a table's data into a file warehouse can write
into its folders. So a metadata file is written here one folder at a time
from the warehouse's real path: each folder is made if missing and opened
without following a link (``O_NOFOLLOW``), and the file is created in the
last one, also without following a link and never over an existing file
(``O_EXCL``). A link anywhere below the warehouse folder on the way is
refused, wherever it leads. Where ``O_NOFOLLOW`` or ``dir_fd`` is missing
(not Linux or macOS), the check before the write is all there is.
"""

from __future__ import annotations

import contextlib
import errno
import os

from core.errors import bad_request

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
SUPPORTED = bool(_NOFOLLOW and _DIRECTORY) and os.open in os.supports_dir_fd \
    and os.mkdir in os.supports_dir_fd


def write_new(root: str, parts: list[str], data: bytes, shown: str) -> None:
    """Create the file ``root/parts...`` holding ``data``. ``root``: the
    warehouse's real path; ``parts``: the folders below it and the file's
    name; ``shown``: the location as errors name it. 400 when a link is on
    the way or the file exists already."""
    if not parts:
        raise bad_request(f"Cannot write metadata file {shown}: it names the warehouse itself")
    os.makedirs(root, exist_ok=True)  # the warehouse folder itself, as configured
    folder = os.open(root, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    try:
        for name in parts[:-1]:
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, 0o777, dir_fd=folder)
            try:
                inner = os.open(name, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC,
                                dir_fd=folder)
            except OSError as e:
                # ELOOP: a link (O_NOFOLLOW); ENOTDIR: a file, or a link on
                # systems that report it so.
                if e.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise _linked(shown) from None
                raise
            os.close(folder)
            folder = inner
        try:
            fd = os.open(parts[-1], os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC,
                         0o666, dir_fd=folder)
        except FileExistsError:  # a link there is "existing" too: O_EXCL never follows one
            raise bad_request(f"Metadata file {shown} exists already: files are never "
                              "overwritten") from None
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
    finally:
        os.close(folder)


def _linked(shown: str) -> Exception:
    return bad_request(f"Cannot write metadata file {shown}: a symbolic link (or a file) is "
                       "where a folder of the warehouse should be; the server writes only "
                       "into real folders below the warehouse")
