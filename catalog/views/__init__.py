"""Iceberg views and what the catalog knows of their SQL: creating, loading
and replacing a view (views), its versions and a version written from an
analysis (versions), the SQL analysis at a commit (analysis, engine_types),
whether a view holds (status), strict invalidation and CASCADE when what a
view reads changes (invalidation) and the drops and renames that ask it
(lifecycle), a view's audit trail (audit), and definer views: who a view
runs as (security, definers) and reading a table through one (via_views).

Imports of catalog/: the kernel, metadata/, and mviews/ — the one two-way
tie inside catalog/ (docs/architecture.md): a materialized view is a view,
so loading or replacing one as a view goes through mviews/, and mviews/
analyses its SQL with this package."""
