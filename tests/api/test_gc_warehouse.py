"""sapwood gc end to end: a branch with tables and a view written by
PyIceberg is deleted; gc (grace 0) removes its commits and the warehouse
files only it referenced, and every table on main — and its older snapshots
— reads exactly as before; a dry run removes nothing."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from store import Store
from store.fsck import fsck
from tests.api.test_pyiceberg import SCHEMA, rows, version
from tests.server import sapwood_command


def _files(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.is_file()}


def _gc(server, *args: str) -> subprocess.CompletedProcess[str]:  # type: ignore[no-untyped-def]
    return subprocess.run([*sapwood_command(), "gc", "--database", server.database_url,
                           "--warehouse", server.warehouse, "--grace", "0", *args],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "SAPWOOD_DATA_DIR": str(server.data_dir)})


def test_gc_removes_a_deleted_branch_and_its_files(server, store, http, ns: str) -> None:
    main = server.catalog()
    keep = main.create_table(f"{ns}.keep", SCHEMA)
    keep.append(rows(3))
    first = main.load_table(f"{ns}.keep").current_snapshot().snapshot_id
    main.load_table(f"{ns}.keep").append(rows(2, start=10))
    tmp = f"tmp_{ns}"
    store.create_reference(tmp, source="main")
    side = server.catalog(tmp)
    scratch = side.create_table(f"{ns}.scratch", SCHEMA)
    for i in range(5):
        side.load_table(f"{ns}.scratch").append(rows(2, start=100 + 10 * i))
    side.load_table(f"{ns}.keep").append(rows(1, start=500))  # files only tmp sees
    side.create_view(f"{ns}.tmp_view", SCHEMA, version("SELECT 1 AS id, 'x' AS name"))
    scratch_dir = Path(scratch.location().removeprefix("file://"))
    before_rows = main.load_table(f"{ns}.keep").scan().to_arrow().sort_by("id")
    before_first = main.load_table(f"{ns}.keep").scan(snapshot_id=first).to_arrow().num_rows
    store.delete_reference(tmp, store.get_reference(tmp).hash)

    warehouse = Path(server.warehouse.removeprefix("file://"))
    everything = _files(warehouse)
    dry = _gc(server, "--dry-run")
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert "would remove" in dry.stdout and _files(warehouse) == everything
    run = _gc(server)
    assert run.returncode == 0, run.stdout + run.stderr
    left = _files(warehouse)
    gone = everything - left
    assert gone and not (left & _files(scratch_dir)), run.stdout
    assert all(str(p).startswith(str(warehouse)) for p in gone)
    # main reads exactly as before, its older snapshot too.
    assert main.load_table(f"{ns}.keep").scan().to_arrow().sort_by("id") == before_rows
    assert main.load_table(f"{ns}.keep").scan(snapshot_id=first).to_arrow().num_rows \
        == before_first
    s = Store(server.database_url)
    try:
        assert fsck(s).ok, fsck(s).problems
    finally:
        s.close()
