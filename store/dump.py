"""Export and import of a whole catalog (``sapwood export`` / ``sapwood
import``): every row of every table, as JSON lines, so a catalog moves
between databases (SQLite → PostgreSQL, a backup and its restore) with the
same commits, the same hashes, the same references and reflog, the same
grants. Rows are copied, never recomputed: what is imported is what was
exported, and ``sapwood fsck`` on the target checks every hash again.

Format: a header line ``{"format": "sapwood-export", "version": 1,
"schema": <alembic revision>}``, then one line per row, ``{"t": table,
"r": {column: value}}``; bytes are base64 (``{"b64": …}``). The import
refuses a dump of another schema revision and a target that holds any
commit but the empty root (it does not merge catalogs).
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterable, Iterator
from typing import IO, Any

from sqlalchemy import Table, delete, insert, select, text

from core.commits import NO_ANCESTOR
from core.errors import InvalidInputError
from store import cutoff_index
from store.db import Database
from store.retention import grace_setting
from store.schema import Base

FORMAT, VERSION = "sapwood-export", 1
# Parents before children where the schema would care; all tables are
# insert-only but refs, which are replaced as a whole.
_ORDER = ["commits", "packs", "ancestry", "changes", "view_edges", "locations",
          "imported_commits", "refs", "reflog", "auth_state", "principals", "api_keys",
          "grants", "protected_refs"]
_CHUNK = 2_000


def _tables() -> list[Table]:
    by_name = {t.name: t for t in Base.metadata.sorted_tables}
    return [by_name[n] for n in _ORDER if n in by_name]


def _revision(db: Database) -> str:
    with db.read() as conn:
        return str(conn.execute(text("SELECT version_num FROM alembic_version")).scalar())


def export_rows(db: Database) -> Iterator[str]:
    """The dump, line by line."""
    yield json.dumps({"format": FORMAT, "version": VERSION, "schema": _revision(db)})
    for table in _tables():
        with db.read() as conn:
            for row in conn.execute(select(table)).mappings():
                yield json.dumps({"t": table.name, "r": {k: _out(v) for k, v in row.items()}},
                                 separators=(",", ":"), ensure_ascii=False)


def import_rows(db: Database, lines: Iterable[str]) -> dict[str, int]:
    """Load a dump into an empty catalog, in one transaction; the counts by table."""
    it = iter(lines)
    header = json.loads(next(it, "null") or "null")
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise InvalidInputError("not a Sapwood export (no sapwood-export header line)")
    if header.get("version") != VERSION:
        raise InvalidInputError(f"export format version {header.get('version')} is not "
                                f"{VERSION}")
    if header.get("schema") != _revision(db):
        raise InvalidInputError(f"the export is of schema revision {header.get('schema')}, "
                                f"this catalog is at {_revision(db)}: import it with the "
                                "version that made it, or upgrade that catalog first")
    tables = {t.name: t for t in _tables()}
    counts: dict[str, int] = {}
    with db.write() as conn:
        found = conn.execute(text("SELECT count(*) FROM commits WHERE hash <> :root"),
                             {"root": NO_ANCESTOR}).scalar_one()
        if found:
            raise InvalidInputError(f"the target catalog is not empty ({found} commits): "
                                    "import into a new one")
        # The target's bootstrap rows (root commit, main, its reflog, auth
        # state) give way to the dump's.
        for name in ("refs", "reflog", "ancestry", "commits", "auth_state"):
            conn.execute(delete(tables[name]))
        batch: dict[str, list[dict[str, Any]]] = {}
        for line in it:
            if not line.strip():
                continue
            item = json.loads(line)
            name = item["t"]
            if name not in tables:
                raise InvalidInputError(f"unknown table {name!r} in the export")
            rows = batch.setdefault(name, [])
            rows.append({k: _in(v) for k, v in item["r"].items()})
            counts[name] = counts.get(name, 0) + 1
            if len(rows) >= _CHUNK:
                conn.execute(insert(tables[name]), rows)
                rows.clear()
        for name, rows in batch.items():
            if rows:
                conn.execute(insert(tables[name]), rows)
        # The cutoff index follows this catalog's policies and reflog, not
        # the source's (policies are not exported).
        cutoff_index.rebuild(conn, time.time_ns() // 1000 - int(grace_setting() * 1_000_000))
        if db.dialect == "postgresql":
            # Ids were copied: move the sequences past them.
            for name in ("reflog", "grants"):
                conn.execute(text(
                    f"SELECT setval(pg_get_serial_sequence('{name}', 'id'), "
                    f"coalesce((SELECT max(id) FROM {name}), 0) + 1, false)"))
    return counts


def write_dump(db: Database, out: IO[str]) -> int:
    n = 0
    for line in export_rows(db):
        out.write(line + "\n")
        n += 1
    return n - 1


def _out(v: Any) -> Any:
    return {"b64": base64.b64encode(bytes(v)).decode()} if isinstance(v, bytes | memoryview) \
        else v


def _in(v: Any) -> Any:
    return base64.b64decode(v["b64"]) if isinstance(v, dict) and "b64" in v else v
