"""Iceberg table format version 3, where PyIceberg 0.12 stops short: it
models v3 metadata (``TableMetadataV3``) but refuses to write it, cannot
upgrade a table to v3, and writes v1 and v2 manifests and manifest lists
only. Here, following the table spec (format/spec.md):

* ``metadata``: v3 metadata as JSON — ``next-row-id``, snapshots'
  ``first-row-id`` and ``added-rows``, ``encryption-keys`` and snapshots'
  ``key-id`` carried from the file they came from, geometry and geography
  types in the spec's spelling;
* ``lineage``: a commit's row lineage — the upgrade to v3 (``next-row-id``
  starts at 0), each added snapshot's ``first-row-id`` checked against the
  table's ``next-row-id`` and ``next-row-id`` advanced past it;
* ``manifests``: v3 manifest lists (manifests' ``first_row_id`` kept or
  assigned) and manifests, for the catalog's own snapshots (content merges).

Everything else (the models, every other update) is PyIceberg's, applied
by ``updated``: PyIceberg's ``update_table_metadata`` without the deep copy
of the whole result it ends with (lineage applies every commit's updates
through it).

Imports nothing else of catalog/: metadata/, merge/ and undo/ stand on it."""
