"""Keeping the warehouse and the history bounded and whole: garbage
collection of warehouse files (gc), what a table or view version references
(referenced), integrity of the warehouse (fsck_files), and the reports both
give (reports). The catalog, not the engines, deletes files: only what no
retained commit on any reference needs."""
