"""The application layer: the catalog's work (metadata files, tables, views,
view analysis and invalidation, materialized views, merges, gc and fsck of the
warehouse) as typed calls on the store. No HTTP here: it takes typed commands,
returns typed results and fails with core.errors' domain errors.

A small kernel of loose modules — the Catalog every operation shares
(kernel), tables, namespaces, the typed commands, targets, settings, limits,
access — and a package per feature, each saying in its docstring what it
owns and what it may import: metadata/ and iceberg_v3/ below the kernel;
views/, mviews/, feed/, merge/, undo/, maintenance/, delegation/ above it.
The kernel imports no feature package; services.py, the wiring, builds
them all. docs/architecture.md draws it; tests/test_layers.py holds it."""
