"""``sapwood retention show|set|remove``: the catalog's retention policies
over HTTP (``/api/v2/retention``, ``/api/v2/retention/cutoffs``;
docs/operations.md, "Retention policies"). ``set`` and ``remove`` read the
list, change it and send it back whole, as the API replaces it."""

from __future__ import annotations

from typing import Any

import typer

from cli.client import CatalogClient, CliError
from cli.options import UriOpt
from cli.output import FullOpt, JsonOpt, echo, merged_pages, print_json, print_table, short_instant
from cli.versioning import client

retention_app = typer.Typer(no_args_is_help=True,
                            help="Retention policies: how much history branches keep.")

PATH = "/api/v2/retention"


def describe(p: dict[str, Any]) -> str:
    """A policy in words, as the UI says it: "keep P30D, 10 commits"."""
    said = [f"keep {p['keep']}" if "keep" in p else "",
            f"{p['keepCommits']} commits" if "keepCommits" in p else ""]
    return ", ".join(s for s in said if s) or "head only"


def _retains(r: dict[str, Any], full: bool) -> str:
    return {"all": "all history", "head": "its head only"}.get(
        r["retains"], f"since {short_instant(r['cutoff'], full)}")


@retention_app.command("show")
def show(full: bool = FullOpt, as_json: bool = JsonOpt, uri: str | None = UriOpt) -> None:
    """The policies, and what each reference keeps.

    The policies are listed in the order they are matched (the list needs
    manage-grants on every reference); the references are those the caller
    may read. With --json: the answer of GET /api/v2/retention with the
    references of GET /api/v2/retention/cutoffs."""
    c = client(uri)
    policies = c.call("GET", PATH)["policies"]
    refs = merged_pages(c.pages(f"{PATH}/cutoffs"), "references")["references"]
    if as_json:
        print_json({"policies": policies, "references": refs})
        return
    if policies:
        echo("policies (the first whose glob matches a branch is its policy):")
        print_table(("refs", "keep", "keep commits"),
                    ((p["refs"], p.get("keep", ""), str(p.get("keepCommits", "")))
                     for p in policies))
    else:
        echo("no retention policies: every branch keeps all of its history")
    echo()
    print_table(("reference", "type", "policy", "retention", "history since"),
                ((r["name"], r["type"].lower(), r["policy"]["refs"] if r["policy"] else "",
                  describe(r["policy"]) if r["policy"] else "", _retains(r, full))
                 for r in refs))


GlobArg = typer.Argument(..., metavar="GLOB", show_default=False,
                         help="The branches the policy is for: a name or a glob (etl/*)")


@retention_app.command("set")
def set_policy(glob: str = GlobArg,
               keep: str | None = typer.Option(
                   None, "--keep", metavar="DURATION",
                   help="Keep commits younger than this ISO-8601 duration (P30D, PT12H, P2W)"),
               keep_commits: int | None = typer.Option(
                   None, "--keep-commits", metavar="N", help="Keep the newest N commits"),
               as_json: bool = JsonOpt, uri: str | None = UriOpt) -> None:
    """Set the policy of the branches matching GLOB.

    The policy of GLOB is replaced where it stands in the list, or added at
    its end. A branch keeps what reaches further back of --keep and
    --keep-commits, and always its head; with neither, only its head."""
    c = client(uri)
    policies = c.call("GET", PATH)["policies"]
    new: dict[str, Any] = {"refs": glob}
    if keep is not None:
        new["keep"] = keep
    if keep_commits is not None:
        new["keepCommits"] = keep_commits
    at = next((i for i, p in enumerate(policies) if p["refs"] == glob), None)
    if at is None:
        policies.append(new)
    else:
        policies[at] = new
    kept = _replace(c, policies)
    if as_json:
        print_json(kept)
        return
    echo(f"retention: policy '{glob}' ({describe(new)}) "
         f"{'added' if at is None else 'replaced'}; {_count(kept)}")


@retention_app.command("remove")
def remove(glob: str = GlobArg, as_json: bool = JsonOpt, uri: str | None = UriOpt) -> None:
    """Remove the policy of GLOB.

    Its branches then keep all of their history, unless a later policy
    matches them."""
    c = client(uri)
    policies = c.call("GET", PATH)["policies"]
    left = [p for p in policies if p["refs"] != glob]
    if len(left) == len(policies):
        raise CliError(f"no retention policy has the glob '{glob}' "
                       "(sapwood retention show lists them)")
    kept = _replace(c, left)
    if as_json:
        print_json(kept)
        return
    echo(f"retention: policy '{glob}' removed; {_count(kept)}")


def _replace(c: CatalogClient, policies: list[dict[str, Any]]) -> dict[str, Any]:
    return c.call("PUT", PATH, json={"policies": policies})


def _count(kept: dict[str, Any]) -> str:
    n = len(kept["policies"])
    return f"{n} polic{'y' if n == 1 else 'ies'}"


def register(app: typer.Typer) -> None:
    app.add_typer(retention_app, name="retention")
