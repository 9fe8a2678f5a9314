"""Column types as engines spell them (sqlglot's names), as Iceberg types:
for the schema of a materialized view or a recompiled view that the catalog
infers itself."""

from __future__ import annotations

# Engine type names (as sqlglot spells them) that map to an Iceberg type.
_ICEBERG_TYPES = {"BIGINT": "long", "INT": "int", "SMALLINT": "int", "TINYINT": "int",
                  "DOUBLE": "double", "FLOAT": "float", "BOOLEAN": "boolean",
                  "STRING": "string", "VARCHAR": "string", "TEXT": "string", "DATE": "date",
                  "TIMESTAMP": "timestamptz", "TIMESTAMP_NTZ": "timestamp",
                  "BINARY": "binary"}


def iceberg_type(engine_type: str | None) -> str | None:
    if engine_type is None:
        return None
    if engine_type.upper().startswith("DECIMAL"):
        return engine_type.lower()
    return _ICEBERG_TYPES.get(engine_type.upper())
