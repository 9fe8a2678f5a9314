"""Engines' own file deletion is off on every table the catalog serves.

Iceberg's ``expire_snapshots``, ``remove_orphan_files`` and ``DROP TABLE …
PURGE`` assume a table has one history; here a table's files are shared by
every branch and by the catalog's own history, so those procedures would
delete files other references still read. Iceberg's engines refuse all three
when the table says ``gc.enabled=false``, so every table is served with it:
new tables are written with it, and a metadata file without it (written by an
older catalog, or registered) is served with it from its next load and passes
it on to the next file the catalog writes. A change that turns it back on is
refused. Only the catalog deletes files (retention policies, ``sapwood gc``):
docs/operations.md, "Why engines' own maintenance is refused".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pyiceberg.table.metadata import TableMetadata
from pyiceberg.table.update import RemovePropertiesUpdate, SetPropertiesUpdate, TableUpdate

from core.errors import InvalidInputError

GC_ENABLED = "gc.enabled"
OFF = "false"
_WHY = ("a table's files are shared by every branch and by the catalog's history, so only "
        "the catalog deletes them (retention policies, `sapwood gc`): see docs/operations.md, "
        "\"Why engines' own maintenance is refused\"")


def served(meta: TableMetadata) -> TableMetadata:
    """``meta`` as the catalog serves and writes it: with ``gc.enabled=false``
    (``meta`` itself when it says so already)."""
    if _off(meta.properties.get(GC_ENABLED)):
        return meta
    return meta.model_copy(update={"properties": {**meta.properties, GC_ENABLED: OFF}})


def answer_key(location: str) -> str:
    """The key of a table's answer made from the metadata file at
    ``location``: not the location alone, whose ETag an older catalog gave
    to the file as it was, without ``gc.enabled=false``."""
    return f"{location}#{GC_ENABLED}={OFF}"


def create_properties(table: str, properties: Mapping[str, str]) -> dict[str, str]:
    """A new table's properties: ``gc.enabled=false`` added; another value asked
    for is refused."""
    value = properties.get(GC_ENABLED)
    if value is None:
        return {**properties, GC_ENABLED: OFF}
    if not _off(value):
        raise _refused(table)
    return dict(properties)


def refuse_turning_on(table: str, updates: Sequence[TableUpdate]) -> None:
    """400 for a commit that sets ``gc.enabled`` to anything but false or
    removes it (which means Iceberg's default, true)."""
    for u in updates:
        if isinstance(u, SetPropertiesUpdate) and not _off(u.updates.get(GC_ENABLED, OFF)):
            raise _refused(table)
        if isinstance(u, RemovePropertiesUpdate) and GC_ENABLED in u.removals:
            raise InvalidInputError(f"{GC_ENABLED} cannot be removed from {table} (without "
                                    f"it, engines delete files): {_WHY}")


def _off(value: str | None) -> bool:
    # Iceberg reads the property with Boolean.parseBoolean: only "true", in
    # any case, is on; anything but "false" is refused all the same, so the
    # stored value says what it means.
    return value is not None and value.lower() == OFF


def _refused(table: str) -> InvalidInputError:
    return InvalidInputError(f"{GC_ENABLED} cannot be turned on for {table} (only false is "
                             f"accepted): {_WHY}")
