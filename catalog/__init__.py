"""The catalog service: Iceberg REST operations as commits on the store."""
