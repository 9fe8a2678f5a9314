"""Undo: keys put back as they were at a source commit or instant, each in
one new commit (restore), and commits reverted as a restore of the keys
they changed (revert).

Imports of catalog/: the kernel, metadata/, iceberg_v3/, views/ (a view
restored is analysed and checked as a new version is) and merge/ (a revert
names its modes as a merge does); nothing imports it but the API."""
