"""Storage access delegated by the catalog: S3 requests signed for a client
(remote signing) and short-lived credentials vended to it, each limited to
one table's files and to what the principal may do with that table.
(Reading a table through a definer view is views/via_views.)

Imports of catalog/: the kernel's targets, maintenance/ (whether a file a
client would delete is still referenced) and metadata/ (the SigV4 signer
the catalog's own S3 requests use too)."""
