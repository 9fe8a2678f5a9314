"""The ``sapwood`` command line: verbs that open the catalog's database
(init, fsck, gc, export, import, principals, keys, grants), verbs that talk
to a running catalog over HTTP (branches, log, diff, merge, views,
materialized views: cli.client, built on the shared client/), and the
processes (serve, demo, spark-setup). It builds on the catalog layer, the
store, core and client/; it imports nothing of spark/ (the verbs that run
Spark start ``python -m spark``: cli.spark_verbs) and never the HTTP layer's
internals (``serve`` hands over to ``api.server``, its entry point)."""
