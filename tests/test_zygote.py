"""The suite's servers are forked from a zygote that imported the application
once (tests/zygote.py). That is only the real command if nothing of the
application reads a setting at import, and if a forked server lives and
dies as a subprocess would."""

from __future__ import annotations

import ast
import os
import signal
from pathlib import Path

from tests.http import http_request
from tests.server import serving
from tests.zygote_client import spawn

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("api", "catalog", "cli", "core", "store", "spark")


def _reads_environment(node: ast.AST) -> bool:
    for n in ast.walk(node):
        if isinstance(n, ast.Attribute) and n.attr in ("environ", "getenv") and isinstance(
                n.value, ast.Name) and n.value.id == "os":
            return True
    return False


def _import_time_statements(tree: ast.Module) -> list[ast.AST]:
    """What runs at import: module and class bodies, decorators and default
    arguments, but not the bodies of functions."""
    out: list[ast.AST] = []
    todo: list[ast.AST] = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            out.extend(node.decorator_list)
            out.extend(d for d in [*node.args.defaults, *node.args.kw_defaults] if d)
        elif isinstance(node, ast.ClassDef):
            out.extend(node.decorator_list)
            todo.extend(node.body)
        else:
            out.append(node)
    return out


def test_nothing_reads_a_setting_at_import():
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            tree = ast.parse(path.read_text(), filename=str(path))
            for node in _import_time_statements(tree):
                if _reads_environment(node):
                    found.append(f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', '?')}")
    assert found == [], "read the environment when used, not at import: " + ", ".join(found)


def test_a_forked_server_has_its_own_settings_and_dies_like_a_process(tmp_path):
    with serving(f"sqlite:///{tmp_path / 'open.db'}", tmp_path / "open") as open_srv, \
            serving(f"sqlite:///{tmp_path / 'auth.db'}", tmp_path / "auth",
                    extra_env={"SAPWOOD_AUTH": "1"}) as auth_srv:
        assert http_request("GET", f"{open_srv.base}/api/v2/trees").status_code == 200
        assert http_request("GET", f"{auth_srv.base}/api/v2/trees").status_code == 401
        proc = auth_srv.proc
        assert proc is not None and proc.poll() is None
        proc.send_signal(signal.SIGKILL)
        assert proc.wait(10) == -signal.SIGKILL
    version = spawn(["version"], dict(os.environ), tmp_path / "version.log")
    assert version.wait(30) == 0
    assert (tmp_path / "version.log").read_text().strip()
