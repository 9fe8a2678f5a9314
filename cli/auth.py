"""``sapwood principal|key|grant|protect|unprotect``: who may use the catalog,
kept in the catalog's own database (so every replica sees a change at once).

These commands open the database directly, as ``init`` and ``fsck`` do: they
are for whoever runs the catalog, not for its clients."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table

from catalog.access import create_key
from cli.database import DB_HELP
from core.auth import ALL_PRIVILEGES
from core.instants import format_instant, from_micros

if TYPE_CHECKING:
    from store import Store

principal_app = typer.Typer(no_args_is_help=True, help="Principals (users and services).")
key_app = typer.Typer(no_args_is_help=True, help="API keys (a principal's credentials).")
grant_app = typer.Typer(no_args_is_help=True, help="Privileges of principals and roles.")


@contextmanager
def _store(database: str | None) -> Iterator[Store]:
    from cli.database import database_url
    from store import Store

    s = Store(database_url(database))
    try:
        yield s
    finally:
        s.close()


def _when(us: int | None) -> str:
    return "" if us is None else format_instant(from_micros(us))


# -- principals ---------------------------------------------------------------------------
@principal_app.command("create")
def principal_create(name: str,
                     role: Annotated[list[str] | None,
                                     typer.Option(help="A role it holds (repeatable)")] = None,
                     database: str | None = typer.Option(None, help=DB_HELP)) -> None:
    """Create a principal (then give it a key: sapwood key create NAME)."""
    role = role or []
    with _store(database) as s:
        s.auth.create_principal(name, role)
    typer.echo(f"principal {name} created" + (f" with roles {', '.join(role)}" if role else ""))


@principal_app.command("list")
def principal_list(database: str | None = typer.Option(None, help=DB_HELP)) -> None:
    """Every principal, its roles, and whether it was revoked."""
    with _store(database) as s:
        data = s.auth.current()
    t = Table("name", "roles", "keys", "created", "revoked")
    for p in sorted(data.principals.values(), key=lambda p: p.name):
        keys = [k.id for k in data.keys.values()
                if k.principal == p.name and k.revoked_us is None]
        t.add_row(p.name, ", ".join(p.roles), ", ".join(keys), _when(p.created_us),
                  _when(p.revoked_us))
    Console().print(t)


@principal_app.command("revoke")
def principal_revoke(name: str, database: str | None = typer.Option(None, help=DB_HELP),
                     ) -> None:
    """Revoke a principal and all its keys; its tokens stop working at once."""
    with _store(database) as s:
        s.auth.revoke_principal(name)
    typer.echo(f"principal {name} revoked, with all its keys")


# -- keys ----------------------------------------------------------------------------------
@key_app.command("create")
def key_create(principal: str, description: str = typer.Option("", help="What it is for"),
               database: str | None = typer.Option(None, help=DB_HELP)) -> None:
    """Create an API key; the credential is printed once and stored only hashed."""
    with _store(database) as s:
        credential = create_key(s, principal, description)
    typer.echo(credential)
    typer.echo("store it now: it is shown only once (clients send it as "
               "credential=id:secret, or as 'Authorization: Bearer id:secret')", err=True)


@key_app.command("revoke")
def key_revoke(key_id: str, database: str | None = typer.Option(None, help=DB_HELP)) -> None:
    """Revoke a key; tokens issued for it stop working at once."""
    with _store(database) as s:
        s.auth.revoke_key(key_id)
    typer.echo(f"key {key_id} revoked")


# -- grants -------------------------------------------------------------------------------
@grant_app.command("add")
def grant_add(grantee: str = typer.Argument(..., help="A principal, or role:NAME"),
              privilege: str = typer.Argument(
                  ..., help="|".join(p.value for p in ALL_PRIVILEGES)),
              refs: str = typer.Option("*", help="Reference name or glob (main, etl/*)"),
              namespace: str = typer.Option("", help="Only below this namespace (a.b)"),
              database: str | None = typer.Option(None, help=DB_HELP)) -> None:
    """Grant a privilege on references (and optionally below a namespace)."""
    ns = tuple(namespace.split(".")) if namespace else ()
    with _store(database) as s:
        gid = s.auth.add_grant(grantee, privilege, refs, ns)
    typer.echo(f"grant {gid}: {privilege} on refs {refs}"
               + (f" namespace {namespace}" if namespace else "") + f" to {grantee}")


@grant_app.command("list")
def grant_list(database: str | None = typer.Option(None, help=DB_HELP)) -> None:
    """Every grant, and the protected references."""
    with _store(database) as s:
        data = s.auth.current()
    t = Table("id", "grantee", "privilege", "refs", "namespace")
    for g in data.grants:
        t.add_row(str(g.id), g.grant.grantee, g.grant.privilege.value, g.grant.refs,
                  ".".join(g.grant.namespace))
    Console().print(t)
    typer.echo("protected: " + (", ".join(data.policy.protected) or "none"))


@grant_app.command("revoke")
def grant_revoke(grant_id: int, database: str | None = typer.Option(None, help=DB_HELP),
                 ) -> None:
    """Remove a grant."""
    with _store(database) as s:
        s.auth.revoke_grant(grant_id)
    typer.echo(f"grant {grant_id} removed")


def protect(pattern: str = typer.Argument(..., help="Branch name or glob"),
            database: str | None = typer.Option(None, help=DB_HELP)) -> None:
    """Protect branches: direct commits are refused, only merges (merge-into) land."""
    with _store(database) as s:
        s.auth.protect(pattern)
    typer.echo(f"{pattern} is protected")


def unprotect(pattern: str = typer.Argument(..., help="A protected name or glob"),
              database: str | None = typer.Option(None, help=DB_HELP)) -> None:
    """Lift a protection."""
    with _store(database) as s:
        s.auth.unprotect(pattern)
    typer.echo(f"{pattern} is no longer protected")


def register(app: typer.Typer) -> None:
    app.add_typer(principal_app, name="principal")
    app.add_typer(key_app, name="key")
    app.add_typer(grant_app, name="grant")
    app.command()(protect)
    app.command()(unprotect)
