"""Whether a metadata file answered from memory is still where it was read.

Metadata files never change, so catalog/metadata/files.py keeps them parsed, by
location. A file that has since gone (removed by hand, a backup restored
without it, another process's gc) must not be answered from memory as if it
were there: a load would then succeed or fail by what this process happened
to have cached, and Iceberg's catalogs answer such a load 404 (the REST
Compatibility Kit's ``testLoadTableWithMissingMetadataFile``). In a file
warehouse the check is one ``stat`` per read (a microsecond beside a
cached load's ~0.5 ms). On object storage it would be a round trip per
read, so there a file read once is taken to stay: only gc deletes files
there, never one a reference's head uses (docs/iceberg-rest.md).
"""

from __future__ import annotations

import os
import stat
from functools import lru_cache

from catalog.metadata.locations import split
from core.errors import SapwoodError


@lru_cache(maxsize=8192)
def _local_path(location: str) -> str | None:
    """The file's path when ``location`` is in the local file system."""
    try:
        where = split(location)
    except SapwoodError:  # never read, so never cached: nothing to check
        return None
    return where.path if where.local else None


def still_there(location: str) -> bool:
    """False only for a local file that is no longer a regular file."""
    path = _local_path(location)
    if path is None:
        return True
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False
