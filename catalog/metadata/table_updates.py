"""A table commit's requirements checked and its updates applied as Iceberg's
Java ``UpdateRequirement`` and ``TableMetadata.Builder`` do it: the one
place every table commit passes (catalog.tables for creates and commits,
catalog.undo.restore, materialized views' storage commits in catalog.mviews.refresh).

PyIceberg's ``update_table_metadata`` (with format v3's row lineage around
it, catalog.iceberg_v3.lineage) does the work; it takes a client's ids as
sent and lets a client's integers through unchecked. Before it runs:

* **ids are the server's** (``addSchemaInternal``, ``reuseOrCreateNewSchemaId``
  and their siblings for specs and sort orders): an ``add-schema``,
  ``add-spec`` or ``add-sort-order`` gets the id of an identical one the
  table holds (and then adds nothing), else one more than the highest (a
  sorted order at least 1, the unsorted order 0), whatever id the client
  gave it; ``-1`` in ``set-current-schema``, ``set-default-spec`` and
  ``set-default-sort-order`` is the id the commit's last add of that kind
  got; an explicit id the client gave an added one in the same commit means
  that one, under the id it got;
* **integers are in range**: ids and counts that Iceberg's Java reads as
  ``int`` within 32 bits, snapshot ids, sequence numbers and row ids not
  negative; a v3 ``next-row-id`` that would pass 2^63-1 is refused
  (catalog.iceberg_v3.lineage);
* **a schema's defaults are kept** (a new table's too, ``fresh``) and an
  ``initial-default`` needs format v3 (Java's ``Schema.checkCompatibility``).

A failed requirement is a 409 ``CommitFailedException`` in Java's words
("Requirement failed: current schema changed: expected id 0 != 1"); a bad
update is a 400 naming the field."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from pyiceberg.partitioning import PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.table.metadata import TableMetadata, new_table_metadata
from pyiceberg.table.refs import SnapshotRefType
from pyiceberg.table.sorting import SortOrder
from pyiceberg.table.update import (
    AddPartitionSpecUpdate,
    AddSchemaUpdate,
    AddSortOrderUpdate,
    AssertCreate,
    AssertCurrentSchemaId,
    AssertDefaultSortOrderId,
    AssertDefaultSpecId,
    AssertLastAssignedFieldId,
    AssertLastAssignedPartitionId,
    AssertRefSnapshotId,
    AssertTableUUID,
    RemovePartitionSpecsUpdate,
    RemoveSchemasUpdate,
    SetCurrentSchemaUpdate,
    SetDefaultSortOrderUpdate,
    SetDefaultSpecUpdate,
    TableRequirement,
    TableUpdate,
)
from pyiceberg.types import IcebergType, ListType, MapType, NestedField, StructType

from catalog.iceberg_v3.lineage import apply_updates
from catalog.iceberg_v3.metadata import created
from catalog.metadata.update_values import LAST_ADDED, check_values
from core.errors import bad_request, commit_failed

# Java's TableMetadata: a spec's ids start at 0, a sorted order's at 1.
_FIRST_SPEC_ID = 0
_FIRST_ORDER_ID = 1
_DEFAULTS_FROM = 3  # Schema.checkCompatibility: initial defaults from format v3


# -- requirements (UpdateRequirement.java, word for word) ------------------------------------
def check_requirements(base: TableMetadata | None,
                       requirements: Sequence[TableRequirement]) -> None:
    """409 ``CommitFailedException`` with Iceberg's message for the first
    requirement ``base`` (None: no such table yet) does not meet."""
    for r in requirements:
        failed = _failed(base, r)
        if failed is not None:
            raise commit_failed(f"Requirement failed: {failed}")


def _failed(base: TableMetadata | None, r: TableRequirement) -> str | None:
    if isinstance(r, AssertCreate):
        return "table already exists" if base is not None else None
    if base is None:
        # Java checks these two only against a table; the rest need one.
        if isinstance(r, AssertLastAssignedFieldId | AssertLastAssignedPartitionId):
            return None
        return "current table metadata is missing"
    if isinstance(r, AssertTableUUID):
        if str(r.uuid).lower() != str(base.table_uuid).lower():
            return f"UUID does not match: expected {base.table_uuid} != {r.uuid}"
        return None
    if isinstance(r, AssertRefSnapshotId):
        return _ref_failed(base, r)
    # The rest compare one id: (what changed, the id asserted, the table's).
    what, expected, actual = (
        ("last assigned field id", r.last_assigned_field_id, base.last_column_id)
        if isinstance(r, AssertLastAssignedFieldId) else
        ("current schema", r.current_schema_id, base.current_schema_id)
        if isinstance(r, AssertCurrentSchemaId) else
        ("last assigned partition id", r.last_assigned_partition_id, last_partition_id(base))
        if isinstance(r, AssertLastAssignedPartitionId) else
        ("default partition spec", r.default_spec_id, base.default_spec_id)
        if isinstance(r, AssertDefaultSpecId) else
        ("default sort order", r.default_sort_order_id, base.default_sort_order_id)
        if isinstance(r, AssertDefaultSortOrderId) else ("", None, None))
    if expected == actual:
        return None
    return f"{what} changed: expected id {expected} != {actual}"


def _ref_failed(base: TableMetadata, r: AssertRefSnapshotId) -> str | None:
    ref = base.refs.get(r.ref)
    if ref is None:
        return (f"branch or tag {r.ref} is missing, expected {r.snapshot_id}"
                if r.snapshot_id is not None else None)
    kind = "branch" if ref.snapshot_ref_type == SnapshotRefType.BRANCH else "tag"
    if r.snapshot_id is None:
        return f"{kind} {r.ref} was created concurrently"
    if r.snapshot_id != ref.snapshot_id:
        return f"{kind} {r.ref} has changed: expected id {r.snapshot_id} != {ref.snapshot_id}"
    return None


def last_partition_id(meta: TableMetadata) -> int:
    """The table's last assigned partition field id, as Java reads a file
    without one (format v1): the highest of its specs' fields, at least 999."""
    if meta.last_partition_id is not None:
        return meta.last_partition_id
    return max([999, *(f.field_id for s in meta.partition_specs for f in s.fields)])


# -- updates ---------------------------------------------------------------------------------
def apply(base: TableMetadata | None, updates: Sequence[TableUpdate],
          base_location: str | None) -> TableMetadata:
    """The metadata after ``updates`` (``base`` None: a table being created;
    ``base_location``: ``base``'s file, for the metadata log)."""
    for u in updates:
        check_values(u)
    checked = _Ids.of(base).assign(updates)
    version = base.format_version if base is not None else 1
    for u in checked:
        version = max(version, getattr(u, "format_version", version))
    for u in checked:  # against the version the commit ends at
        if isinstance(u, AddSchemaUpdate):
            check_schema(u.schema_, version)
    return apply_updates(base, checked, base_location)


@dataclass
class _Ids:
    """The ids a commit's adds are numbered against, as they stand after
    each update; ``claimed``: the id a client gave an added one -> its id."""

    schemas: list[Schema]
    specs: list[PartitionSpec]
    orders: list[SortOrder]
    current_schema: int
    last: dict[str, int] = field(default_factory=dict)
    claimed: dict[str, dict[int, int]] = field(default_factory=dict)

    @classmethod
    def of(cls, base: TableMetadata | None) -> _Ids:
        if base is None:  # Java's empty builder: nothing, current schema 0
            return cls([], [], [], 0)
        return cls(list(base.schemas), list(base.partition_specs), list(base.sort_orders),
                   base.current_schema_id)

    def assign(self, updates: Sequence[TableUpdate]) -> list[TableUpdate]:
        out: list[TableUpdate] = []
        for u in updates:
            if isinstance(u, AddSchemaUpdate):
                out += self._schema(u)
            elif isinstance(u, AddPartitionSpecUpdate):
                out += self._spec(u)
            elif isinstance(u, AddSortOrderUpdate):
                out += self._order(u)
            elif isinstance(u, SetCurrentSchemaUpdate):
                sid = self._chosen("schema", u.schema_id)
                if all(s.schema_id != sid for s in self.schemas):
                    raise bad_request(f"Cannot set current schema to unknown schema: {sid}")
                self.current_schema = sid
                out.append(SetCurrentSchemaUpdate(schema_id=sid))
            elif isinstance(u, SetDefaultSpecUpdate):
                out.append(SetDefaultSpecUpdate(spec_id=self._chosen("spec", u.spec_id)))
            elif isinstance(u, SetDefaultSortOrderUpdate):
                out.append(SetDefaultSortOrderUpdate(
                    sort_order_id=self._chosen("sort order", u.sort_order_id)))
            else:
                if isinstance(u, RemoveSchemasUpdate):
                    self.schemas = [s for s in self.schemas if s.schema_id not in u.schema_ids]
                elif isinstance(u, RemovePartitionSpecsUpdate):
                    self.specs = [s for s in self.specs if s.spec_id not in u.spec_ids]
                out.append(u)
        return out

    def _schema(self, u: AddSchemaUpdate) -> list[TableUpdate]:
        s = u.schema_
        same = next((x for x in self.schemas if x == s), None)  # fields, defaults, identifiers
        if same is not None:
            return self._added("schema", s.schema_id, same.schema_id, [])
        new_id = max((x.schema_id for x in self.schemas), default=self.current_schema - 1) + 1
        new = Schema(*s.fields, schema_id=new_id, identifier_field_ids=s.identifier_field_ids)
        self.schemas.append(new)
        return self._added("schema", s.schema_id, new_id, [AddSchemaUpdate(schema_=new)])

    def _spec(self, u: AddPartitionSpecUpdate) -> list[TableUpdate]:
        spec = u.spec
        same = next((x for x in self.specs if _same_spec(x, spec)), None)
        if same is not None:
            return self._added("spec", spec.spec_id, same.spec_id, [])
        new_id = max([_FIRST_SPEC_ID, *(x.spec_id + 1 for x in self.specs)])
        new = PartitionSpec(*spec.fields, spec_id=new_id)
        self.specs.append(new)
        return self._added("spec", spec.spec_id, new_id, [AddPartitionSpecUpdate(spec=new)])

    def _order(self, u: AddSortOrderUpdate) -> list[TableUpdate]:
        order = u.sort_order
        if not order.fields:  # the unsorted order is always 0
            same = next((x for x in self.orders if x.order_id == 0), None)
            new_id = 0
        else:
            same = next((x for x in self.orders if x.fields and x.fields == order.fields), None)
            new_id = max([_FIRST_ORDER_ID, *(x.order_id + 1 for x in self.orders)])
        if same is not None:
            return self._added("sort order", order.order_id, same.order_id, [])
        new = SortOrder(*order.fields, order_id=new_id)
        self.orders.append(new)
        return self._added("sort order", order.order_id, new_id,
                           [AddSortOrderUpdate(sort_order=new)])

    def _added(self, kind: str, claimed: int, got: int,
               updates: list[TableUpdate]) -> list[TableUpdate]:
        self.last[kind] = got
        if claimed != got and claimed != LAST_ADDED:
            self.claimed.setdefault(kind, {})[claimed] = got
        return updates

    def _chosen(self, kind: str, given: int) -> int:
        if given == LAST_ADDED:
            if kind not in self.last:
                raise bad_request(f"Cannot set last added {kind}: no {kind} has been added")
            return self.last[kind]
        return self.claimed.get(kind, {}).get(given, given)


def _same_spec(a: PartitionSpec, b: PartitionSpec) -> bool:
    """Java's ``PartitionSpec.compatibleWith``: the same fields by source,
    transform and name (their field ids aside)."""
    return len(a.fields) == len(b.fields) and all(
        x.source_id == y.source_id and str(x.transform) == str(y.transform) and x.name == y.name
        for x, y in zip(a.fields, b.fields, strict=True))


# -- schemas and new tables --------------------------------------------------------------------
def check_schema(schema: Schema, version: int) -> None:
    """Java's ``Schema.checkCompatibility``: a type newer than the table's
    format, or an ``initial-default`` before v3, is a 400."""
    try:
        schema.check_format_version_compatibility(version)
    except ValueError as e:
        raise bad_request(f"Invalid schema for v{version}: {e}") from None
    if version >= _DEFAULTS_FROM:
        return
    for f in _fields(schema.as_struct()):
        if f.initial_default is not None:
            raise bad_request(f"Invalid schema for v{version}: invalid initial default for "
                              f"{f.name}: non-null default ({f.initial_default!r}) is not "
                              f"supported until v{_DEFAULTS_FROM}")


def fresh(schema: Schema, spec: PartitionSpec, order: SortOrder, location: str,
          properties: dict[str, str]) -> TableMetadata:
    """A new table's metadata: PyIceberg's ``new_table_metadata`` (fresh
    column ids from 1), with the columns' defaults it drops put back, as
    Java's ``TypeUtil.assignFreshIds`` keeps them."""
    props = dict(properties)
    meta = created(new_table_metadata(schema, spec, order, location, props))
    check_schema(schema, meta.format_version)
    if not any(f.initial_default is not None or f.write_default is not None
               for f in _fields(schema.as_struct())):
        return meta
    numbered = meta.schemas[0]
    kept = Schema(*_struct_with_defaults(numbered.as_struct(), schema.as_struct()).fields,
                  schema_id=numbered.schema_id,
                  identifier_field_ids=numbered.identifier_field_ids)
    return meta.model_copy(update={"schemas": [kept]})


def _fields(t: IcebergType) -> list[NestedField]:
    if isinstance(t, StructType):
        return [x for f in t.fields for x in (f, *_fields(f.field_type))]
    if isinstance(t, ListType):
        return _fields(t.element_type)
    if isinstance(t, MapType):
        return _fields(t.key_type) + _fields(t.value_type)
    return []


def _struct_with_defaults(fresh_type: StructType, given: StructType) -> StructType:
    return StructType(*[
        NestedField(field_id=f.field_id, name=f.name, required=f.required, doc=f.doc,
                    field_type=_with_defaults(f.field_type, g.field_type),
                    initial_default=g.initial_default, write_default=g.write_default)
        for f, g in zip(fresh_type.fields, given.fields, strict=True)])


def _with_defaults(fresh_type: IcebergType, given: IcebergType) -> IcebergType:
    """``fresh_type`` (``given`` renumbered, the same shape) with ``given``'s
    defaults field by field."""
    if isinstance(fresh_type, StructType) and isinstance(given, StructType):
        return _struct_with_defaults(fresh_type, given)
    if isinstance(fresh_type, ListType) and isinstance(given, ListType):
        return ListType(element_id=fresh_type.element_id,
                        element=_with_defaults(fresh_type.element_type, given.element_type),
                        element_required=fresh_type.element_required)
    if isinstance(fresh_type, MapType) and isinstance(given, MapType):
        return MapType(key_id=fresh_type.key_id,
                       key_type=_with_defaults(fresh_type.key_type, given.key_type),
                       value_id=fresh_type.value_id,
                       value_type=_with_defaults(fresh_type.value_type, given.value_type),
                       value_required=fresh_type.value_required)
    return fresh_type
