"""The application layer: the catalog's work (metadata files, tables, views,
view analysis and invalidation, materialized views, merges, gc and fsck of the
warehouse) as typed calls on the store. No HTTP here: it takes typed commands,
returns typed results and fails with core.errors' domain errors."""
