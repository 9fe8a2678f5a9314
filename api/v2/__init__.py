"""The versioning API: Nessie's v2 paths and JSON shapes over the store."""
