"""How ``sapwood VERB --help`` reads (docs/cli.md, "Help"): a usage line as
git's and click's are written (``sapwood log [OPTIONS]``, ``sapwood merge
[OPTIONS] SOURCE``, ``sapwood revert [OPTIONS] HASH...``), without typer's
``{source}``, ``<str>`` or ``[ref]`` spellings; arguments listed by the
name the usage line gives them; hidden parameters (the old spellings kept
for scripts) neither in the usage line nor in the lists."""

from __future__ import annotations

from typing import Any

import typer
from typer.core import TyperCommand

# typer carries its own copy of click: its parameters are told apart by
# their param_type_name, not by click's classes.


def _name(param: Any) -> str:
    """An argument as the usage line names it: its metavar (KEY, REF), with
    ``...`` when it takes more than one."""
    name = param.metavar or (param.name or "").upper()
    return f"{name}..." if param.nargs != 1 and not name.endswith("...") else name


class Command(TyperCommand):
    """A verb whose help reads as git's (typer's own usage line writes a
    required argument as ``{key}`` and lists each with its Python type)."""

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if param.param_type_name == "argument" and not getattr(param, "hidden", False):
                name = _name(param)
                pieces.append(name if param.required else f"[{name}]")
        return pieces

    def format_options(self, ctx: Any, formatter: Any) -> None:
        args: list[tuple[str, str]] = []
        opts: list[tuple[str, str]] = []
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:  # hidden
                continue
            if param.param_type_name == "argument":
                args.append((_name(param), record[1]))
            else:
                opts.append(record)
        if args:
            with formatter.section("Arguments"):
                formatter.write_dl(args)
        if opts:
            with formatter.section("Options"):
                formatter.write_dl(opts)


def finish(app: typer.Typer) -> None:
    """Every verb of ``app`` and of its groups, at any depth, drawn by
    ``Command`` (unless one asks for a class of its own: typer writes its
    own default in when a verb is declared)."""
    for info in app.registered_commands:
        if info.cls in (None, TyperCommand):
            info.cls = Command
    for group in app.registered_groups:
        if group.typer_instance is not None:
            finish(group.typer_instance)

