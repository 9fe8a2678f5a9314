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

from api.limits import (
    TABLE_FORMATS,
    check_count,
    check_location,
    check_name,
    check_names,
    check_properties,
    check_removals,
    check_updates,
    unsupported_format,
)
from api.strict import loose
from catalog.commands import (
    NewTable,
    NewView,
    Registration,
    TableCommit,
    ViewCommit,
)
from catalog.feed.iceberg_events import MAX_PAGE
from catalog.iceberg_v3.metadata import schema_from_spec
from core.numbers import INT64_MAX, out_of_range
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
            parsed = handler(data)
        except (TypeError, KeyError, AttributeError, IndexError) as e:
            raise ValueError(f"{type(e).__name__}: {e}") from None
        # PyIceberg's models take any integer (ids, timestamps, sizes): one
        # past the 64-bit range would fail in the store or in a client.
        wrong = out_of_range(parsed)
        if wrong is not None:
            raise ValueError(wrong)
        # Lax parsing took "2" or true for an integer: the spec's types, strictly.
        wrong = loose(data, parsed) if isinstance(data, dict) else None
        if wrong is not None:
            raise ValueError(wrong)
        return parsed


def _strings(value: object) -> object:
    """Property maps: the spec says string values; clients send numbers too."""
    if isinstance(value, dict):
        return {k: v if isinstance(v, str) else str(v).lower() if isinstance(v, bool)
                else str(v) for k, v in value.items()}
    return value


def _checked_name(value: str) -> str:
    """A table or view name, which may carry its own ref (``t@etl``)."""
    check_name(value.partition("@")[0])
    return value


def _checked_levels(value: list[str]) -> list[str]:
    check_names(value)
    return value


def _checked_properties(value: dict[str, str]) -> dict[str, str]:
    check_properties(value)
    return value


def _checked_location(value: str | None) -> str | None:
    check_location(value)
    return value


def _table_properties(value: dict[str, str]) -> dict[str, str]:
    check_properties(value)
    version = value.get("format-version")
    # Exactly a version's digits: Python's int() would also take " 3", "٣" or "+3".
    if version is not None and version not in {str(v) for v in TABLE_FORMATS}:
        shown = version if version.isascii() and version.isdigit() else repr(version[:20])
        raise ValueError(unsupported_format(shown))
    return value


def _spec_updates(value: Any) -> Any:
    """Schemas an update adds, with types read in the table spec's spelling
    (catalog.iceberg_v3: geometry, geography; variant refused)."""
    if not isinstance(value, list):
        return value
    return [{**u, "schema": schema_from_spec(u["schema"])}
            if isinstance(u, dict) and u.get("action") == "add-schema" and "schema" in u else u
            for u in value]


def _table_updates(updates: list[TableUpdate]) -> None:
    check_updates(updates)
    for u in updates:
        version = getattr(u, "format_version", None)
        if version is not None and version not in TABLE_FORMATS:
            raise ValueError(unsupported_format(version))


class CreateNamespaceRequest(_Request):
    namespace: list[str]
    properties: dict[str, str] = {}

    _props = field_validator("properties", mode="before")(staticmethod(_strings))
    _limits = field_validator("properties")(staticmethod(_checked_properties))
    _levels = field_validator("namespace")(staticmethod(_checked_levels))


class UpdateNamespacePropertiesRequest(_Request):
    removals: list[str] = []
    updates: dict[str, str] = {}

    _props = field_validator("updates", mode="before")(staticmethod(_strings))

    @model_validator(mode="after")
    def _limits(self) -> UpdateNamespacePropertiesRequest:
        check_properties(self.updates)
        check_removals(self.removals)
        check_properties(dict.fromkeys([*self.removals, *self.updates], ""),
                         "properties updated and removed")  # both count towards the limit
        return self


class TableIdentifier(_Request):
    namespace: list[str]
    name: str

    _levels = field_validator("namespace")(staticmethod(_checked_levels))
    _name = field_validator("name")(staticmethod(_checked_name))


class CreateTableRequest(_Request):
    name: str
    location: str | None = None
    schema_: Schema = Field(alias="schema")
    partition_spec: PartitionSpec | None = Field(None, alias="partition-spec")
    write_order: SortOrder | None = Field(None, alias="write-order")
    stage_create: bool = Field(False, alias="stage-create")
    properties: dict[str, str] = {}

    _props = field_validator("properties", mode="before")(staticmethod(_strings))
    _limits = field_validator("properties")(staticmethod(_table_properties))
    _name = field_validator("name")(staticmethod(_checked_name))
    _location = field_validator("location")(staticmethod(_checked_location))
    _types = field_validator("schema_", mode="before")(staticmethod(schema_from_spec))

    def command(self) -> NewTable:
        return NewTable(self.name, self.schema_, self.location, self.partition_spec,
                        self.write_order, self.stage_create, dict(self.properties))


class CommitTableRequest(_Request):
    identifier: TableIdentifier | None = None
    requirements: list[TableRequirement] = []
    updates: list[TableUpdate] = []

    _types = field_validator("updates", mode="before")(staticmethod(_spec_updates))

    @model_validator(mode="after")
    def _limits(self) -> CommitTableRequest:
        check_count(len(self.updates), "updates")
        check_count(len(self.requirements), "requirements")
        _table_updates(self.updates)
        return self

    def command(self) -> TableCommit:
        return TableCommit(tuple(self.requirements), tuple(self.updates))


class TableChange(CommitTableRequest):
    identifier: TableIdentifier  # required in a transaction


class CommitTransactionRequest(_Request):
    table_changes: list[TableChange] = Field(alias="table-changes", min_length=1)

    @model_validator(mode="after")
    def _limits(self) -> CommitTransactionRequest:
        # One commit for all the tables: the limit counts them together.
        check_count(sum(len(c.updates) for c in self.table_changes), "updates")
        check_count(sum(len(c.requirements) for c in self.table_changes), "requirements")
        return self


class RenameTableRequest(_Request):
    source: TableIdentifier
    destination: TableIdentifier


class RegisterTableRequest(_Request):
    name: str
    metadata_location: str = Field(alias="metadata-location")
    overwrite: bool = False

    _name = field_validator("name")(staticmethod(_checked_name))
    _location = field_validator("metadata_location")(staticmethod(_checked_location))

    def command(self) -> Registration:
        return Registration(self.name, self.metadata_location, self.overwrite)


class CreateViewRequest(_Request):
    name: str
    location: str | None = None
    schema_: Schema = Field(alias="schema")
    view_version: ViewVersion = Field(alias="view-version")
    properties: dict[str, str] = {}

    _props = field_validator("properties", mode="before")(staticmethod(_strings))
    _limits = field_validator("properties")(staticmethod(_checked_properties))
    _name = field_validator("name")(staticmethod(_checked_name))
    _location = field_validator("location")(staticmethod(_checked_location))

    def command(self) -> NewView:
        return NewView(self.name, self.schema_, self.view_version, self.location,
                       dict(self.properties))


class CommitViewRequest(_Request):
    identifier: TableIdentifier | None = None
    requirements: list[ViewRequirement] = []
    updates: list[ViewUpdate] = Field(min_length=0)

    @model_validator(mode="after")
    def _limits(self) -> CommitViewRequest:
        check_count(len(self.updates), "updates")
        check_count(len(self.requirements), "requirements")
        check_updates(self.updates)
        return self

    def command(self) -> ViewCommit:
        return ViewCommit(tuple(self.requirements), tuple(self.updates))


class RegisterViewRequest(_Request):
    name: str
    metadata_location: str = Field(alias="metadata-location")

    _name = field_validator("name")(staticmethod(_checked_name))
    _location = field_validator("metadata_location")(staticmethod(_checked_location))

    def command(self) -> Registration:
        return Registration(self.name, self.metadata_location)


class CatalogObjectId(_Request):
    uuid: str
    type: str | None = None


class QueryEventsRequest(_Request):
    """The proposed events endpoint's request (apache/iceberg pull request
    12584), the fields it settled; catalog.feed.iceberg_events says what each does."""

    continuation_token: str | None = Field(None, alias="continuation-token", max_length=40)
    page_size: int = Field(100, alias="page-size", ge=1, le=MAX_PAGE)
    # The feed keeps microseconds: a millisecond instant it can hold.
    after_timestamp_ms: int | None = Field(None, alias="after-timestamp-ms", ge=0,
                                           le=INT64_MAX // 1000)
    operation_types: list[str] = Field([], alias="operation-types", max_length=64)
    catalog_objects_by_name: list[list[str]] = Field(
        [], alias="catalog-objects-by-name", max_length=1000)
    catalog_objects_by_id: list[CatalogObjectId] = Field(
        [], alias="catalog-objects-by-id", max_length=1000)
    object_types: list[str] = Field([], alias="object-types", max_length=8)
    custom_filters: dict[str, Any] = Field({}, alias="custom-filters")
