"""What the code imports at run time is what pyproject.toml installs.

The README's run command installs only the main dependencies and the `spark`
extra (`pip install -e '.[spark]'`), while the suite runs with `.[test,spark]`:
a module the CLI or the server imports that only the `test` extra brings in
(httpx once was one) passes every test here and fails for a user. This check
is cheap (no venv, no network); tests/run.sh also runs the README's command in
a fresh venv, which proves the same thing end to end.

A module is covered when a distribution that provides it (per
importlib.metadata.packages_distributions()) is a declared requirement or one
of their installed requirements (e.g. starlette through fastapi).
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
import venv
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
FIRST_PARTY = {"api", "catalog", "cli", "client", "core", "store", "spark"}


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _closure(requirements: list[str]) -> set[str]:
    """Normalized names of the distributions these requirements install."""
    seen: set[tuple[str, str]] = set()
    todo = [(Requirement(r), "") for r in requirements]
    out: set[str] = set()
    while todo:
        req, extra = todo.pop()
        if req.marker is not None and not req.marker.evaluate({"extra": extra}):
            continue
        name = _norm(req.name)
        out.add(name)
        for ex in ["", *sorted(req.extras)]:
            if (name, ex) in seen:
                continue
            seen.add((name, ex))
            try:
                requires = metadata.requires(req.name) or []
            except metadata.PackageNotFoundError:
                continue  # not installed here: its own requirements are unknown
            todo.extend((Requirement(r), ex) for r in requires)
    return out


def _is_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def _imports(path: Path) -> set[str]:
    """Top-level names of the absolute imports that run (not TYPE_CHECKING ones)."""
    names: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(), filename=str(path)))
    return names


def _third_party(paths: list[Path]) -> dict[str, list[str]]:
    """Third-party import name -> the files (relative) that import it."""
    found: dict[str, list[str]] = {}
    for path in paths:
        for name in _imports(path):
            if name in FIRST_PARTY or name == "__future__" or name in sys.stdlib_module_names:
                continue
            found.setdefault(name, []).append(str(path.relative_to(ROOT)))
    return found


def _uncovered(imports: dict[str, list[str]], requirements: list[str]) -> list[str]:
    installed = _closure(requirements)
    providers = metadata.packages_distributions()
    problems = []
    for name, files in sorted(imports.items()):
        dists = {_norm(d) for d in providers.get(name, [])}
        if not dists:
            problems.append(f"{name} (imported by {', '.join(sorted(files))}): no installed "
                            "distribution provides it")
        elif not dists & installed:
            problems.append(f"{name} (imported by {', '.join(sorted(files))}): provided by "
                            f"{', '.join(sorted(dists))}, which the requirements do not install")
    return problems


def _files(*folders: str) -> list[Path]:
    return sorted(p for f in folders for p in (ROOT / f).rglob("*.py"))


def test_the_cli_client_imports_only_main_dependencies():
    imports = _third_party([ROOT / "cli" / "client.py"])
    assert "httpx" in imports  # the client is an httpx one: the check sees its imports
    assert _uncovered(imports, _project()["dependencies"]) == []


@pytest.mark.parametrize("folder", ["api", "catalog", "cli", "client", "store", "core"])
def test_runtime_imports_are_main_dependencies(folder):
    imports = _third_party(_files(folder))
    assert imports, f"found no third-party imports under {folder}/"
    assert _uncovered(imports, _project()["dependencies"]) == []


def test_spark_imports_are_main_or_spark_extra_dependencies():
    project = _project()
    requirements = project["dependencies"] + project["optional-dependencies"]["spark"]
    assert _uncovered(_third_party(_files("spark")), requirements) == []


# -- the pins ------------------------------------------------------------------------------
def _pins() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            assert version, f"constraints.txt: {line!r} is not a name==version pin"
            pins[_norm(name)] = version
    return pins


def test_constraints_pin_everything_the_test_and_spark_install_within_pyproject():
    """constraints.txt is one tested point inside pyproject's ranges: every
    requirement (main and every extra) is pinned to a version its range
    allows, and every distribution the test command installs is pinned, so
    an install made with it resolves the same next year."""
    project, pins = _project(), _pins()
    requirements = [*project["dependencies"],
                    *(r for extra in project["optional-dependencies"].values() for r in extra)]
    outside = []
    for r in map(Requirement, requirements):
        pinned = pins.get(_norm(r.name))
        if pinned is None or not r.specifier.contains(pinned, prereleases=True):
            outside.append(f"{r} (pinned: {pinned})")
    assert outside == []
    extras = project["optional-dependencies"]
    unpinned = sorted(_closure([*project["dependencies"], *extras["test"], *extras["spark"]])
                      - set(pins) - {"sapwood"})
    assert unpinned == [], f"installed by .[test,spark] but not pinned: {unpinned}"


# -- a venv in the checkout ----------------------------------------------------------------
@pytest.mark.parametrize("name", ["v", "venv", ".venv"])
def test_a_venv_made_in_the_checkout_is_left_out_of_the_checks(tmp_path, name):
    """`python3 -m venv v` in the checkout, then the test command: ruff
    (tests/run.sh's `ruff check .`) must not lint the venv's own scripts —
    pyspark's and jmespath's fail our rules. The checkout's .gitignore names
    the usual venv folders and ruff follows git's ignores; checked here with
    the real ruff on a copy of the checkout's settings and a real venv."""
    for f in ("pyproject.toml", ".gitignore"):
        (tmp_path / f).write_bytes((ROOT / f).read_bytes())
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    venv.create(tmp_path / name, with_pip=False)
    bad = tmp_path / name / "bin" / "tool.py"
    bad.write_text("import os, sys\n")  # two of our rules broken (E401, F401)
    (tmp_path / "ok.py").write_text('"""A module."""\n')
    ruff = subprocess.run([sys.executable, "-m", "ruff", "check", "."], cwd=tmp_path,
                          capture_output=True, text=True)
    assert ruff.returncode == 0, ruff.stdout + ruff.stderr
    # ... and the same file outside a venv folder is linted, so the check can fail.
    (tmp_path / "tool.py").write_text("import os, sys\n")
    assert subprocess.run([sys.executable, "-m", "ruff", "check", "."], cwd=tmp_path,
                          capture_output=True).returncode == 1
