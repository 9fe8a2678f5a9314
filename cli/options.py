"""The options every verb over HTTP spells the same way (docs/cli.md, "One
spelling for a reference"): ``--ref/-r REF`` for the reference a verb reads
or changes, ``--into``/``--onto`` only for a merge's and a transplant's
target, ``--uri URL`` for the catalog; KEY and HASH arguments, a hash
checked as every verb checks one. The spellings verbs had before
(``sapwood log main``, ``view check main``, ``--branch/-b``) are kept,
hidden from the help, so that scripts using them keep working."""

from __future__ import annotations

import typer

from cli.client import DEFAULT_URI, CliError
from core.refs import normalize_hash

UriOpt = typer.Option(None, "--uri", metavar="URL",
                      help=f"The catalog's URL (default: SAPWOOD_URI, else {DEFAULT_URI})")
RefOpt = typer.Option(
    None, "--ref", "-r", metavar="REF",
    help="The reference to read: a branch or tag, NAME@HASH, NAME~N or NAME*INSTANT "
         "(default: main)")
BranchOpt = typer.Option(None, "--ref", "-r", metavar="BRANCH",
                         help="The branch to change (default: main)")
# The old spellings: a branch option, a ref as the verb's last argument.
OldBranchOpt = typer.Option(None, "--branch", "-b", metavar="BRANCH", hidden=True,
                            help="Old spelling of --ref")
OldRefArg = typer.Argument(None, metavar="REF", hidden=True, show_default=False,
                           help="Old spelling of --ref")


KeyArg = typer.Argument(..., metavar="KEY", show_default=False,
                        help="A table or view: namespace.name")
ViewArg = typer.Argument(..., metavar="KEY", show_default=False,
                         help="A view: namespace.name")


def commit_hashes(hashes: list[str]) -> list[str]:
    """The hashes a verb was given, each checked as a ref spec's ``@HASH``
    is (core.refs): a bad one answers the same in every verb."""
    return [normalize_hash(h) for h in hashes]


def one_ref(*given: str | None, default: str = "main") -> str:
    """The reference a verb was given, by whichever spelling; the default
    when none. Two different ones are an error (the verb would have to
    guess which was meant)."""
    named = list(dict.fromkeys(g for g in given if g is not None))
    if len(named) > 1:
        raise CliError(f"the reference is given twice ({', '.join(map(repr, named))}): "
                       "give it once, with --ref")
    return named[0] if named else default
