"""Request bodies as Spark 3.5 + Iceberg 1.10 sends them (SPARK_NOTES)."""

from __future__ import annotations

import time
from typing import Any

SCHEMA = {"type": "struct", "schema-id": 0, "fields": [
    {"id": 1, "name": "id", "required": False, "type": "long"},
    {"id": 2, "name": "name", "required": False, "type": "string"}]}


def now_ms() -> int:
    return int(time.time() * 1000)


def create_table(name: str) -> dict[str, Any]:
    return {"name": name, "schema": SCHEMA,
            "partition-spec": {"spec-id": 0, "fields": []},
            "write-order": {"order-id": 0, "fields": []},
            "stage-create": False, "properties": {"owner": "spark"}}


def manifest_list(location: str, snapshot_id: int) -> str:
    return f"{location}/metadata/snap-{snapshot_id}-1-x.avro"


def write_manifest_list(location: str, snapshot_id: int) -> None:
    """The file Spark writes before it commits: a manifest list for the
    snapshot (the server refuses a snapshot whose manifest list is not
    there, or is not one); listing no manifests is enough here."""
    from pathlib import Path
    from urllib.parse import urlparse

    from pyiceberg.io.pyarrow import PyArrowFileIO
    from pyiceberg.manifest import write_manifest_list as write

    path = Path(urlparse(manifest_list(location, snapshot_id)).path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with write(2, PyArrowFileIO().new_output(str(path)), snapshot_id, None, 1, "null"):
        pass


def append(table_uuid: str, snapshot_id: int, parent: int | None, location: str,
           sequence: int = 1) -> dict[str, Any]:
    """INSERT INTO: no identifier, add-snapshot + set-snapshot-ref."""
    snap: dict[str, Any] = {
        "snapshot-id": snapshot_id, "timestamp-ms": now_ms(), "sequence-number": sequence,
        "summary": {"operation": "append", "added-records": "1"},
        "manifest-list": manifest_list(location, snapshot_id), "schema-id": 0}
    if parent is not None:
        snap["parent-snapshot-id"] = parent
    return {
        "requirements": [{"type": "assert-table-uuid", "uuid": table_uuid},
                         {"type": "assert-ref-snapshot-id", "ref": "main",
                          "snapshot-id": parent}],
        "updates": [{"action": "add-snapshot", "snapshot": snap},
                    {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch",
                     "snapshot-id": snapshot_id}]}


def view_version(sql: str, *, dialects: tuple[str, ...] = ("spark",), schema_id: int = 0,
                 version_id: int = 1) -> dict[str, Any]:
    return {"version-id": version_id, "timestamp-ms": now_ms(), "schema-id": schema_id,
            "summary": {"engine-name": "spark", "engine-version": "3.5.6",
                        "iceberg-version": "Apache Iceberg 1.10.2", "app-id": "local-1"},
            "representations": [{"type": "sql", "sql": sql, "dialect": d} for d in dialects],
            "default-namespace": ["default"], "default-catalog": "sapwood"}


def create_view(name: str, sql: str, *, dialects: tuple[str, ...] = ("spark",),
                properties: dict[str, str] | None = None) -> dict[str, Any]:
    return {"name": name, "schema": SCHEMA,
            "view-version": view_version(sql, dialects=dialects),
            "properties": properties or {}}


def replace_view(view_uuid: str, sql: str, *, dialects: tuple[str, ...] = ("spark",),
                 properties: dict[str, str] | None = None) -> dict[str, Any]:
    """CREATE OR REPLACE VIEW: -1 ids for the schema and version added here."""
    return {
        "requirements": [{"type": "assert-view-uuid", "uuid": view_uuid}],
        "updates": [
            {"action": "set-properties", "updates": properties or {"create_engine": "spark"}},
            {"action": "add-schema", "schema": {**SCHEMA, "schema-id": -1}},
            {"action": "add-view-version",
             "view-version": view_version(sql, dialects=dialects, schema_id=-1, version_id=-1)},
            {"action": "set-current-view-version", "view-version-id": -1}]}


def current_sql(metadata: dict[str, Any], dialect: str = "spark") -> str:
    cur = next(v for v in metadata["versions"]
               if v["version-id"] == metadata["current-version-id"])
    return next(r["sql"] for r in cur["representations"] if r["dialect"] == dialect)
