"""Request bodies of the Iceberg REST spec, field for field (hyphenated JSON
names as aliases). Schemas, specs, sort orders, table updates and requirements
are PyIceberg's own models; view updates and requirements are core's."""

from __future__ import annotations

from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    field_validator,
    model_validator,
)
from pyiceberg.partitioning import PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.table.sorting import SortOrder
from pyiceberg.table.update import TableRequirement, TableUpdate
from pyiceberg.view.metadata import ViewVersion

from core.views import ViewRequirement, ViewUpdate


class _Request(BaseModel):
    model_config = ConfigDict(populate_by_name=True, frozen=True)

    @model_validator(mode="wrap")
    @classmethod
    def _input_errors(cls, data: Any, handler: ModelWrapValidatorHandler[Any]) -> Any:
        # PyIceberg's own validators raise TypeError/KeyError/AttributeError on
        # some malformed input (a default of the wrong type, a snapshot without
        # its fields); while a body is parsed they are the request's fault.
        try:
            return handler(data)
        except (TypeError, KeyError, AttributeError, IndexError) as e:
            raise ValueError(f"{type(e).__name__}: {e}") from None


def _strings(value: object) -> object:
    """Property maps: the spec says string values; clients send numbers too."""
    if isinstance(value, dict):
        return {k: v if isinstance(v, str) else str(v).lower() if isinstance(v, bool)
                else str(v) for k, v in value.items()}
    return value


class CreateNamespaceRequest(_Request):
    namespace: list[str]
    properties: dict[str, str] = {}

    _props = field_validator("properties", mode="before")(staticmethod(_strings))


class UpdateNamespacePropertiesRequest(_Request):
    removals: list[str] = []
    updates: dict[str, str] = {}

    _props = field_validator("updates", mode="before")(staticmethod(_strings))


class TableIdentifier(_Request):
    namespace: list[str]
    name: str


class CreateTableRequest(_Request):
    name: str
    location: str | None = None
    schema_: Schema = Field(alias="schema")
    partition_spec: PartitionSpec | None = Field(None, alias="partition-spec")
    write_order: SortOrder | None = Field(None, alias="write-order")
    stage_create: bool = Field(False, alias="stage-create")
    properties: dict[str, str] = {}

    _props = field_validator("properties", mode="before")(staticmethod(_strings))


class CommitTableRequest(_Request):
    identifier: TableIdentifier | None = None
    requirements: list[TableRequirement] = []
    updates: list[TableUpdate] = []


class TableChange(CommitTableRequest):
    identifier: TableIdentifier  # type: ignore[assignment]  # required in a transaction


class CommitTransactionRequest(_Request):
    table_changes: list[TableChange] = Field(alias="table-changes", min_length=1)


class RenameTableRequest(_Request):
    source: TableIdentifier
    destination: TableIdentifier


class RegisterTableRequest(_Request):
    name: str
    metadata_location: str = Field(alias="metadata-location")
    overwrite: bool = False


class CreateViewRequest(_Request):
    name: str
    location: str | None = None
    schema_: Schema = Field(alias="schema")
    view_version: ViewVersion = Field(alias="view-version")
    properties: dict[str, str] = {}

    _props = field_validator("properties", mode="before")(staticmethod(_strings))


class CommitViewRequest(_Request):
    identifier: TableIdentifier | None = None
    requirements: list[ViewRequirement] = []
    updates: list[ViewUpdate] = Field(min_length=0)


class RegisterViewRequest(_Request):
    name: str
    metadata_location: str = Field(alias="metadata-location")
