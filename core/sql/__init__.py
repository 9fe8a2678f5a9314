"""SQL analysis of view definitions (sqlglot): dependencies, expanded text,
field origins."""
