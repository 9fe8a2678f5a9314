"""Storage access delegated by the catalog: S3 requests signed for a client
(remote signing) and short-lived credentials vended to it, each limited to
one table's files and to what the principal may do with that table."""
