"""What the catalog's table and view operations take and give back: typed
values, free of any wire format (the HTTP layer turns the REST spec's
request bodies into these, and these into its responses)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from pyiceberg.partitioning import PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.table.sorting import SortOrder
from pyiceberg.table.update import TableRequirement, TableUpdate
from pyiceberg.view.metadata import ViewVersion

from core.views import ViewRequirement, ViewUpdate


@dataclass(frozen=True, slots=True)
class Loaded:
    """A table's or view's metadata as it is served."""

    # The metadata file (None for a staged create: nothing is written yet).
    location: str | None
    # The metadata JSON.
    metadata: bytes
    # A key under which this answer never changes (the file as it is, or
    # a form derived only from it), so an answer built from it may be kept;
    # None: built for this request (an instant, a subset of snapshots).
    cache_key: str | None = None


@dataclass(frozen=True, slots=True)
class ReadOptions:
    """What a reader of a materialized view's storage asked for: the storage
    whatever its freshness (a refresh), and the staleness it accepts (None:
    the view's own setting)."""

    refresh: bool = False
    max_staleness_ms: int | None = None


@dataclass(frozen=True, slots=True)
class NewTable:
    name: str
    schema: Schema
    location: str | None = None
    partition_spec: PartitionSpec | None = None
    write_order: SortOrder | None = None
    stage_create: bool = False
    properties: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class TableCommit:
    """Requirements to check and updates to apply (PyIceberg's own classes)."""

    requirements: Sequence[TableRequirement] = ()
    updates: Sequence[TableUpdate] = ()


@dataclass(frozen=True, slots=True)
class Registration:
    """An existing metadata file to adopt under ``name``."""

    name: str
    metadata_location: str
    overwrite: bool = False


@dataclass(frozen=True, slots=True)
class NewView:
    name: str
    schema: Schema
    version: ViewVersion
    location: str | None = None
    properties: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ViewCommit:
    """Requirements to check and updates to apply (core.views)."""

    requirements: Sequence[ViewRequirement] = ()
    updates: Sequence[ViewUpdate] = ()
