"""Iceberg metadata files and where they live: reading a file a client named
safely (reading, fileio), writing metadata once and reading it cached
(files, local_files, exclusive, still_there), the catalog's own S3 requests
and their signatures (s3_direct, sigv4), the one location check and the
claims a table or view takes (locations, claims), the files a new snapshot
names (snapshot_files, manifest_lists), the metadata with only the snapshots a ref names
(referenced_snapshots), a table commit's requirements and updates (table_updates),
and ``gc.enabled=false`` on every table (engine_gc).

Imports of catalog/: iceberg_v3/ and the kernel's plain settings (settings,
limits); nothing that plans or lands a commit, so the kernel and every
feature stand on it."""
