"""Materialized-view metadata, field for field as the materialized-view
proposal (Iceberg issue #6420) lists it: one document that is a superset of a
view's (versions, version-log, current version) and a table's (schemas,
snapshots, specs, sort orders, logs, refs), plus the refreshes.

The two halves are served as PyIceberg's own models (``view_part``,
``table_part``) and written back from them (``with_view``, ``with_table``),
so view updates go through core.views and table updates through PyIceberg's
update logic, as for plain views and tables.

Two spellings differ from the proposal's table: it writes
``current_version_id`` and ``version_log`` with underscores, everything else
(and the view spec it copies them from) with hyphens; the hyphens are kept.
"""

from __future__ import annotations

import uuid as uuid_mod
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_serializer
from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.table.metadata import TableMetadataV2, new_table_metadata
from pyiceberg.table.refs import SnapshotRef
from pyiceberg.table.snapshots import MetadataLogEntry, Snapshot, SnapshotLogEntry
from pyiceberg.table.sorting import UNSORTED_SORT_ORDER, SortOrder
from pyiceberg.table.statistics import StatisticsFile
from pyiceberg.view.metadata import ViewHistoryEntry, ViewMetadata, ViewVersion

from core.errors import InvalidInputError
from core.views import current_version, new_view_metadata

FORMAT_VERSION: Literal[1] = 1
# How stale (ms since a base table first changed after the refresh) the stored
# rows may be and still be served; 0: only when fresh. A reader may override it.
MAX_STALENESS = "max-staleness-ms"
# Written by a refresh into the snapshot summary of the rows it produced.
REFRESH_KIND = "sapwood.refresh"
# A base table record's property: the catalog's content id of the table.
CONTENT_ID = "content-id"


class _Model(BaseModel):
    model_config = ConfigDict(populate_by_name=True, frozen=True)


class BaseTable(_Model):
    """A base table a refresh read, in the proposal's iceberg-metastore form.
    ``properties`` carry the catalog's content id of the table (a table
    dropped and created again under the same name is another table)."""

    type: Literal["iceberg-metastore"] = "iceberg-metastore"
    identifier: str
    snapshot_reference: int = Field(alias="snapshot-reference")
    properties: dict[str, str] = {}


class Refresh(_Model):
    """One refresh: the proposal's four fields, then the catalog's own: when,
    which snapshot of the storage it produced, full or incremental, and the
    catalog commit every base table was read at."""

    refresh_id: int = Field(alias="refresh-id")
    version_id: int = Field(alias="version-id")
    base_tables: dict[str, BaseTable] = Field(alias="base-tables")
    sequence_number: int | None = Field(None, alias="sequence-number")
    timestamp_ms: int = Field(alias="timestamp-ms")
    snapshot_id: int | None = Field(None, alias="snapshot-id")
    kind: Literal["full", "incremental"] = Field("full", alias="refresh-kind")
    source_commit: str = Field(alias="source-commit")
    # The views it read on the way to the base tables, with their versions:
    # a nested view replaced since makes the stored rows another query's.
    views: dict[str, int] = Field({}, alias="base-views")

    @field_serializer("base_tables", "views")
    def _sorted(self, value: dict[str, Any]) -> dict[str, Any]:
        return dict(sorted(value.items()))


class MaterializedViewMetadata(_Model):
    format_version: Literal[1] = Field(FORMAT_VERSION, alias="format-version")
    location: str
    uuid: str
    versions: list[ViewVersion]
    current_version_id: int = Field(alias="current-version-id")
    version_log: list[ViewHistoryEntry] = Field(alias="version-log")
    last_sequence_number: int = Field(alias="last-sequence-number")
    last_updated_ms: int = Field(alias="last-updated-ms")
    last_column_id: int = Field(alias="last-column-id")
    schemas: list[Schema]
    current_schema_id: int = Field(alias="current-schema-id")
    partition_specs: list[PartitionSpec] = Field(alias="partition-specs")
    default_spec_id: int = Field(alias="default-spec-id")
    last_partition_id: int | None = Field(alias="last-partition-id")
    sort_orders: list[SortOrder] = Field(alias="sort-orders")
    default_sort_order_id: int = Field(alias="default-sort-order-id")
    refreshes: list[Refresh]
    current_refresh_id: int | None = Field(alias="current-refresh-id")
    snapshots: list[Snapshot] = []
    current_snapshot_id: int | None = Field(None, alias="current-snapshot-id")
    snapshot_log: list[SnapshotLogEntry] = Field([], alias="snapshot-log")
    properties: dict[str, str] = {}
    metadata_log: list[MetadataLogEntry] = Field([], alias="metadata-log")
    refs: dict[str, SnapshotRef] = {}
    statistics: list[StatisticsFile] = []

    def to_json(self) -> bytes:
        return self.model_dump_json(by_alias=True).encode()

    def current_refresh(self) -> Refresh | None:
        return next((r for r in self.refreshes if r.refresh_id == self.current_refresh_id),
                    None)

    def max_staleness_ms(self) -> int:
        raw = self.properties.get(MAX_STALENESS, "0")
        try:
            return max(0, int(raw))
        except ValueError:
            return 0


def check_properties(properties: dict[str, str]) -> None:
    raw = properties.get(MAX_STALENESS)
    if raw is not None and not (raw.isdigit() and len(raw) < 19):
        raise InvalidInputError(f"Invalid property {MAX_STALENESS}={raw!r}: expected a "
                                "number of milliseconds, 0 or more")


def new_mv_metadata(location: str, schema: Schema, version: ViewVersion,
                    properties: dict[str, str], now_ms: int) -> MaterializedViewMetadata:
    """A materialized view that was never refreshed: the view part as core.views
    makes a view's, the table part as PyIceberg makes a new table's (the
    schema given fresh field ids, shared by both halves)."""
    check_properties(properties)
    table = new_table_metadata(schema, UNPARTITIONED_PARTITION_SPEC, UNSORTED_SORT_ORDER,
                               location, properties)
    fresh = table.schema()
    view = new_view_metadata(location, fresh, version, properties, now_ms)
    return compose(view, table, [], None, now_ms)


def compose(view: ViewMetadata, table: TableMetadataV2 | object, refreshes: list[Refresh],
            current_refresh_id: int | None, now_ms: int) -> MaterializedViewMetadata:
    t: TableMetadataV2 = table  # type: ignore[assignment]
    # One schema list for both halves: the view's versions and the table's
    # snapshots each name theirs by id.
    schemas = {s.schema_id: s for s in t.schemas}
    for s in view.schemas:
        schemas.setdefault(s.schema_id, s)
    return MaterializedViewMetadata(
        location=view.location, uuid=view.view_uuid, versions=view.versions,
        current_version_id=view.current_version_id, version_log=view.version_log,
        last_sequence_number=t.last_sequence_number, last_updated_ms=now_ms,
        last_column_id=max([t.last_column_id, *(s.highest_field_id for s in schemas.values())]),
        schemas=[schemas[k] for k in sorted(schemas)],
        current_schema_id=t.current_schema_id, partition_specs=t.partition_specs,
        default_spec_id=t.default_spec_id, last_partition_id=t.last_partition_id,
        sort_orders=t.sort_orders, default_sort_order_id=t.default_sort_order_id,
        refreshes=refreshes, current_refresh_id=current_refresh_id, snapshots=t.snapshots,
        current_snapshot_id=t.current_snapshot_id, snapshot_log=t.snapshot_log,
        properties=view.properties, metadata_log=t.metadata_log, refs=t.refs,
        statistics=t.statistics)


def view_part(mv: MaterializedViewMetadata) -> ViewMetadata:
    """The view an engine runs when the stored rows may not be served."""
    return ViewMetadata(view_uuid=mv.uuid, format_version=1, location=mv.location,
                        schemas=mv.schemas, current_version_id=mv.current_version_id,
                        versions=mv.versions, version_log=mv.version_log,
                        properties=mv.properties)


def table_part(mv: MaterializedViewMetadata) -> TableMetadataV2:
    """The storage: the table an engine reads when the stored rows are fresh
    enough, and the one a refresh writes."""
    return TableMetadataV2(
        location=mv.location, table_uuid=uuid_mod.UUID(mv.uuid),
        last_updated_ms=mv.last_updated_ms, last_column_id=mv.last_column_id,
        schemas=mv.schemas, current_schema_id=mv.current_schema_id,
        partition_specs=mv.partition_specs, default_spec_id=mv.default_spec_id,
        last_partition_id=mv.last_partition_id, properties=mv.properties,
        current_snapshot_id=mv.current_snapshot_id, snapshots=mv.snapshots,
        snapshot_log=mv.snapshot_log, metadata_log=mv.metadata_log,
        sort_orders=mv.sort_orders, default_sort_order_id=mv.default_sort_order_id,
        refs=mv.refs, statistics=mv.statistics, format_version=2,
        last_sequence_number=mv.last_sequence_number)


def with_view(mv: MaterializedViewMetadata, view: ViewMetadata, now_ms: int,
              ) -> MaterializedViewMetadata:
    """``mv`` after view updates (a replace, properties): the storage's
    current schema follows the view's current version, so the next refresh
    writes the new columns."""
    check_properties(view.properties)
    schema_id = current_version(view).schema_id
    table = table_part(mv).model_copy(update={"current_schema_id": schema_id})
    return compose(view, table, mv.refreshes, mv.current_refresh_id, now_ms)


def with_table(mv: MaterializedViewMetadata, table: TableMetadataV2 | object,
               refresh: Refresh | None, now_ms: int) -> MaterializedViewMetadata:
    """``mv`` after a refresh wrote ``table`` (PyIceberg's updates applied to
    the table part), with the refresh that produced it made current."""
    t: TableMetadataV2 = table  # type: ignore[assignment]
    if str(t.table_uuid) != mv.uuid:
        raise InvalidInputError("Invalid refresh: the storage's UUID changed")
    view = view_part(mv).model_copy(update={"properties": t.properties})
    refreshes = [*mv.refreshes, refresh] if refresh else mv.refreshes
    current = refresh.refresh_id if refresh else mv.current_refresh_id
    return compose(view, t, refreshes, current, now_ms)


def next_refresh_id(mv: MaterializedViewMetadata) -> int:
    return max((r.refresh_id for r in mv.refreshes), default=0) + 1
