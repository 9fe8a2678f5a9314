"""The application layer: the catalog's work (metadata files, tables, views,
view analysis and invalidation, materialized views, merges, gc and fsck of the
warehouse) as typed calls on the store. No HTTP here: it takes typed commands,
returns typed results and fails with core.errors' domain errors. It is the
HTTP layer's only door to the store (what a route needs of the store is a
method here).

A small kernel of loose modules — the Catalog every operation shares
(kernel), the versioning API's door (versioning), tables, namespaces, the
typed commands, targets, settings, limits, access, health — and a package
per feature, each saying in its docstring what it owns and what it may
import: metadata/ and iceberg_v3/ below the kernel; views/, mviews/, feed/,
merge/, undo/, maintenance/, delegation/ above it.
The kernel imports no feature package; services.py, the wiring, builds
them all. docs/architecture.md draws it; tests/test_layers.py holds it."""
