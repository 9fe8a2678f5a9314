"""The ``sapwood`` command: its processes (serve, demo, spark-setup) and the
verbs of every other module of cli/, registered on one application."""

from __future__ import annotations

import os
import sys
from importlib.metadata import version as dist_version
from pathlib import Path
from typing import Annotated

import typer

from cli.database import DataDirOpt
from cli.spark_verbs import spark_verb
from core.errors import SapwoodError

# Help is plain text: rich's markup would eat a [REF] in a docstring.
app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode=None,
                  help="Sapwood: a Git-like versioned catalog for Iceberg tables and views.")


def _print_version(asked: bool) -> None:
    if asked:
        typer.echo(dist_version("sapwood"))
        raise typer.Exit()


@app.callback()
def _options(show_version: Annotated[bool, typer.Option(
        "--version", is_eager=True, callback=_print_version,
        help="Print Sapwood's version and exit")] = False) -> None:
    """Sapwood: a Git-like versioned catalog for Iceberg tables and views."""


@app.command()
def version() -> None:
    """Print Sapwood's version (also: sapwood --version)."""
    typer.echo(dist_version("sapwood"))


@app.command()
def serve(host: str = typer.Option("127.0.0.1", metavar="ADDRESS",
                                   help="Address to listen on"),
          port: int = typer.Option(8181, metavar="PORT", help="Port to listen on"),
          database: str | None = typer.Option(
              None, metavar="URL",
              help="SQLAlchemy URL (default: SAPWOOD_DATABASE_URL, else a SQLite "
                   "file in the data directory, created)"),
          data_dir: Path | None = DataDirOpt,
          warehouse: str | None = typer.Option(
              None, metavar="URI",
              help="Base location of new tables and views (default: "
                   "SAPWOOD_WAREHOUSE, else a folder under the data directory)"),
          workers: int = typer.Option(1, metavar="N", help="Server processes"),
          log_level: str = typer.Option("warning", metavar="LEVEL",
                                        help="uvicorn's log level (critical, error, warning, "
                                             "info, debug, trace)"),
          auth: bool | None = typer.Option(
              None, "--auth/--no-auth", help="Require tokens or API keys (default: "
                                            "SAPWOOD_AUTH, else off)"),
          insecure: bool = typer.Option(
              False, help="Serve an open catalog on a non-loopback address anyway"),
          token_ttl: int | None = typer.Option(
              None, metavar="SECONDS",
              help="Lifetime of issued access tokens in seconds (default: "
                   "SAPWOOD_TOKEN_TTL_S, else 3600)"),
          ) -> None:
    """Serve the catalog: Iceberg REST, versioning API, web UI.

    The Iceberg REST catalog at /iceberg (a ref: /iceberg/REF), the versioning
    API at /api/v2, the web UI at /ui and Prometheus metrics at /metrics; the
    start-up lines say where."""
    from api.server import start  # the HTTP layer's entry point

    busy = _port_in_use(host, port)
    if busy:  # before a line that says where it serves
        typer.echo(f"error: cannot listen on {host}:{port} ({busy}): another process "
                   "(a sapwood serve?) has it; choose another port with --port", err=True)
        raise typer.Exit(1)
    if data_dir is not None:  # workers read their settings from the environment
        os.environ["SAPWOOD_DATA_DIR"] = str(data_dir)
    code = start(database, warehouse, host, port, workers, log_level, auth, insecure,
                 token_ttl, say=lambda line, err: typer.echo(line, err=err))
    if code:
        raise typer.Exit(code)


def _port_in_use(host: str, port: int) -> str | None:
    """Why ``host:port`` cannot be listened on, None when it can: bound as
    uvicorn binds (SO_REUSEADDR: a port left in TIME_WAIT is free), then let
    go at once."""
    import errno
    import socket

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except OSError:
        return None  # a name that does not resolve: uvicorn says so
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as e:
            return "address already in use" if e.errno == errno.EADDRINUSE else None
    return None


@app.command()
def demo(data_dir: Annotated[Path | None, typer.Option(
             "--data-dir", metavar="DIR",
             help="Keep the demo's catalog in this (new or empty) folder instead of a "
                  "temporary one")] = None,
         rows: int = typer.Option(2000, min=100, metavar="N",
                                  help="Orders to generate")) -> None:
    """Write-audit-publish with PySpark on an embedded catalog.

    Branch, load, check, merge, replace a view, and audit it through time."""
    spark_verb("demo", *(["--data-dir", str(data_dir)] if data_dir else []),
               "--rows", str(rows))


@app.command("spark-setup")
def spark_setup() -> None:
    """Fetch the Iceberg jars, build the SQL extension; say where.

    For the installed pyspark's line (Spark 3.5 or 4.1), into a cache."""
    spark_verb("setup")


def command() -> typer.Typer:
    """The whole ``sapwood`` command: every module's verbs on ``app`` (once)."""
    from cli.auth import register as register_auth
    from cli.database import register as register_database
    from cli.events import register as register_events
    from cli.help import finish
    from cli.mviews import register as register_mviews
    from cli.retention import register as register_retention
    from cli.undo import register as register_undo
    from cli.versioning import register
    from cli.views import register as register_views

    if not _registered:
        for add in (register_database, register, register_auth, register_views,
                    register_mviews, register_events, register_undo, register_retention):
            add(app)
        finish(app)
        _registered.append(True)
    return app


_registered: list[bool] = []


def main() -> None:
    from cli.client import CliError

    command()
    try:
        # Named as typed, however it was started (python -m cli, a zygote).
        app(standalone_mode=True, prog_name="sapwood")
    except SapwoodError as e:
        typer.echo(f"error: {e.message}", err=True)
        sys.exit(1)
    except CliError as e:
        typer.echo(f"error: {e}", err=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
