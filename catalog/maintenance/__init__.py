"""Keeping the warehouse and the history bounded and whole: garbage
collection of warehouse files (gc), what a table or view version references
(referenced, referenced_sets), whether a file is still needed (liveness),
integrity of the warehouse (fsck_files), the reports both give (reports),
retention policies and snapshot expiry (retention, expiry), and all of it as
the server runs it for an administrator (admin). The catalog,
not the engines, deletes files: only what no retained commit on any
reference needs.

Imports of catalog/: the kernel (an expired table's new metadata is a
table commit) and metadata/; delegation/ imports it (a signed DELETE asks
whether a file is still referenced)."""
