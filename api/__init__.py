"""Sapwood's outer layer: the HTTP APIs and the ``sapwood`` command line."""
