"""A table's metadata with only the snapshots a branch or tag names: the
REST spec's ``loadTable?snapshots=refs``, as Iceberg's reference catalog
answers it (``TableMetadata.Builder.suppressHistoricalSnapshots``).

Clients ask for it to load less (Java's ``snapshot-loading-mode=refs``
loads the rest when a time travel needs it; PyIceberg's does not). The
snapshots left out take their statistics files with them, and the snapshot
log keeps only what follows its last entry for a snapshot left out: a log
with a gap would say a later snapshot was current in the gap's time, and a
time travel to an instant would then read the wrong one. The metadata log
is kept whole, as Iceberg keeps it."""

from __future__ import annotations

from pyiceberg.table.metadata import TableMetadata


def referenced_only(meta: TableMetadata) -> TableMetadata:
    """``meta`` itself when every snapshot is named by a ref."""
    named = {r.snapshot_id for r in meta.refs.values()}
    if all(s.snapshot_id in named for s in meta.snapshots):
        return meta
    log = []
    for entry in meta.snapshot_log:
        if entry.snapshot_id in named:
            log.append(entry)
        else:
            log.clear()
    return meta.model_copy(update={
        "snapshots": [s for s in meta.snapshots if s.snapshot_id in named],
        "snapshot_log": log,
        "statistics": [f for f in meta.statistics if f.snapshot_id in named],
        "partition_statistics": [f for f in meta.partition_statistics
                                 if f.snapshot_id in named],
    })
