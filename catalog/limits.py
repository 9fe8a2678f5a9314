"""The limits the catalog itself enforces (api/limits.py lists every limit,
these included; docs/limits.md explains them)."""

from __future__ import annotations

# A metadata file the server reads (register, loads), unless
# SAPWOOD_MAX_METADATA_BYTES says otherwise; the biggest real ones, with
# thousands of snapshots, are a few megabytes.
DEFAULT_MAX_METADATA_BYTES = 64 * 1024 * 1024
# Seconds a read from remote storage (s3:// ...) may take, unless
# SAPWOOD_METADATA_READ_TIMEOUT_S says otherwise.
DEFAULT_READ_TIMEOUT_S = 30.0
# Any location the server writes to or reads from, built or given (a
# write.metadata.path property included): a file system refuses longer
# paths, and creating folders that deep would exhaust the stack.
MAX_PATH_CHARS = 3072
MAX_PATH_DEPTH = 128
# Table format versions: 1 and 2 through PyIceberg, 3 through catalog.iceberg_v3
# (PyIceberg 0.12 models v3 but refuses to write it).
TABLE_FORMATS = (1, 2, 3)


def unsupported_format(version: object) -> str:
    *first, last = map(str, TABLE_FORMATS)
    return (f"Table format version {version} is not supported: this catalog writes format "
            f"versions {', '.join(first)} and {last} (format-version)")
# Levels of views reading views that a view's status follows (a view read
# through more is reported invalid, saying so); the dependency and
# dependents answers go as deep at most.
MAX_VIEW_NESTING = 32
