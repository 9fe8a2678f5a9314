"""``sapwood import --from-nessie URL``: the run (catalog.imports) on the
catalog the options name, its progress on standard error, its summary on
standard output and its report as JSON where ``--report`` says."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from cli.output import progress

if TYPE_CHECKING:  # imported where used: the CLI starts without them
    from catalog.settings import CatalogSettings


def from_nessie(url: str, settings: CatalogSettings, report: Path | None,
                into_nonempty: bool, batch: int) -> None:
    from catalog.imports.nessie import import_from_nessie
    from catalog.imports.report import ImportRefused, ImportReport
    from catalog.kernel import Catalog
    from catalog.metadata.files import open_files
    from core.errors import SapwoodError
    from store import Store

    store = Store(settings.database_url)
    files = open_files(settings)
    done: ImportReport | None = None
    try:
        done = import_from_nessie(Catalog(store, files, files.reader.locations), url,
                                  into_nonempty=into_nonempty, batch_size=batch,
                                  progress=progress("import"))
    except ImportRefused as e:
        sys.stderr.write("\n")
        _write(report, e.report.to_json())
        typer.echo(f"error: {e.message}", err=True)
        raise typer.Exit(1) from None
    except SapwoodError as e:
        sys.stderr.write("\n")
        typer.echo(f"error: {e.message} (what landed is kept: run the same import again "
                   "to continue)", err=True)
        raise typer.Exit(1) from None
    finally:
        store.close()
    sys.stderr.write("\n")
    _write(report, done.to_json())
    typer.echo(done.summary())
    for ref in done.references:
        typer.echo(f"{ref.type.lower():6} {ref.name}: {ref.action}, {ref.commits} commits, "
                   f"at {ref.hash[:12]} (Nessie {ref.nessie_hash[:12]})")
    for name in done.gone_from_source:
        typer.echo(f"note: {name} came from an earlier import and is no longer in Nessie; "
                   "left as it is")


def _write(path: Path | None, body: dict[str, object]) -> None:
    if path is None:
        return
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(body, indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)

