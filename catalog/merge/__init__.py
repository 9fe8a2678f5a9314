"""Merges, transplants and their previews: the orchestration — plan, combine,
land with a retry, answer (merging) — what a merge does to the views on the
target (impact: the views it would invalidate, a cycle it would make), and
content-aware merges that look inside metadata files (content/).

Imports of catalog/: the kernel, metadata/, iceberg_v3/ and views/ (a
merged view's analysis, the views a merge breaks); undo/ imports it (a
revert names its modes as a merge does)."""
