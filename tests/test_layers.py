"""The layers import one way (docs/architecture.md): api → catalog → store →
core, and cli → catalog → store → core; cli and spark speak HTTP through
client/, the one Python client of the versioning API, which imports
nothing else of ours; cli and spark import nothing of each other (the
verbs that run Spark start ``python -m spark``: cli.spark_verbs). The
API's only door to the store is the catalog: it imports no store module and
reaches for no ``store`` attribute, and nothing of the database driver
(SQLAlchemy, sqlite3, psycopg) is imported outside store/. Every
import counts — at the top of a module, inside a function, under
TYPE_CHECKING — and no module of ours may reach itself through its imports.
Inside catalog/, a small kernel of loose modules and a package per feature,
each importing only what the table below (and its docstring) says, with one
two-way tie between packages (views ↔ mviews).
A short walk over the syntax trees: no dependency, nothing is imported."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OURS = ("core", "store", "catalog", "api", "cli", "spark", "client")
# What each package may import of ours (itself included).
ALLOWED = {
    "core": {"core"},
    "store": {"store", "core"},
    "catalog": {"catalog", "store", "core"},
    "api": {"api", "catalog", "core"},
    "cli": {"cli", "catalog", "store", "core", "client"},
    "spark": {"spark", "client"},
    "client": {"client"},
}
# The database and its drivers: the store's alone (it raises core.errors'
# DatabaseFailure for what they raise: store.faults).
DRIVERS = {"sqlalchemy", "sqlite3", "psycopg"}
# Libraries a package must not use, whatever it imports of ours.
FORBIDDEN = {
    "core": {*DRIVERS, "fastapi", "starlette", "uvicorn", "fsspec", "httpx", "pyspark"},
    "store": {"fastapi", "starlette", "uvicorn"},
    "catalog": {*DRIVERS, "fastapi", "starlette", "uvicorn"},
    "api": DRIVERS,
    "cli": {*DRIVERS, "fastapi", "starlette", "uvicorn"},
    "spark": DRIVERS,
    "client": {*DRIVERS, "fastapi", "starlette", "uvicorn", "pyspark"},
}
# The command line's one way into the HTTP layer: ``sapwood serve`` starts it.
ENTRY_POINTS = {("cli", "api.server")}

# catalog/'s kernel: at most this many loose modules beside its packages.
KERNEL_MODULES = 14
# What each package of catalog/ may import of catalog/ besides itself
# ("kernel": the loose modules; "plain values": only the kernel's settings
# and limits). A kernel module imports only the kernel, metadata/ and
# iceberg_v3/ — but the wiring, which builds every package.
PLAIN_VALUES = {"settings", "limits"}
CATALOG_PACKAGES = {
    "iceberg_v3": set(),
    "metadata": {"plain values", "iceberg_v3"},
    "views": {"kernel", "metadata", "mviews"},
    "mviews": {"kernel", "metadata", "views"},
    "feed": {"kernel", "views"},
    "merge": {"kernel", "metadata", "iceberg_v3", "views"},
    "undo": {"kernel", "metadata", "iceberg_v3", "views", "merge"},
    "maintenance": {"kernel", "metadata"},
    "delegation": {"kernel", "maintenance", "metadata"},
    "imports": {"kernel", "metadata", "views"},
}
KERNEL_IMPORTS = {"kernel", "metadata", "iceberg_v3"}
WIRING = "services"
# The one two-way tie between them: a materialized view is a view (views/
# loads and replaces one through mviews/, mviews/ analyses its SQL in views/).
TIES = [{"views/", "mviews/"}]


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


def _catalog_unit(name: str, path: Path) -> str:
    """A kernel module is a unit of its own (``tables``); a package of
    catalog/ is one, with everything under it (``views/``)."""
    parts = name.split(".")
    return parts[1] + "/" if len(parts) > 2 or path.name == "__init__.py" else parts[1]


def _kind(unit: str) -> str:
    return unit[:-1] if unit.endswith("/") else "kernel"


def catalog_arrows() -> dict[tuple[str, str], set[str]]:
    """The imports between catalog's units, each with the module imports
    behind it (for the message)."""
    known = {name: path for name, path in modules("catalog") if name != "catalog"}
    unit = {name: _catalog_unit(name, path) for name, path in known.items()}
    arrows: dict[tuple[str, str], set[str]] = {}
    for name, path in known.items():
        for target, _ in imports(name, path):
            if target in unit and unit[target] != unit[name]:
                arrows.setdefault((unit[name], unit[target]), set()).add(f"{name} -> {target}")
    return arrows


def catalog_packages() -> list[Path]:
    return sorted(p.parent for p in (ROOT / "catalog").rglob("__init__.py")
                  if p.parent != ROOT / "catalog")


def test_catalog_keeps_a_small_kernel() -> None:
    loose = sorted(p.name for p in (ROOT / "catalog").glob("*.py") if p.name != "__init__.py")
    assert len(loose) <= KERNEL_MODULES, loose


def test_every_catalog_package_says_what_it_owns_and_imports() -> None:
    for package in catalog_packages():
        doc = ast.get_docstring(ast.parse((package / "__init__.py").read_text()))
        where = package.relative_to(ROOT)
        assert doc, f"{where}/__init__.py has no docstring"
        assert "\nImports " in doc, f"{where}/__init__.py does not say what it imports"
    top = {p.name for p in catalog_packages() if p.parent == ROOT / "catalog"}
    assert top == set(CATALOG_PACKAGES)


def test_catalog_packages_import_what_they_say() -> None:
    wrong = []
    for (source, target), behind in sorted(catalog_arrows().items()):
        if source == WIRING:
            continue
        kind = _kind(source)
        allowed = KERNEL_IMPORTS if kind == "kernel" else CATALOG_PACKAGES.get(kind, set())
        plain = target in PLAIN_VALUES and "plain values" in allowed
        if _kind(target) not in allowed and not plain:
            wrong.append(f"{source} -> {target}: {', '.join(sorted(behind))}")
    assert wrong == []


def test_no_arrow_back_up_inside_catalog() -> None:
    """No import leads from a kernel module or a package back to itself
    through others, but the one documented tie (views ↔ mviews)."""
    graph: dict[str, set[str]] = {}
    for source, target in catalog_arrows():
        graph.setdefault(source, set()).add(target)

    def reaches(start: str) -> set[str]:
        seen: set[str] = set()
        todo = [start]
        while todo:
            for w in graph.get(todo.pop(), ()):
                if w not in seen:
                    seen.add(w)
                    todo.append(w)
        return seen

    tied = {frozenset({v, w}) for v in graph for w in reaches(v) if v != w and v in reaches(w)}
    assert sorted(sorted(t) for t in tied) == sorted(sorted(t) for t in TIES)


def test_imports_point_one_way() -> None:
    assert layer_violations() == []


def test_the_api_reaches_the_store_only_through_the_catalog() -> None:
    """No ``….store`` in api/: what a route needs of the store is a method of
    the catalog (catalog.versioning, catalog.access, catalog.health, the
    feature packages), not the catalog's store reached through it."""
    found = []
    for _, path in modules("api"):
        tree = ast.parse(path.read_text(), str(path))
        found += [f"{path.relative_to(ROOT)}:{node.lineno}" for node in ast.walk(tree)
                  if isinstance(node, ast.Attribute) and node.attr == "store"]
    assert found == []


def test_no_module_reaches_itself() -> None:
    assert import_cycles() == []
