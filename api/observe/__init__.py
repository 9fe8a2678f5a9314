"""Watching a running Sapwood: Prometheus metrics, access logs (plain text
or JSON) with a request id, and health probes."""
