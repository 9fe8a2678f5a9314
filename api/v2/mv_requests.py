"""Request bodies of the versioning API's materialized-view routes."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pyiceberg.schema import Schema

from api.limits import check_properties
from api.v2.requests import KeyBody


class _Body(BaseModel):
    model_config = ConfigDict(populate_by_name=True, frozen=True, extra="forbid")


class _WithProperties(_Body):
    properties: dict[str, str] = {}

    @field_validator("properties")
    @classmethod
    def _limits(cls, value: dict[str, str]) -> dict[str, str]:
        check_properties(value)
        return value


class _Definition(_WithProperties):
    dialect: str = Field("spark", min_length=1, max_length=64)
    default_namespace: list[str] = Field([], alias="defaultNamespace")
    # Iceberg schema JSON of the output columns (an engine's own, e.g. Spark's);
    # without it the columns and types are inferred by sqlglot.
    schema_: dict[str, Any] | None = Field(None, alias="schema")

    def iceberg_schema(self) -> Schema | None:
        return None if self.schema_ is None else Schema.model_validate(self.schema_)


class CreateMaterializedView(_Definition):
    key: KeyBody
    sql: str = Field(min_length=1, max_length=1_000_000)


class ReplaceMaterializedView(_Definition):
    """A new definition, new properties, or both."""

    sql: str | None = Field(None, min_length=1, max_length=1_000_000)
