"""The verbs that open the catalog's database directly (no server needed):
init, fsck, gc, export, import. For whoever runs the catalog."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from cli.output import progress

if TYPE_CHECKING:  # imported where used: the CLI starts without them
    from catalog.maintenance.fsck_files import FilesCheck
    from catalog.settings import CatalogSettings
    from store import Store

database_app = typer.Typer()


DB_HELP = ("SQLAlchemy URL (default: SAPWOOD_DATABASE_URL, else sapwood.db in the data "
           "directory)")
DATA_DIR_HELP = ("Folder of the embedded catalog: its SQLite file (sapwood.db) and its "
                 "warehouse folder, where --database and --warehouse (or their variables) "
                 "do not say otherwise; one setting for serve and every database verb "
                 "(default: SAPWOOD_DATA_DIR, else ~/.sapwood)")
# The one data-directory setting, shared by serve and every database verb.
DataDirOpt = typer.Option(None, "--data-dir", metavar="DIR", help=DATA_DIR_HELP)
DatabaseOpt = typer.Option(None, "--database", metavar="URL", help=DB_HELP)
ReportOpt = typer.Option(
    None, "--report", metavar="FILE",
    help="With --from-nessie: write what the import did as JSON (every Nessie commit hash "
         "mapped to Sapwood's, each reference, every problem)")


def database_url(database: str | None, data: Path | None = None) -> str:
    from catalog.settings import database_url as resolved

    return resolved(database, data)


def safe_url(url: str) -> str:
    """A database URL as it may be printed (no password)."""
    from store.db import shown_url

    return shown_url(url)


def existing(url: str, warehouse: str | None = None) -> str:
    """``url``, once it is known to hold a catalog: a verb that uses one
    never creates it (only init, serve and import do), and says which one it
    opened, on standard error (standard output stays the verb's answer)."""
    from cli.client import CliError
    from store.db import catalog_missing

    why = catalog_missing(url)
    if why is not None:
        raise CliError(
            f"no catalog at {safe_url(url)} ({why}): `sapwood init` or `sapwood serve` "
            "creates one; name an existing one with --data-dir DIR or --database URL "
            "(or SAPWOOD_DATA_DIR, SAPWOOD_DATABASE_URL)")
    named(url, warehouse)
    return url


def named(url: str, warehouse: str | None = None) -> None:
    """The line that names the catalog a verb opened (standard error)."""
    typer.echo(f"database: {safe_url(url)}"
               + (f", warehouse: {warehouse}" if warehouse else ""), err=True)


def existing_settings(database: str | None, warehouse: str | None, data: Path | None,
                      files: bool) -> CatalogSettings:
    """An existing catalog's settings (``existing``); ``files``: the verb
    reads the warehouse too, so its line names it."""
    from catalog.settings import CatalogSettings

    settings = CatalogSettings.resolve(database, warehouse, data=data, create=False)
    existing(settings.database_url, settings.warehouse if files else None)
    return settings


def register(app: typer.Typer) -> None:
    for command in database_app.registered_commands:
        app.registered_commands.append(command)


@database_app.command()
def init(database: str | None = DatabaseOpt, data_dir: Path | None = DataDirOpt,
         auth: bool = typer.Option(
             False, help="Write the starter access configuration: principal 'admin' "
                         "(its key printed once) with every privilege, 'main' protected")
         ) -> None:
    """Create or upgrade the catalog database.

    The branch 'main' exists afterwards."""
    from catalog.access import starter
    from store import Store

    url = database_url(database, data_dir)
    store = Store(url)
    try:
        main = store.get_reference("main")
        typer.echo(f"catalog ready at {safe_url(url)}; main is at {main.hash[:12]}")
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


@database_app.command()
def fsck(database: str | None = DatabaseOpt, data_dir: Path | None = DataDirOpt,
         files: bool = typer.Option(
             False, "--files", help="Also check that every file a table or view version "
                                    "still in history references exists in the warehouse"),
         warehouse: str | None = typer.Option(
             None, metavar="URI",
             help="The warehouse, for --files (default: SAPWOOD_WAREHOUSE, else the "
                  "one in the data directory)"),
         grace: float | None = typer.Option(
             None, metavar="SECONDS",
             help="For --files: versions a reflog entry this recent names count too "
                  "(default: SAPWOOD_GC_GRACE_S, else 7 days: gc's)"),
         memory: int = typer.Option(
             512, "--memory-mb", min=64, metavar="MB",
             help="Memory budget in MB: caches and the sets that avoid checking an "
                  "object twice stay within it"),
         parallel: bool = typer.Option(
             False, "--parallel",
             help="Check the change index in a second process while this one walks "
                  "the objects (half the budget each)"),
         as_json: bool = typer.Option(
             False, "--json", help="Print one JSON document, as GET /api/v2/admin/fsck "
                                   "answers")) -> None:
    """Check the catalog's integrity (read-only).

    Refs, commits, index nodes, content values (and with --files, the
    warehouse files they reference). Reads only, in bounded memory; progress
    on a terminal. Exits 1 when anything is missing, does not match its
    hash, or (a warehouse file) cannot be read; the check goes on past each."""
    from store import Store
    from store.fsck import fsck as check

    settings = existing_settings(database, warehouse, data_dir, files)
    store = Store(settings.database_url, node_cache_size=100)
    try:
        report = check(store, memory * 1024 * 1024, progress("fsck") if sys.stderr.isatty()
                       else None, parallel)
        found = _check_files(store, settings, grace) if files else None
    finally:
        store.close()
        if sys.stderr.isatty():
            sys.stderr.write("\r\x1b[K")  # the progress line gives way to the report
    problems = len(report.problems) + (len(found.problems) if found is not None else 0)
    if as_json:
        from catalog.maintenance.reports import fsck_json

        typer.echo(json.dumps(fsck_json(report, found), indent=2))
        if problems:
            typer.echo(f"{problems} problem(s)", err=True)
            raise typer.Exit(1)
        return
    typer.echo(f"{report.refs} refs, {report.commits} commits "
               f"({report.unreachable_commits} unreachable), {report.nodes} index nodes, "
               f"{report.contents} content values, {report.index_rows} change-index rows")
    for p in report.problems:
        typer.echo(str(p))
    if found is not None:
        typer.echo(str(found))
        for m in found.problems:  # missing and damaged files
            typer.echo(str(m))
    if problems:
        typer.echo(f"{problems} problem(s)", err=True)
        raise typer.Exit(1)
    typer.echo("ok")



def _check_files(store: Store, settings: CatalogSettings, grace: float | None) -> FilesCheck:
    from catalog.maintenance.fsck_files import check_files
    from catalog.metadata.files import open_files

    return check_files(store, open_files(settings), settings.warehouse, grace)


@database_app.command()
def gc(database: str | None = DatabaseOpt, data_dir: Path | None = DataDirOpt,
       dry_run: bool = typer.Option(False, "--dry-run", help="Say what would go; remove nothing"),
       grace: float | None = typer.Option(
           None, metavar="SECONDS",
           help="Seconds an unreferenced commit or file is kept (default: "
                "SAPWOOD_GC_GRACE_S, else 7 days)"),
       write_window: float | None = typer.Option(
           None, "--write-window", metavar="SECONDS",
           help="Seconds a writer may take between writing a file and committing it: "
                "files younger than that (counted from when the mark began) are never "
                "deleted, whatever the grace (default: SAPWOOD_GC_WRITE_WINDOW_S, else "
                "3600; at least 10)"),
       warehouse: str | None = typer.Option(
           None, metavar="URI",
           help="The warehouse (default: SAPWOOD_WAREHOUSE, else the one in the "
                "data directory)"),
       as_json: bool = typer.Option(
           False, "--json", help="Print one JSON document, as POST /api/v2/admin/gc "
                                 "answers")) -> None:
    """Remove what no reference needs, past a grace period.

    The commits no reference reaches (older than the grace period), the
    objects only they hold, then the warehouse files no table or view version
    still in history references. Safe while writers commit
    (docs/operations.md)."""
    from catalog.maintenance.gc import collect_all
    from catalog.metadata.files import open_files
    from store import Store

    settings = existing_settings(database, warehouse, data_dir, True)
    store = Store(settings.database_url)
    try:
        report, files = collect_all(store, open_files(settings), settings.warehouse, grace,
                                    write_window, dry_run)
    finally:
        store.close()
    if as_json:
        from catalog.maintenance.reports import gc_json

        typer.echo(json.dumps(gc_json(report, files), indent=2))
    else:
        typer.echo(str(report))
        if files is not None:
            typer.echo(str(files))
    if files is None:  # a commit needed what the sweep would remove: run again
        raise typer.Exit(2)


@database_app.command("export")
def export_(output: str = typer.Argument("-", metavar="FILE",
                                         help="File to write (- for standard output)"),
            database: str | None = DatabaseOpt,
            data_dir: Path | None = DataDirOpt) -> None:
    """Write the whole catalog as JSON lines.

    Commits, refs, reflog, grants …: a backup, or a move to another database
    (docs/operations.md)."""
    import sys

    from store import Store
    from store.dump import write_dump

    store = Store(existing(database_url(database, data_dir)))
    try:
        if output == "-":
            n = write_dump(store.db, sys.stdout)
        else:
            with open(output, "w", encoding="utf-8") as f:
                n = write_dump(store.db, f)
    finally:
        store.close()
    typer.echo(f"exported {n} rows", err=True)


@database_app.command("import")
def import_(source: str | None = typer.Argument(
                None, metavar="[FILE]", show_default=False,
                help="An export file (- for standard input); not with --from-nessie"),
            from_nessie: str | None = typer.Option(
                None, "--from-nessie", metavar="URL",
                help="Import a Nessie repository's references and whole history from its "
                     "server (its v2 API: http://host:19120/api/v2) instead of a file"),
            report: Path | None = ReportOpt,
            into_nonempty: bool = typer.Option(
                False, "--into-nonempty",
                help="With --from-nessie: add Nessie's references to a catalog that holds "
                     "commits of its own (names it already has are still refused)"),
            batch: int = typer.Option(
                500, "--batch", min=1, metavar="N",
                help="With --from-nessie: commits written per transaction (an interrupted "
                     "import keeps every whole batch and continues after it)"),
            warehouse: str | None = typer.Option(
                None, metavar="URI",
                help="With --from-nessie: the warehouse Nessie's metadata files must be in "
                     "(default: SAPWOOD_WAREHOUSE, else the one in the data directory)"),
            database: str | None = typer.Option(
                None, metavar="URL", help="SQLAlchemy URL of the catalog (default: "
                           "SAPWOOD_DATABASE_URL, else sapwood.db in the data directory); "
                           "a new, empty one for an export file"),
            data_dir: Path | None = DataDirOpt) -> None:
    """Load an export or a Nessie repository into a catalog.

    The catalog is created here if need be. An export keeps the same commits
    and hashes as the catalog it came from. --from-nessie copies Nessie's
    references and commits (authors, messages, times, properties, every
    table, view and namespace) and can be run again: it continues an
    interrupted import and adds only new commits
    (docs/migrating-from-nessie.md)."""
    import sys

    from core.errors import InvalidInputError
    from store import Store
    from store.dump import import_rows

    if from_nessie is not None:
        if source is not None:
            raise typer.BadParameter("give an export FILE or --from-nessie URL, not both")
        from catalog.settings import CatalogSettings
        from cli.imports import from_nessie as run

        settings = CatalogSettings.resolve(database, warehouse, data=data_dir)
        named(settings.database_url, settings.warehouse)
        run(from_nessie, settings, report, into_nonempty, batch)
        return
    if source is None:
        raise typer.BadParameter("give an export FILE (- for standard input) or "
                                 "--from-nessie URL")
    url = database_url(database, data_dir)
    named(url)
    store = Store(url)
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
