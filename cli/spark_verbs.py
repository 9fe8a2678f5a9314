"""The ``sapwood`` verbs that run Spark (``spark-setup``, ``demo``, ``mv
refresh``): each runs ``python -m spark VERB`` (spark.commands) in a process
of its own and ends with its exit status. The process is the boundary: cli/
and spark/ import nothing of each other (tests/test_layers.py), and the
command line's other verbs never load PySpark or the Spark extra."""

from __future__ import annotations

import subprocess
import sys

import typer


def spark_verb(*args: str) -> None:
    """Runs the Spark side's verb with ``args``; its output is the verb's
    (standard output and error are this process's own)."""
    code = subprocess.call([sys.executable, "-m", "spark", *args])
    if code:
        raise typer.Exit(code)
