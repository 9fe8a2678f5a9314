"""Per-dialect extension fields on views.

Each SQL dialect may carry fields that its engine needs and others ignore
(Dremio's dataset ids and column lineage, Hive's original/expanded text, …).
Known dialects validate through a pydantic model each; a dialect nobody
registered is kept as a plain string map. Extensions belong to a view version.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from core.errors import InvalidExtensionError


class _Extension(BaseModel):
    model_config = ConfigDict(populate_by_name=True, frozen=True, extra="forbid")


class ColumnOrigin(_Extension):
    table: list[str] = Field(min_length=1)
    column: str = Field(min_length=1)
    # The views the value passes through, the one the view's SQL names first
    # (absent: the SQL reads the table itself, or the origin was recorded
    # before the way was; core.redact).
    via: list[list[str]] | None = None


class FieldOrigin(_Extension):
    name: str = Field(min_length=1)
    origins: list[ColumnOrigin] = []
    derived: bool = False


class DremioExtension(_Extension):
    dataset_id: str = Field(alias="dataset-id", min_length=1)
    previous_dataset_id: str | None = Field(None, alias="previous-dataset-id")
    field_origins: list[FieldOrigin] = Field([], alias="field-origins")
    tags: list[str] = []


class HiveExtension(_Extension):
    original_text: str = Field(alias="original-text")
    expanded_text: str = Field(alias="expanded-text")


class TrinoExtension(_Extension):
    engine_version: str | None = Field(None, alias="engine-version")
    owner: str | None = None
    security_mode: Literal["DEFINER", "INVOKER"] | None = Field(None, alias="security-mode")


class SparkExtension(_Extension):
    engine_version: str | None = Field(None, alias="engine-version")
    owner: str | None = None
    app_id: str | None = Field(None, alias="app-id")


Extension = BaseModel | dict[str, str]

_REGISTRY: dict[str, type[BaseModel]] = {
    "dremio": DremioExtension,
    "hive": HiveExtension,
    "trino": TrinoExtension,
    "spark": SparkExtension,
}
_UNKNOWN = TypeAdapter(dict[str, str])


def register_dialect(name: str, model: type[BaseModel]) -> None:
    _REGISTRY[_dialect_name(name)] = model


def parse_extension(dialect: str, payload: Any) -> Extension:
    name = _dialect_name(dialect)
    model = _REGISTRY.get(name)
    if model is not None and isinstance(payload, model):
        return payload
    try:
        if model is None:
            return _UNKNOWN.validate_python(payload)
        return model.model_validate(payload)
    except ValidationError as e:
        raise InvalidExtensionError(_describe(name, e, known=model is not None)) from None


def parse_extensions(payload: Any) -> dict[str, Extension]:
    if payload is None:
        return {}
    if not isinstance(payload, dict):
        raise InvalidExtensionError(
            f"view extensions must be an object keyed by dialect, got {type(payload).__name__}")
    out: dict[str, Extension] = {}
    for dialect, body in payload.items():
        name = _dialect_name(dialect)
        if name in out:
            raise InvalidExtensionError(f"view extensions name dialect {name!r} twice")
        out[name] = parse_extension(name, body)
    return out


def dump_extension(ext: Extension) -> dict[str, Any]:
    if isinstance(ext, BaseModel):
        return ext.model_dump(mode="json", by_alias=True, exclude_none=True)
    return dict(sorted(ext.items()))


def _dialect_name(dialect: str) -> str:
    if not isinstance(dialect, str) or not dialect.strip():
        raise InvalidExtensionError("view extension dialect name is empty")
    return dialect.strip().lower()


def _describe(dialect: str, err: ValidationError, *, known: bool) -> str:
    first = err.errors()[0]
    loc = ".".join(str(p) for p in first["loc"])
    kind = "" if known else " (unknown dialect: a map of strings)"
    where = f" field {loc!r}" if loc else ""
    return f"invalid {dialect} extension{kind}:{where}: {first['msg']}"
