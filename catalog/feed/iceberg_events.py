"""The change feed in the shape of the proposed Iceberg REST events endpoint
(apache/iceberg pull request 12584, ``POST /v1/{prefix}/events``): the same
stored events the versioning API's feed shows (catalog.feed.events), read for
one reference (the prefix's) and taken apart into one Iceberg event per
catalog object a change touched — create-, update-, drop- and rename-table,
create-, replace-, drop- and rename-view, create-, update-properties- and
drop-namespace — with Sapwood's own kinds (materialized views, reference
changes) as ``x-sapwood-…`` operations, the pull request's place for
extensions. One change is one request: its events share ``request-id``
(the feed's event id) and ``request-event-count``, and a page never splits
one. Where Sapwood differs from the proposal is written in docs/events.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from catalog.feed.events import TYPE_PREFIX, Feed, FeedQuery, KeyFilter, RefFilter, scan_rows
from core.content import IcebergTable, IcebergView, MaterializedView, Namespace
from core.errors import InvalidInputError
from core.instants import parse_instant
from core.keys import ContentKey

OPERATION_TYPES = (
    "create-table", "register-table", "drop-table", "update-table", "rename-table",
    "create-view", "drop-view", "replace-view", "rename-view",
    "create-namespace", "update-namespace-properties", "drop-namespace")
EXTENSION = "x-sapwood-"
EXTENSIONS = tuple(EXTENSION + k for k in (
    "create-materialized-view", "replace-materialized-view", "drop-materialized-view",
    "rename-materialized-view", "reference-created", "reference-assigned",
    "reference-deleted"))
OBJECT_TYPES = ("namespace", "table", "view")
MAX_PAGE = 1000
# Stored events one request examines at most: a filter that matches little
# answers with fewer events (the proposal allows it) and a token to go on,
# instead of reading the whole log in one request.
MAX_EXAMINED = 10_000
_KINDS = ("commit", "merge", "transplant", "reference.created", "reference.assigned",
          "reference.deleted")
_OBJECT = {"NAMESPACE": "namespace", "ICEBERG_TABLE": "table", "ICEBERG_VIEW": "view",
           "MATERIALIZED_VIEW": "view"}


@dataclass(frozen=True)
class EventsQuery:
    """QueryEventsRequest, as far as the pull request settled it."""

    continuation_token: str | None = None
    page_size: int = 100
    after_timestamp_ms: int | None = None
    operation_types: tuple[str, ...] = ()
    objects_by_name: tuple[tuple[str, ...], ...] = ()
    objects_by_id: tuple[str, ...] = ()
    object_types: tuple[str, ...] = ()
    custom_filters: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not 1 <= self.page_size <= MAX_PAGE:
            raise InvalidInputError(f"page-size must be between 1 and {MAX_PAGE}")
        if self.continuation_token is not None and not (
                self.continuation_token.isdigit() and len(self.continuation_token) < 19):
            raise InvalidInputError(
                f"continuation-token {self.continuation_token[:40]!r} is not one this "
                "catalog handed out")
        bad = [t for t in self.operation_types
               if t not in OPERATION_TYPES and not t.startswith("x-")]
        if bad:
            raise InvalidInputError(f"Unknown operation-type {bad[0]!r}: one of "
                                    f"{', '.join(OPERATION_TYPES)}, or x-… for extensions")
        bad = [t for t in self.object_types if t not in OBJECT_TYPES]
        if bad:
            raise InvalidInputError(f"Unknown object-type {bad[0]!r}: one of "
                                    f"{', '.join(OBJECT_TYPES)}")
        if self.custom_filters:
            raise InvalidInputError(
                f"custom-filters {sorted(self.custom_filters)[0]!r}: this catalog has none")


@dataclass
class _Object:
    """What one Iceberg event is about, for the request's filters."""

    type: str | None
    names: list[tuple[str, ...]]
    uuid: str | None


class IcebergEvents:
    def __init__(self, feed: Feed) -> None:
        self.feed = feed
        self.catalog = feed.catalog

    def query(self, ref: str, q: EventsQuery, may_read_ref: RefFilter | None = None,
              keys_of: KeyFilter | None = None) -> dict[str, Any]:
        """QueryEventsResponse: the events after the token (or from
        ``after-timestamp-ms``), oldest first, at most a page of them
        unless one change alone is more."""
        if q.continuation_token is not None:
            cursor = int(q.continuation_token)
        elif q.after_timestamp_ms is not None:
            cursor = self.feed.events.before_time(q.after_timestamp_ms * 1000)
        else:
            cursor = 0
        out: list[dict[str, Any]] = []
        highest = q.after_timestamp_ms or 0
        examined = 0
        types = tuple(TYPE_PREFIX + k for k in _KINDS)
        batch = min(MAX_PAGE, q.page_size * 2)
        # Each round looks at scan_rows(batch) stored events at most.
        while examined + scan_rows(batch) <= MAX_EXAMINED:
            start = cursor
            shown, more, last = self.feed.page_to(FeedQuery(cursor, batch, types, ref),
                                                  may_read_ref, keys_of)
            full = False
            for e in shown:
                events = self._events(e, q)
                if events and out and len(out) + len(events) > q.page_size:
                    full = True
                    break
                out.extend(events)
                cursor = int(e["id"])
                highest = max(highest, _ms(e))
            if full:
                break
            examined += last - start
            cursor = max(cursor, last)
            if not more or len(out) >= q.page_size:
                break
        return {"events": out, "continuation-token": str(cursor),
                "highest-processed-timestamp-ms": highest}

    # -- one change, taken apart --------------------------------------------------------
    def _events(self, e: dict[str, Any], q: EventsQuery) -> list[dict[str, Any]]:
        kind = e["type"].removeprefix(TYPE_PREFIX)
        data = e["data"]
        found: list[tuple[dict[str, Any], _Object]] = []
        if kind.startswith("reference."):
            found.append(({"operation-type": EXTENSION + kind.replace(".", "-"),
                           "reference": data["reference"], "hash-before": data["hashBefore"],
                           "hash-after": data["hashAfter"]}, _Object(None, [], None)))
        else:
            for c in data.get("commits", []):
                found.extend(self._operations(c))
        kept = [(op, obj) for op, obj in found if _matches(op, obj, q)]
        at = _ms(e)
        return [{"event-id": f"{e['id']}-{i}", "request-id": e["id"],
                 "request-event-count": len(kept), "timestamp-ms": at,
                 "operation": op,
                 "x-sapwood": {"reference": e["subject"], "principal": data.get("principal"),
                               "change": kind}}
                for i, (op, _) in enumerate(kept)]

    def _operations(self, commit: dict[str, Any]) -> list[tuple[dict[str, Any], _Object]]:
        ops: list[dict[str, Any]] = commit["operations"]
        parents: Sequence[str] = commit.get("parents") or ()
        keys = [ContentKey(tuple(op["key"])) for op in ops]
        before = (self.catalog.store.contents("@" + parents[0], keys)
                  if parents and keys else {})
        # A rename is a delete and a put of the same content id in one commit.
        deleted = {before[k].id: k for k, op in zip(keys, ops, strict=True)
                   if op["op"] == "DELETE" and k in before}
        renamed_from = {op["id"]: deleted[op["id"]] for op in ops
                        if op["op"] == "PUT" and op.get("id") in deleted}
        gone = set(renamed_from.values())
        after = self._values(commit["hash"], [k for k, op in zip(keys, ops, strict=True)
                                              if op["op"] == "PUT"])
        out = []
        for key, op in zip(keys, ops, strict=True):
            extra = {k: op[k] for k in ("snapshotId", "summary", "metadataLocation", "versionId",
                                         "dialects", "status", "reasons", "refresh") if k in op}
            if op["op"] == "PUT":
                value = after.get(key)
                if value is None:
                    continue
                source = renamed_from.get(op.get("id", ""))
                made = self._put(key, value, before.get(key), source, op.get("id", ""))
            elif op["op"] == "DELETE" and key in before and key not in gone:
                made = self._dropped(key, before[key])
            else:
                continue
            if made is not None:
                if extra:
                    made[0]["x-sapwood-content"] = extra
                out.append(made)
        return out

    def _values(self, commit_hash: str, keys: list[ContentKey]) -> dict[ContentKey, Any]:
        """The values the commit put, in one lookup."""
        if not keys:
            return {}
        try:
            return dict(self.catalog.store.contents("@" + commit_hash, keys))
        except Exception:  # a commit garbage collection removed: nothing to show
            return {}

    def _put(self, key: ContentKey, value: Any, old: Any, renamed: ContentKey | None,
             content_id: str) -> tuple[dict[str, Any], _Object] | None:
        if isinstance(value, Namespace):
            ns = list(key.elements)
            if old is None:
                return ({"operation-type": "create-namespace", "namespace": ns,
                         "properties": dict(value.properties)}, _Object("namespace", [key.elements],
                                                                        None))
            props = old.properties if isinstance(old, Namespace) else {}
            return ({"operation-type": "update-namespace-properties", "namespace": ns,
                     "updated": sorted(k for k, v in value.properties.items()
                                       if props.get(k) != v),
                     "removed": sorted(set(props) - set(value.properties)), "missing": []},
                    _Object("namespace", [key.elements], None))
        kind, uuid = self._kind_and_uuid(value)
        if kind is None:
            return None
        uuid_field = "table-uuid" if kind == "table" else "view-uuid"
        names = [key.elements] + ([renamed.elements] if renamed else [])
        obj = _Object("view" if kind == "materialized-view" else kind, names, uuid)
        prefix = EXTENSION if kind == "materialized-view" else ""
        base = {uuid_field if kind != "materialized-view" else "content-id":
                uuid if kind != "materialized-view" else content_id}
        if renamed is not None:
            return ({"operation-type": f"{prefix}rename-{kind}", **base,
                     "source": _identifier(renamed), "destination": _identifier(key)}, obj)
        if old is None:
            return ({"operation-type": f"{prefix}create-{kind}", "identifier": _identifier(key),
                     **base, "updates": []}, obj)
        verb = "update" if kind == "table" else "replace"
        return ({"operation-type": f"{prefix}{verb}-{kind}", "identifier": _identifier(key),
                 **base, "updates": [], "requirements": []}, obj)

    def _dropped(self, key: ContentKey, old: Any) -> tuple[dict[str, Any], _Object] | None:
        if isinstance(old, Namespace):
            return ({"operation-type": "drop-namespace", "namespace": list(key.elements)},
                    _Object("namespace", [key.elements], None))
        kind, uuid = self._kind_and_uuid(old)
        if kind is None:
            return None
        obj = _Object("view" if kind == "materialized-view" else kind, [key.elements], uuid)
        if kind == "materialized-view":
            return ({"operation-type": EXTENSION + "drop-materialized-view",
                     "identifier": _identifier(key), "content-id": old.id}, obj)
        return ({"operation-type": f"drop-{kind}", "identifier": _identifier(key),
                 f"{kind}-uuid": uuid}, obj)

    def _kind_and_uuid(self, value: Any) -> tuple[str | None, str | None]:
        """The object's kind and its Iceberg uuid (from its metadata file;
        the content id when the file is gone)."""
        try:
            if isinstance(value, MaterializedView):
                return "materialized-view", str(value.id)
            if isinstance(value, IcebergTable):
                meta, _ = self.catalog.files.table(value.metadata_location)
                return "table", str(meta.table_uuid)
            if isinstance(value, IcebergView):
                vmeta, _ = self.catalog.files.view(value.metadata_location)
                return "view", str(vmeta.view_uuid)
        except Exception:
            return ("table" if isinstance(value, IcebergTable) else "view"), str(value.id)
        return None, None


def _identifier(key: ContentKey) -> dict[str, Any]:
    return {"namespace": list(key.elements[:-1]), "name": key.elements[-1]}


def _ms(e: dict[str, Any]) -> int:
    return int(parse_instant(e["time"]).timestamp() * 1000)


def _matches(op: dict[str, Any], obj: _Object, q: EventsQuery) -> bool:
    if q.operation_types and op["operation-type"] not in q.operation_types:
        return False
    if q.object_types and obj.type not in q.object_types:
        return False
    if q.objects_by_id and obj.uuid not in q.objects_by_id:
        return False
    # A name filter is an object or a namespace: it covers what lies within.
    return not q.objects_by_name or any(
        name[:len(want)] == want for name in obj.names for want in q.objects_by_name)
