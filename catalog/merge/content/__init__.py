"""Content-aware merges: for each key both sides of a merge changed, look
inside the metadata files and combine them (combine, over tables: appends
and deletes — additions, deletes — and views), or say why not
(not_mergeable).

Imports of catalog/: the kernel (tables and their content values),
metadata/, iceberg_v3/ (v3 manifests and row lineage of a combined
snapshot) and views/ (a merged view's analysis and definer)."""
