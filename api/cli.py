"""The ``sapwood`` command line."""

from __future__ import annotations

import os
import sys
from importlib.metadata import version as dist_version
from pathlib import Path

import typer

from core.errors import SapwoodError

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
                   "under ~/.sapwood)")) -> None:
    """Create or upgrade the catalog database; the branch 'main' exists afterwards."""
    from store import Store

    url = database_url(database)
    store = Store(url)
    try:
        main = store.get_reference("main")
        typer.echo(f"catalog ready at {_safe(url)}; main is at {main.hash[:12]}")
    finally:
        store.close()


def _safe(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


def main() -> None:
    try:
        app()
    except SapwoodError as e:
        typer.echo(f"error: {e.message}", err=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
