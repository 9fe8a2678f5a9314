"""``sapwood principal|key|grant|protect|unprotect``: who may use the catalog,
kept in the catalog's own database (so every replica sees a change at once).

These commands open the database directly, as ``init`` and ``fsck`` do: they
are for whoever runs the catalog, not for its clients."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from cli.database import DatabaseOpt, DataDirOpt
from cli.output import FullOpt, JsonOpt, print_json, print_table, short_instant
from core.auth import ALL_PRIVILEGES
from core.instants import format_instant, from_micros

if TYPE_CHECKING:
    from store import Store

principal_app = typer.Typer(no_args_is_help=True, help="Principals (users and services).")
key_app = typer.Typer(no_args_is_help=True, help="API keys (a principal's credentials).")
grant_app = typer.Typer(no_args_is_help=True, help="Privileges of principals and roles.")


@contextmanager
def _store(database: str | None, data_dir: Path | None) -> Iterator[Store]:
    """The catalog's database, which must exist (cli.database.existing)."""
    from cli.database import database_url, existing
    from store import Store

    s = Store(existing(database_url(database, data_dir)))
    try:
        yield s
    finally:
        s.close()


def _when(us: int | None) -> str:
    return "" if us is None else format_instant(from_micros(us))


# -- principals ---------------------------------------------------------------------------
NameArg = typer.Argument(..., metavar="NAME", show_default=False,
                         help="The principal's name (a user or a service)")


@principal_app.command("create")
def principal_create(name: str = NameArg,
                     role: Annotated[list[str] | None, typer.Option(
                         metavar="ROLE", help="A role it holds (repeatable)")] = None,
                     database: str | None = DatabaseOpt,
                     data_dir: Path | None = DataDirOpt) -> None:
    """Create a principal (then give it a key: sapwood key create NAME)."""
    role = role or []
    with _store(database, data_dir) as s:
        s.auth.create_principal(name, role)
    typer.echo(f"principal {name} created" + (f" with roles {', '.join(role)}" if role else ""))


@principal_app.command("list")
def principal_list(database: str | None = DatabaseOpt, data_dir: Path | None = DataDirOpt,
                   full: bool = FullOpt, as_json: bool = typer.Option(
                       False, "--json", help="Print one JSON document: name, roles, live "
                                             "key ids, created and revoked instants")) -> None:
    """Every principal, its roles, and whether it was revoked."""
    with _store(database, data_dir) as s:
        data = s.auth.current()
    found: list[dict[str, Any]] = [{"name": p.name, "roles": list(p.roles),
              "keys": [k.id for k in data.keys.values()
                       if k.principal == p.name and k.revoked_us is None],
              "created": _when(p.created_us) or None, "revoked": _when(p.revoked_us) or None}
             for p in sorted(data.principals.values(), key=lambda p: p.name)]
    if as_json:
        print_json({"principals": found})
        return
    print_table(("name", "roles", "keys", "created", "revoked"),
                ((p["name"], ", ".join(p["roles"]), ", ".join(p["keys"]),
                  short_instant(p["created"], full), short_instant(p["revoked"], full))
                 for p in found), empty="no principals")


@principal_app.command("revoke")
def principal_revoke(name: str = NameArg, database: str | None = DatabaseOpt,
                     data_dir: Path | None = DataDirOpt) -> None:
    """Revoke a principal and all its keys.

    Its tokens stop working at once."""
    with _store(database, data_dir) as s:
        s.auth.revoke_principal(name)
    typer.echo(f"principal {name} revoked, with all its keys")


# -- keys ----------------------------------------------------------------------------------
@key_app.command("create")
def key_create(principal: str = typer.Argument(..., metavar="PRINCIPAL", show_default=False,
                                              help="The principal the key acts as"),
               description: str = typer.Option("", metavar="TEXT", help="What it is for"),
               database: str | None = DatabaseOpt, data_dir: Path | None = DataDirOpt) -> None:
    """Create an API key for PRINCIPAL.

    The credential is printed once and stored only hashed."""
    from catalog.access import create_key

    with _store(database, data_dir) as s:
        credential = create_key(s, principal, description)
    typer.echo(credential)
    typer.echo("store it now: it is shown only once (clients send it as "
               "credential=id:secret, or as 'Authorization: Bearer id:secret')", err=True)


@key_app.command("revoke")
def key_revoke(key_id: str = typer.Argument(..., metavar="KEY_ID", show_default=False,
                                           help="The key's id (the part of its credential "
                                                "before ':')"),
               database: str | None = DatabaseOpt,
               data_dir: Path | None = DataDirOpt) -> None:
    """Revoke a key; tokens issued for it stop working at once."""
    with _store(database, data_dir) as s:
        s.auth.revoke_key(key_id)
    typer.echo(f"key {key_id} revoked")


# -- grants -------------------------------------------------------------------------------
@grant_app.command("add")
def grant_add(grantee: str = typer.Argument(..., metavar="GRANTEE", show_default=False,
                                            help="A principal, or role:NAME"),
              privilege: str = typer.Argument(
                  ..., metavar="PRIVILEGE", show_default=False,
                  help="One of " + ", ".join(p.value for p in ALL_PRIVILEGES)),
              refs: str = typer.Option("*", metavar="GLOB",
                                       help="Reference name or glob (main, etl/*)"),
              namespace: str = typer.Option("", metavar="NAMESPACE",
                                            help="Only below this namespace (a.b)"),
              database: str | None = DatabaseOpt, data_dir: Path | None = DataDirOpt) -> None:
    """Grant a privilege on references.

    With --namespace, only below that namespace."""
    ns = tuple(namespace.split(".")) if namespace else ()
    with _store(database, data_dir) as s:
        gid = s.auth.add_grant(grantee, privilege, refs, ns)
    typer.echo(f"grant {gid}: {privilege} on refs {refs}"
               + (f" namespace {namespace}" if namespace else "") + f" to {grantee}")


@grant_app.command("list")
def grant_list(database: str | None = DatabaseOpt, data_dir: Path | None = DataDirOpt,
               as_json: bool = JsonOpt) -> None:
    """Every grant, and the protected references."""
    from catalog.access import grants_json

    with _store(database, data_dir) as s:
        found = grants_json(s.auth.current())
    if as_json:
        print_json(found)
        return
    print_table(("id", "grantee", "privilege", "refs", "namespace"),
                ((str(g["id"]), g["grantee"], g["privilege"], g["refs"], ".".join(g["namespace"]))
                 for g in found["grants"]), empty="no grants")
    typer.echo("protected: " + (", ".join(found["protected"]) or "none"))


@grant_app.command("revoke")
def grant_revoke(grant_id: int = typer.Argument(..., metavar="ID", show_default=False,
                                               help="The grant's id (grant list shows it)"),
                 database: str | None = DatabaseOpt,
                 data_dir: Path | None = DataDirOpt) -> None:
    """Remove a grant."""
    with _store(database, data_dir) as s:
        s.auth.revoke_grant(grant_id)
    typer.echo(f"grant {grant_id} removed")


def protect(pattern: str = typer.Argument(..., metavar="GLOB", show_default=False,
                                          help="Branch name or glob"),
            database: str | None = DatabaseOpt, data_dir: Path | None = DataDirOpt) -> None:
    """Protect branches: only merges land on them.

    Direct commits are refused; merges by a principal with merge-into land."""
    with _store(database, data_dir) as s:
        s.auth.protect(pattern)
    typer.echo(f"{pattern} is protected")


def unprotect(pattern: str = typer.Argument(..., metavar="GLOB", show_default=False,
                                            help="A protected name or glob"),
              database: str | None = DatabaseOpt, data_dir: Path | None = DataDirOpt) -> None:
    """Lift a protection."""
    with _store(database, data_dir) as s:
        s.auth.unprotect(pattern)
    typer.echo(f"{pattern} is no longer protected")


def register(app: typer.Typer) -> None:
    app.add_typer(principal_app, name="principal")
    app.add_typer(key_app, name="key")
    app.add_typer(grant_app, name="grant")
    app.command()(protect)
    app.command()(unprotect)
