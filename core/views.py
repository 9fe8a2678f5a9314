"""Iceberg view metadata: the REST spec's view updates and requirements, the one
function that applies them, and the rebuild of a view as of an instant.

PyIceberg models view metadata but has no update logic, so that part lives
here, following the view spec and the Java reference implementation's rules
(version reuse, renumbering, history expiry, the drop-dialect check).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field
from pyiceberg.schema import Schema
from pyiceberg.view.metadata import (
    SQLViewRepresentation,
    ViewHistoryEntry,
    ViewMetadata,
    ViewVersion,
)

from core.errors import InvalidInputError, RequirementFailedError

LAST_ADDED = -1
HISTORY_ENTRIES = "version.history.num-entries"
HISTORY_ENTRIES_DEFAULT = 10
DROP_DIALECT_ALLOWED = "replace.drop-dialect.allowed"


class _Model(BaseModel):
    model_config = ConfigDict(populate_by_name=True, frozen=True)


# -- requirements and updates (the spec's ViewRequirement / ViewUpdate) ---------------
class AssertViewUUID(_Model):
    type: Literal["assert-view-uuid"] = "assert-view-uuid"
    uuid: str

    def validate_against(self, base: ViewMetadata) -> None:
        # UpdateRequirement.AssertViewUUID's words, the view's own UUID first.
        if base.view_uuid.lower() != self.uuid.lower():
            raise RequirementFailedError(
                f"Requirement failed: view UUID does not match: expected {base.view_uuid} "
                f"!= {self.uuid}")


ViewRequirement = Annotated[AssertViewUUID, Field(discriminator="type")]


class AssignUUID(_Model):
    action: Literal["assign-uuid"] = "assign-uuid"
    uuid: str


class UpgradeFormatVersion(_Model):
    action: Literal["upgrade-format-version"] = "upgrade-format-version"
    format_version: int = Field(alias="format-version")


class AddSchema(_Model):
    action: Literal["add-schema"] = "add-schema"
    schema_: Schema = Field(alias="schema")
    last_column_id: int | None = Field(None, alias="last-column-id")


class SetLocation(_Model):
    action: Literal["set-location"] = "set-location"
    location: str


class SetProperties(_Model):
    action: Literal["set-properties"] = "set-properties"
    updates: dict[str, str]


class RemoveProperties(_Model):
    action: Literal["remove-properties"] = "remove-properties"
    removals: list[str]


class AddViewVersion(_Model):
    action: Literal["add-view-version"] = "add-view-version"
    view_version: ViewVersion = Field(alias="view-version")


class SetCurrentViewVersion(_Model):
    action: Literal["set-current-view-version"] = "set-current-view-version"
    view_version_id: int = Field(alias="view-version-id")


ViewUpdate = Annotated[
    AssignUUID | UpgradeFormatVersion | AddSchema | SetLocation | SetProperties
    | RemoveProperties | AddViewVersion | SetCurrentViewVersion,
    Field(discriminator="action"),
]


# -- applying updates -------------------------------------------------------------------
class _Builder:
    """Mutable working copy of one view's metadata while one commit's updates apply."""

    def __init__(self, base: ViewMetadata | None, now_ms: int) -> None:
        self.now_ms = now_ms
        self.uuid = base.view_uuid if base else None
        self.format_version = base.format_version if base else 1
        self.location = base.location if base else None
        self.schemas = list(base.schemas) if base else []
        self.versions = list(base.versions) if base else []
        self.log = list(base.version_log) if base else []
        self.properties = dict(base.properties) if base else {}
        self.previous = _current(base) if base else None
        self.current_id = base.current_version_id if base else None
        self.last_schema: int | None = None
        self.last_version: int | None = None
        self.client_ids: dict[int, int] = {}  # id a client gave an added version -> its id
        self.client_schemas: dict[int, int] = {}  # ... and an added schema -> its id

    def apply(self, u: ViewUpdate) -> None:
        if isinstance(u, AssignUUID):
            if self.uuid is not None and self.uuid != u.uuid:
                raise InvalidInputError(f"Cannot reassign view UUID {self.uuid} to {u.uuid}")
            self.uuid = u.uuid
        elif isinstance(u, UpgradeFormatVersion):
            if u.format_version != 1:
                raise InvalidInputError(
                    f"Cannot upgrade view to format version {u.format_version}: "
                    "only format version 1 is supported")
        elif isinstance(u, AddSchema):
            self._add_schema(u.schema_)
        elif isinstance(u, SetLocation):
            if not u.location:
                raise InvalidInputError("Invalid location: empty")
            self.location = u.location.rstrip("/")
        elif isinstance(u, SetProperties):
            self.properties.update(u.updates)
        elif isinstance(u, RemoveProperties):
            for k in u.removals:
                self.properties.pop(k, None)
        elif isinstance(u, AddViewVersion):
            self._add_version(u.view_version)
        elif isinstance(u, SetCurrentViewVersion):
            self._set_current(u.view_version_id)

    def _add_schema(self, schema: Schema) -> None:
        """The id is the server's (Java's ViewMetadata.Builder): an identical
        schema's, else one past the highest, whatever id the client gave."""
        same = next((s for s in self.schemas if s.fields == schema.fields
                     and s.identifier_field_ids == schema.identifier_field_ids), None)
        if same is not None:
            new_id = same.schema_id
        else:
            new_id = max((s.schema_id for s in self.schemas), default=-1) + 1
            self.schemas.append(schema.model_copy(update={"schema_id": new_id}))
        if schema.schema_id not in (new_id, LAST_ADDED):
            # A version of this commit naming the schema by the client's id
            # means this one.
            self.client_schemas[schema.schema_id] = new_id
        self.last_schema = new_id

    def _add_version(self, v: ViewVersion) -> None:
        schema_id = v.schema_id
        if schema_id == LAST_ADDED:
            if self.last_schema is None:
                raise InvalidInputError(
                    "Cannot set last added schema: no schema has been added")
            schema_id = self.last_schema
        schema_id = self.client_schemas.get(schema_id, schema_id)
        if all(s.schema_id != schema_id for s in self.schemas):
            raise InvalidInputError(f"Cannot add version with unknown schema: {schema_id}")
        seen: set[str] = set()
        for r in v.representations:
            dialect = _sql_of(r).dialect.lower()
            if dialect in seen:
                raise InvalidInputError(
                    f"Invalid view version: Cannot add multiple queries for dialect {dialect}")
            seen.add(dialect)
        candidate = v.model_copy(update={"schema_id": schema_id})
        same = next((x for x in self.versions if _same_version(x, candidate)), None)
        if same is not None:
            new_id = same.version_id
        else:
            new_id = max((x.version_id for x in self.versions), default=0) + 1
            self.versions.append(candidate.model_copy(update={"version_id": new_id}))
        self.client_ids[v.version_id] = new_id
        self.last_version = new_id

    def _set_current(self, version_id: int) -> None:
        if version_id == LAST_ADDED:
            if self.last_version is None:
                raise InvalidInputError(
                    "Cannot set last version: no view version has been added")
            version_id = self.last_version
        elif version_id in self.client_ids:
            version_id = self.client_ids[version_id]  # the id it was renumbered to
        if all(x.version_id != version_id for x in self.versions):
            raise InvalidInputError(
                f"Cannot set current version to unknown version: {version_id}")
        if version_id == self.current_id:
            return
        self.current_id = version_id
        # The instant the catalog made it current (not the client's timestamp), so
        # that time travel by the version-log agrees with the commit log.
        self.log.append(ViewHistoryEntry(timestamp_ms=self.now_ms, version_id=version_id))

    def build(self) -> ViewMetadata:
        if self.uuid is None:
            self.uuid = str(uuid.uuid4())
        if self.location is None:
            raise InvalidInputError("Invalid view metadata: location is required")
        if self.current_id is None:
            raise InvalidInputError("Invalid view metadata: no current version is set")
        current = next(x for x in self.versions if x.version_id == self.current_id)
        self._check_dialects(current)
        versions, log = _expire(self.versions, self.log, self.current_id,
                                _int_property(self.properties, HISTORY_ENTRIES,
                                              HISTORY_ENTRIES_DEFAULT))
        return ViewMetadata(
            view_uuid=self.uuid, format_version=self.format_version, location=self.location,
            schemas=self.schemas, current_version_id=self.current_id, versions=versions,
            version_log=log, properties=self.properties)

    def _check_dialects(self, current: ViewVersion) -> None:
        if self.previous is None or self.previous.version_id == current.version_id:
            return
        if self.properties.get(DROP_DIALECT_ALLOWED, "false").lower() == "true":
            return
        before = _dialects(self.previous)
        after = _dialects(current)
        if not before <= after:
            raise InvalidInputError(
                "Cannot replace view due to loss of view dialects "
                f"({DROP_DIALECT_ALLOWED}=false):\nPrevious dialects: {sorted(before)}\n"
                f"New dialects: {sorted(after)}")


def apply_view_updates(base: ViewMetadata | None, updates: Sequence[ViewUpdate],
                       now_ms: int, keep_dialects: bool = True) -> ViewMetadata:
    """The metadata after one commit's updates (``base`` None: a new view).
    ``keep_dialects=False`` lets the new current version have fewer
    dialects than the old one whatever the view's property says (a restore
    puts an earlier version back exactly)."""
    b = _Builder(base, now_ms)
    for u in updates:
        b.apply(u)
    if not keep_dialects:
        b.previous = None
    return b.build()


def check_view_requirements(base: ViewMetadata, requirements: Sequence[ViewRequirement],
                            ) -> None:
    for r in requirements:
        r.validate_against(base)


def new_view_metadata(location: str, schema: Schema, version: ViewVersion,
                      properties: dict[str, str], now_ms: int) -> ViewMetadata:
    return apply_view_updates(None, [
        AssignUUID(uuid=str(uuid.uuid4())), SetLocation(location=location),
        AddSchema(schema_=schema), SetProperties(updates=properties),
        AddViewVersion(view_version=version.model_copy(update={"schema_id": LAST_ADDED})),
        SetCurrentViewVersion(view_version_id=LAST_ADDED),
    ], now_ms)


def view_as_of(metadata: ViewMetadata, instant_ms: int) -> ViewMetadata:
    """The view as a reader saw it at ``instant_ms``: the current version is the
    last version-log entry at or before the instant, and the log ends there.

    A metadata file whose log has nothing that old (a view registered with a
    younger history) is returned unchanged."""
    log = [e for e in metadata.version_log if e.timestamp_ms <= instant_ms]
    if not log or len(log) == len(metadata.version_log):
        return metadata
    wanted = log[-1].version_id
    if all(v.version_id != wanted for v in metadata.versions):
        return metadata  # expired from the file: the commit's own state is the best answer
    return metadata.model_copy(update={"current_version_id": wanted, "version_log": log})


def current_version(metadata: ViewMetadata) -> ViewVersion:
    return _current(metadata)


# -- helpers ---------------------------------------------------------------------------------
def _current(metadata: ViewMetadata) -> ViewVersion:
    for v in metadata.versions:
        if v.version_id == metadata.current_version_id:
            return v
    raise InvalidInputError(
        f"Invalid view metadata: current version {metadata.current_version_id} is not "
        "among its versions")


def _same_version(a: ViewVersion, b: ViewVersion) -> bool:
    return (a.schema_id == b.schema_id and a.summary == b.summary
            and a.representations == b.representations
            and a.default_catalog == b.default_catalog
            and list(a.default_namespace) == list(b.default_namespace))


def _dialects(v: ViewVersion) -> set[str]:
    return {r.dialect.lower() for r in sql_representations(v)}


def _int_property(props: dict[str, str], name: str, default: int) -> int:
    raw = props.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise InvalidInputError(f"Invalid property {name}={raw!r}: not an integer") from None
    if value < 1:
        raise InvalidInputError(f"{name} must be positive but was {value}")
    return value


def _expire(versions: list[ViewVersion], log: list[ViewHistoryEntry], current: int,
            keep: int) -> tuple[list[ViewVersion], list[ViewHistoryEntry]]:
    """Keep the newest ``keep`` versions (the current one always); the log keeps
    its suffix that refers only to kept versions, as the Java reference does."""
    if len(versions) <= keep:
        return versions, log
    kept = versions[-keep:]
    if all(v.version_id != current for v in kept):
        kept = [v for v in versions if v.version_id == current] + versions[-(keep - 1):] \
            if keep > 1 else [v for v in versions if v.version_id == current]
    ids = {v.version_id for v in kept}
    out: list[ViewHistoryEntry] = []
    for e in log:
        if e.version_id in ids:
            out.append(e)
        else:
            out.clear()
    return kept, out


def sql_representations(version: ViewVersion) -> list[SQLViewRepresentation]:
    """A version's SQL representations (PyIceberg wraps each in a root model)."""
    out = []
    for r in version.representations:
        inner = getattr(r, "root", r)
        if isinstance(inner, SQLViewRepresentation):
            out.append(inner)
    return out


def _sql_of(r: object) -> SQLViewRepresentation:
    inner = getattr(r, "root", r)
    assert isinstance(inner, SQLViewRepresentation)  # the only kind the spec has
    return inner
