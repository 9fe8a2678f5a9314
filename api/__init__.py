"""Sapwood's HTTP layer: the Iceberg REST catalog, the versioning API (v2),
the web UI, authentication and the server. Routes parse requests, call the
catalog layer and shape its typed results into the wire's JSON."""
