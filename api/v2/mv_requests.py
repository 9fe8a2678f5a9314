"""Request bodies of the versioning API's materialized-view routes."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pyiceberg.schema import Schema

from api.limits import check_properties
from api.v2.requests import KeyBody
from core.errors import describe_validation
from core.numbers import out_of_range


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

    @field_validator("schema_")
    @classmethod
    def _valid_schema(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        """An Iceberg schema whose ids fit in 64 bits; errors name the field."""
        if value is not None:
            try:
                schema = Schema.model_validate(value)
            except ValidationError as e:
                named = describe_validation(e.errors(include_input=False))
                raise ValueError("Invalid schema: " + named.removeprefix("Invalid request: ")) \
                    from None
            wrong = out_of_range(schema)
            if wrong is not None:
                raise ValueError(wrong)
        return value

    def iceberg_schema(self) -> Schema | None:
        return None if self.schema_ is None else Schema.model_validate(self.schema_)


class CreateMaterializedView(_Definition):
    key: KeyBody
    sql: str = Field(min_length=1, max_length=1_000_000)


class ReplaceMaterializedView(_Definition):
    """A new definition, new properties, or both."""

    sql: str | None = Field(None, min_length=1, max_length=1_000_000)
