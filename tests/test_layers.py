"""The layers import one way (docs/architecture.md): api → catalog → store →
core, and cli → catalog → store → core; spark imports none of them. Every
import counts — at the top of a module, inside a function, under
TYPE_CHECKING — and no module of ours may reach itself through its imports.
A short walk over the syntax trees: no dependency, nothing is imported."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OURS = ("core", "store", "catalog", "api", "cli", "spark")
# What each package may import of ours (itself included).
ALLOWED = {
    "core": {"core"},
    "store": {"store", "core"},
    "catalog": {"catalog", "store", "core"},
    "api": {"api", "catalog", "store", "core"},
    "cli": {"cli", "catalog", "store", "core", "spark"},
    "spark": {"spark"},
}
# Libraries a package must not use, whatever it imports of ours.
FORBIDDEN = {
    "core": {"sqlalchemy", "fastapi", "starlette", "uvicorn", "fsspec", "httpx", "pyspark"},
    "store": {"fastapi", "starlette", "uvicorn"},
    "catalog": {"fastapi", "starlette", "uvicorn"},
    "cli": {"fastapi", "starlette", "uvicorn"},
}
# The command line's one way into the HTTP layer: ``sapwood serve`` starts it.
ENTRY_POINTS = {("cli", "api.server")}


def modules(package: str) -> Iterator[tuple[str, Path]]:
    for path in sorted((ROOT / package).rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        yield ".".join(parts), path


def imports(name: str, path: Path) -> Iterator[tuple[str, int]]:
    """Every module a file imports (absolute), with its line: ``from x import
    y`` names ``x`` and ``x.y`` (y may be a module), relative imports are
    resolved against the file's package."""
    tree = ast.parse(path.read_text(), str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")
                up = up[:len(up) - node.level + 1]
                base = ".".join([*up, base] if base else up)
            yield base, node.lineno
            for alias in node.names:
                yield f"{base}.{alias.name}", node.lineno


def layer_violations() -> list[str]:
    out = []
    for package in OURS:
        for name, path in modules(package):
            for target, line in imports(name, path):
                top = target.split(".")[0]
                where = f"{path.relative_to(ROOT)}:{line} imports {target}"
                entry = any(package == p and (target == e or target.startswith(e + "."))
                            for p, e in ENTRY_POINTS)
                if top in OURS and top not in ALLOWED[package] and not entry:
                    out.append(where)
                if top in FORBIDDEN.get(package, ()):
                    out.append(where)
    return sorted(set(out))


def import_cycles() -> list[list[str]]:
    """Strongly connected sets of our modules (Tarjan), over every import."""
    graph: dict[str, set[str]] = {}
    known = {name for p in OURS for name, _ in modules(p)}
    for package in OURS:
        for name, path in modules(package):
            deps = graph.setdefault(name, set())
            for target, _ in imports(name, path):
                if target in known and target != name and not name.startswith(target + "."):
                    deps.add(target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_imports_point_one_way() -> None:
    assert layer_violations() == []


def test_no_module_reaches_itself() -> None:
    assert import_cycles() == []
