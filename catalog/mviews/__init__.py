"""Materialized views: their definition, served as a view and, when the
stored rows may be read, as a table (mviews), their freshness at a commit
(state), and a refresh planned at a pinned commit and landed by the
engine's storage commit (refresh).

Imports of catalog/: the kernel, metadata/, and views/ — the one two-way
tie inside catalog/ (docs/architecture.md): a materialized view's SQL is
analysed, secured and invalidated as a view's, and views/ loads and
replaces a materialized view through this package."""
