"""The ``sapwood`` command line."""

from __future__ import annotations

import os
import sys
from importlib.metadata import version as dist_version
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from core.errors import SapwoodError

if TYPE_CHECKING:  # imported where used: the CLI starts without them
    from api.catalog.fsck_files import FilesCheck
    from api.settings import Settings
    from store import Store

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Sapwood: a Git-like versioned catalog for Iceberg tables and views.")

DEFAULT_DATA_DIR = Path(os.environ.get("SAPWOOD_DATA_DIR", Path.home() / ".sapwood"))


def database_url(database: str | None) -> str:
    from store.db import default_database_url

    return database or os.environ.get("SAPWOOD_DATABASE_URL") or default_database_url(
        DEFAULT_DATA_DIR)


@app.command()
def version() -> None:
    """Print Sapwood's version."""
    typer.echo(dist_version("sapwood"))


@app.command()
def init(database: str | None = typer.Option(
        None, help="SQLAlchemy URL (default: SAPWOOD_DATABASE_URL, else a SQLite file "
                   "under ~/.sapwood)"),
         auth: bool = typer.Option(
             False, help="Write the starter access configuration: principal 'admin' "
                         "(its key printed once) with every privilege, 'main' protected")
         ) -> None:
    """Create or upgrade the catalog database; the branch 'main' exists afterwards."""
    from api.cli_auth import starter
    from store import Store

    url = database_url(database)
    store = Store(url)
    try:
        main = store.get_reference("main")
        typer.echo(f"catalog ready at {_safe(url)}; main is at {main.hash[:12]}")
        if auth:
            credential = starter(store)
            if credential is None:
                typer.echo("principals exist already: starter configuration not written")
            else:
                typer.echo("starter configuration: role admin holds every privilege, "
                           "main is protected; admin's credential (shown once):")
                typer.echo(credential)
    finally:
        store.close()


@app.command()
def fsck(database: str | None = typer.Option(
        None, help="SQLAlchemy URL (default: SAPWOOD_DATABASE_URL, else the SQLite file "
                   "under ~/.sapwood)"),
         files: bool = typer.Option(
             False, "--files", help="Also check that every file a table or view version "
                                    "still in history references exists in the warehouse"),
         warehouse: str | None = typer.Option(
             None, help="The warehouse, for --files (default: SAPWOOD_WAREHOUSE, else the "
                        "one under ~/.sapwood)"),
         grace: float | None = typer.Option(
             None, help="For --files: versions a reflog entry this recent names count too "
                        "(default: SAPWOOD_GC_GRACE_S, else 7 days: gc's)")) -> None:
    """Check the catalog's integrity: refs, commits, index nodes, content values
    (and with --files, the warehouse files they reference).

    Reads only. Exits 1 when anything is missing or does not match its hash."""
    from api.settings import Settings
    from store import Store
    from store.fsck import fsck as check

    settings = Settings.resolve(database, warehouse)
    store = Store(settings.database_url)
    try:
        report = check(store)
        found = _check_files(store, settings, grace) if files else None
    finally:
        store.close()
    typer.echo(f"{report.refs} refs, {report.commits} commits "
               f"({report.unreachable_commits} unreachable), {report.nodes} index nodes, "
               f"{report.contents} content values, {report.index_rows} change-index rows")
    for p in report.problems:
        typer.echo(str(p))
    problems = len(report.problems)
    if found is not None:
        typer.echo(str(found))
        for m in found.missing:
            typer.echo(str(m))
        problems += len(found.missing)
    if problems:
        typer.echo(f"{problems} problem(s)", err=True)
        raise typer.Exit(1)
    typer.echo("ok")


def _check_files(store: Store, settings: Settings, grace: float | None) -> FilesCheck:
    from api.catalog.files import Locations, MetadataFiles
    from api.catalog.fsck_files import check_files
    from api.catalog.reading import MetadataReader
    from store.gc import DEFAULT_GRACE_S

    if grace is None:
        grace = float(os.environ.get("SAPWOOD_GC_GRACE_S", DEFAULT_GRACE_S))
    reader = MetadataReader(Locations(settings.warehouse, settings.allow_external_locations),
                            settings.max_metadata_bytes, settings.read_timeout_s)
    return check_files(store, MetadataFiles(reader), settings.warehouse, grace)


@app.command()
def gc(database: str | None = typer.Option(
        None, help="SQLAlchemy URL (default: SAPWOOD_DATABASE_URL, else the SQLite file "
                   "under ~/.sapwood)"),
       dry_run: bool = typer.Option(False, "--dry-run", help="Say what would go; remove nothing"),
       grace: float | None = typer.Option(
           None, help="Seconds an unreferenced commit or file is kept (default: "
                      "SAPWOOD_GC_GRACE_S, else 7 days)"),
       write_window: float | None = typer.Option(
           None, "--write-window",
           help="Seconds a writer may take between writing a file and committing it: "
                "files younger than that (counted from when the mark began) are never "
                "deleted, whatever the grace (default: SAPWOOD_GC_WRITE_WINDOW_S, else "
                "3600; at least 10)"),
       warehouse: str | None = typer.Option(
           None, help="The warehouse (default: SAPWOOD_WAREHOUSE, else the one under "
                      "~/.sapwood)")) -> None:
    """Remove the commits no reference reaches (older than the grace period),
    the objects only they hold, then the warehouse files no table or view
    version still in history references. Safe while writers commit
    (docs/operations.md)."""
    from api.catalog.files import Locations, MetadataFiles
    from api.catalog.gc_files import collect_all
    from api.catalog.reading import MetadataReader
    from api.settings import Settings
    from store import Store

    settings = Settings.resolve(database, warehouse)
    store = Store(settings.database_url)
    try:
        reader = MetadataReader(Locations(settings.warehouse, settings.allow_external_locations),
                                settings.max_metadata_bytes, settings.read_timeout_s)
        report, files = collect_all(store, MetadataFiles(reader), settings.warehouse, grace,
                                    write_window, dry_run)
    finally:
        store.close()
    typer.echo(str(report))
    if files is None:  # a commit needed what the sweep would remove: run again
        raise typer.Exit(2)
    typer.echo(str(files))


@app.command("export")
def export_(output: str = typer.Argument("-", help="File to write (- for standard output)"),
            database: str | None = typer.Option(
                None, help="SQLAlchemy URL (default: SAPWOOD_DATABASE_URL, else the SQLite "
                           "file under ~/.sapwood)")) -> None:
    """Write the whole catalog (commits, refs, reflog, grants …) as JSON lines:
    a backup, or a move to another database (docs/operations.md)."""
    import sys

    from store import Store
    from store.dump import write_dump

    store = Store(database_url(database))
    try:
        if output == "-":
            n = write_dump(store.db, sys.stdout)
        else:
            with open(output, "w", encoding="utf-8") as f:
                n = write_dump(store.db, f)
    finally:
        store.close()
    typer.echo(f"exported {n} rows", err=True)


@app.command("import")
def import_(source: str = typer.Argument(..., help="An export file (- for standard input)"),
            database: str | None = typer.Option(
                None, help="SQLAlchemy URL of a new, empty catalog")) -> None:
    """Load an export into a new catalog: the same commits and hashes."""
    import sys

    from core.errors import InvalidInputError
    from store import Store
    from store.dump import import_rows

    store = Store(database_url(database))
    try:
        if source == "-":
            counts = import_rows(store.db, sys.stdin)
        else:
            with open(source, encoding="utf-8") as f:
                counts = import_rows(store.db, f)
    except InvalidInputError as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(1) from None
    finally:
        store.close()
    typer.echo(", ".join(f"{n} {t}" for t, n in counts.items()) + " imported; "
               "run sapwood fsck to check every hash")


@app.command()
def serve(host: str = typer.Option("127.0.0.1", help="Address to listen on"),
          port: int = typer.Option(8181, help="Port to listen on"),
          database: str | None = typer.Option(
              None, help="SQLAlchemy URL (default: SAPWOOD_DATABASE_URL, else a SQLite "
                         "file under the data directory)"),
          warehouse: str | None = typer.Option(
              None, help="Base location of new tables and views (default: "
                         "SAPWOOD_WAREHOUSE, else a folder under the data directory)"),
          workers: int = typer.Option(1, help="Server processes"),
          log_level: str = typer.Option("warning", help="uvicorn's log level"),
          auth: bool | None = typer.Option(
              None, "--auth/--no-auth", help="Require tokens or API keys (default: "
                                            "SAPWOOD_AUTH, else off)"),
          insecure: bool = typer.Option(
              False, help="Serve an open catalog on a non-loopback address anyway"),
          token_ttl: int | None = typer.Option(
              None, help="Lifetime of issued access tokens in seconds (default: "
                         "SAPWOOD_TOKEN_TTL_S, else 3600)"),
          ) -> None:
    """Serve the Iceberg REST catalog (``/iceberg/v1``, ``/iceberg/{ref}/v1``)
    and the versioning API (``/api/v2``)."""
    from api.auth.config import AuthSettings, refuse_open_bind
    from api.server import serve as run
    from api.settings import Settings
    from store import Store

    # Workers build their app from the environment: the choices travel there.
    if auth is not None:
        os.environ["SAPWOOD_AUTH"] = "1" if auth else "0"
    if token_ttl is not None:
        os.environ["SAPWOOD_TOKEN_TTL_S"] = str(token_ttl)
    auth_settings = AuthSettings.from_env()
    why = refuse_open_bind(host, auth_settings, insecure)
    if why:
        typer.echo(f"error: {why}", err=True)
        raise typer.Exit(2)
    if host in ("0.0.0.0", "::") and not os.environ.get("SAPWOOD_ALLOWED_HOSTS"):
        typer.echo("note: only requests addressed to loopback names are served; set "
                   "SAPWOOD_ALLOWED_HOSTS to the host names clients use", err=True)
    if insecure and not auth_settings.configured:
        typer.echo(f"warning: serving an OPEN catalog on {host} (--insecure): anyone who "
                   "reaches this address can read and change everything", err=True)
    settings = Settings.resolve(database, warehouse)
    Store(settings.database_url).close()  # create or upgrade the schema once, up front
    typer.echo(f"Sapwood on http://{host}:{port}/iceberg (database {_safe(settings.database_url)},"
               f" warehouse {settings.warehouse}, authentication "
               f"{'on' if auth_settings.configured else 'off'})")
    run(settings, host, port, workers, log_level)


@app.command()
def demo(data_dir: Annotated[Path | None, typer.Option(
             "--data-dir", help="Keep the demo's catalog in this (new or empty) folder "
                                "instead of a temporary one")] = None,
         rows: int = typer.Option(2000, min=100, help="Orders to generate")) -> None:
    """Write-audit-publish with PySpark on an embedded catalog: branch, load, check,
    merge, replace a view, and audit it through time."""
    from spark.demo import run
    from spark.errors import CatalogError, SetupError

    try:
        run(data_dir, rows, out=lambda line: typer.echo(line))
    except (SetupError, CatalogError) as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(1) from None


@app.command("spark-setup")
def spark_setup() -> None:
    """Find or build the jars Spark needs for Iceberg, and say where they are."""
    from spark.errors import SetupError
    from spark.jars import OVERRIDE, cache_dir, java, java_version, spark_jars

    try:
        java()
        typer.echo(f"java: {java_version()}")
        jars = spark_jars(log=lambda line: typer.echo(line))
    except SetupError as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(1) from None
    how = {"override": f"taken from {OVERRIDE}", "cache": f"already built in {cache_dir()}",
           "built": f"built into {cache_dir()}"}[jars.source]
    typer.echo(f"Iceberg jars for Spark ({how}):")
    for path in jars.paths:
        typer.echo(f"  {path} ({path.stat().st_size / 1e6:.1f} MB)")


def _safe(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


def main() -> None:
    from api.cli_auth import register as register_auth
    from api.cli_client import CliError
    from api.cli_mviews import register as register_mviews
    from api.cli_versioning import register
    from api.cli_views import register as register_views

    register(app)
    register_auth(app)
    register_views(app)
    register_mviews(app)
    try:
        app(standalone_mode=True)
    except SapwoodError as e:
        typer.echo(f"error: {e.message}", err=True)
        sys.exit(1)
    except CliError as e:
        typer.echo(f"error: {e}", err=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
