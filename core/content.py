"""Content values kept under keys: Iceberg tables, views, materialized views
and namespaces. Field names follow Nessie's JSON (camelCase aliases).

The Iceberg metadata itself lives in files; a content value points at it and
caches the few fields that conflict checks need. Every value has a stable
``id`` that the store assigns on creation and that survives renames and merges.
"""

from __future__ import annotations

import hashlib
import json
import weakref
from enum import StrEnum
from functools import partial
from typing import Annotated, Any, Literal, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    field_serializer,
    field_validator,
)

from core.dialects import Extension, dump_extension, parse_extensions
from core.errors import InvalidContentError, InvalidExtensionError
from core.sql.stored import DialectAnalysis


class ContentType(StrEnum):
    ICEBERG_TABLE = "ICEBERG_TABLE"
    ICEBERG_VIEW = "ICEBERG_VIEW"
    MATERIALIZED_VIEW = "MATERIALIZED_VIEW"
    NAMESPACE = "NAMESPACE"

    @property
    def code(self) -> str:
        """One-letter code used in compact encodings."""
        return _CODES[self]

    @staticmethod
    def from_code(code: str) -> ContentType:
        return _BY_CODE[code]


_CODES = {ContentType.ICEBERG_TABLE: "T", ContentType.ICEBERG_VIEW: "V",
          ContentType.MATERIALIZED_VIEW: "M", ContentType.NAMESPACE: "N"}
_BY_CODE = {v: k for k, v in _CODES.items()}


class _Content(BaseModel):
    model_config = ConfigDict(populate_by_name=True, frozen=True, extra="forbid")

    id: str | None = None

    def with_id(self, content_id: str) -> Self:
        return self.model_copy(update={"id": content_id})

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)

    def canonical_bytes(self) -> bytes:
        # Fields in declaration order, maps sorted by their serializers: equal
        # values give equal bytes.
        return self.__pydantic_serializer__.to_json(self, by_alias=True, exclude_none=True)

    def value_hash(self) -> str:
        """Hash of the whole value, id included: equal hashes mean equal values."""
        return self.hashed()[0]

    def hashed(self) -> tuple[str, bytes]:
        """(value hash, canonical bytes), computed once per (frozen) value."""
        key = id(self)
        hit = _HASHED.get(key)
        if hit is not None:
            return hit[1], hit[2]
        data = self.canonical_bytes()
        digest = hashlib.sha256(data).hexdigest()
        # Keyed by identity, not equality (views hold dicts, so values are not
        # hashable); the weakref's callback drops the entry with the value.
        _HASHED[key] = (weakref.ref(self, partial(_forget, key)), digest, data)
        return digest, data


_HASHED: dict[int, tuple[weakref.ref[Any], str, bytes]] = {}


def _forget(key: int, _: object) -> None:
    _HASHED.pop(key, None)


class IcebergTable(_Content):
    type: Literal["ICEBERG_TABLE"] = "ICEBERG_TABLE"
    metadata_location: str = Field(alias="metadataLocation", min_length=1)
    snapshot_id: int = Field(-1, alias="snapshotId")
    schema_id: int = Field(0, alias="schemaId")
    spec_id: int = Field(0, alias="specId")
    sort_order_id: int = Field(0, alias="sortOrderId")


class _ViewLike(_Content):
    metadata_location: str = Field(alias="metadataLocation", min_length=1)
    version_id: int = Field(alias="versionId")
    schema_id: int = Field(0, alias="schemaId")
    # Dialect extensions of the current version, keyed by lower-case dialect.
    extensions: dict[str, Any] = {}
    # What the current version's SQL reads and where its columns come from,
    # per representation (core.sql); None for values written before analysis
    # existed (so their bytes, and hashes, stay as they were).
    analysis: list[DialectAnalysis] | None = None

    @field_validator("extensions", mode="before")
    @classmethod
    def _check_extensions(cls, value: Any) -> dict[str, Extension]:
        return parse_extensions(value)

    @field_serializer("extensions")
    def _dump_extensions(self, value: dict[str, Extension]) -> dict[str, Any]:
        return {k: dump_extension(v) for k, v in sorted(value.items())}


class IcebergView(_ViewLike):
    type: Literal["ICEBERG_VIEW"] = "ICEBERG_VIEW"


class MaterializedView(_ViewLike):
    """One catalog entry for a materialized view: its metadata file holds the
    view, the storage and the refreshes (core.mv). The value caches what
    conflict checks and listings need: the storage's current snapshot and the
    current refresh (-1: none yet)."""

    type: Literal["MATERIALIZED_VIEW"] = "MATERIALIZED_VIEW"
    snapshot_id: int = Field(-1, alias="snapshotId")
    refresh_id: int = Field(-1, alias="refreshId")


class Namespace(_Content):
    type: Literal["NAMESPACE"] = "NAMESPACE"
    properties: dict[str, str] = {}

    @field_serializer("properties")
    def _sorted(self, value: dict[str, str]) -> dict[str, str]:
        return dict(sorted(value.items()))


Content = Annotated[
    IcebergTable | IcebergView | MaterializedView | Namespace, Field(discriminator="type")
]
_ADAPTER: TypeAdapter[Content] = TypeAdapter(Content)


def parse_content(payload: Any) -> Content:
    """Validate a content value from JSON-like data; errors name the field."""
    if isinstance(payload, _Content):
        return payload  # type: ignore[return-value]
    try:
        return _ADAPTER.validate_python(payload)
    except ValidationError as e:
        first = e.errors()[0]
        cause = first.get("ctx", {}).get("error")
        if isinstance(cause, InvalidExtensionError):
            raise InvalidExtensionError(cause.message) from None
        parts = [str(p) for p in first["loc"]]
        if parts and parts[0] in ContentType.__members__:
            parts = parts[1:]  # the union's tag, not a field
        loc = ".".join(parts) or "type"
        raise InvalidContentError(f"invalid content: field {loc!r}: {first['msg']}") from None


def parse_content_json(raw: bytes | str) -> Content:
    return parse_content(json.loads(raw))
