"""The change feed as the rest of the stack reads it: the store's events
(store.events) as CloudEvents 1.0 documents (structured mode, built with
the ``cloudevents`` library), with what each change did per key — for a
table its snapshot and the snapshot's summary, for a view its version,
dialects and status at that commit (catalog.views.status), for a
materialized view its refresh, for a drop the views it left invalid — and
only what the reader
may see: events on references it may read, keys it may not read removed,
an event left with nothing not shown at all, and the commits' messages and
authors only to a reader of the whole reference (core.redact.commit_meta)."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from cloudevents.conversion import to_dict
from cloudevents.http import CloudEvent

from catalog.kernel import Catalog
from catalog.views.status import statuses
from core.content import IcebergTable, IcebergView, MaterializedView
from core.errors import InvalidInputError
from core.instants import format_instant, from_micros
from core.keys import ContentKey
from core.mv.metadata import view_part
from core.redact import commit_meta, invalidated_views
from core.sql.validity import Readable, ViewStatus
from store.events import KINDS, StoredEvent

TYPE_PREFIX = "dev.sapwood."
LINEAGE = TYPE_PREFIX + "openlineage"  # views' lineage (catalog.feed.lineage_events)
TYPES = (*(TYPE_PREFIX + k for k in KINDS.values()), LINEAGE)
_WRITES = ("commit", "merge", "transplant")
MAX_PAGE = 1000
# Long polls end after this at most (a client asks again).
MAX_WAIT_S = 60.0
# Stored events one page looks at, at most: SCAN_PER_RECORD per record asked
# for, within these bounds. A reader who may see little of the feed gets a
# page with fewer events (or none) and a cursor past what was looked at,
# instead of the whole log read on its behalf in one request.
SCAN_PER_RECORD = 10
MIN_SCAN = 1000
MAX_SCAN = 10_000
# Above this many readable references in one stretch, the others are told
# apart in Python (in the page's batches) rather than named in the query.
_MAX_NAMED_REFS = 500

RefFilter = Callable[[str], bool]
# For a reference: which keys the reader may see (None: all of them).
KeyFilter = Callable[[str], Callable[[tuple[str, ...]], bool] | None]


@dataclass(frozen=True)
class FeedQuery:
    after: int = 0
    max_records: int = 100
    types: tuple[str, ...] = ()
    ref: str | None = None
    key: ContentKey | None = None

    def __post_init__(self) -> None:
        if self.after < 0:
            raise InvalidInputError("after must be an event id (0 or more)")
        if not 1 <= self.max_records <= MAX_PAGE:
            raise InvalidInputError(f"maxRecords must be between 1 and {MAX_PAGE}")
        unknown = [t for t in self.types if t not in TYPES]
        if unknown:
            raise InvalidInputError(f"Unknown event type {unknown[0]!r}: one of {', '.join(TYPES)}")
        if LINEAGE in self.types and len(self.types) > 1:
            # One event per change and id: lineage is its own view of the feed.
            raise InvalidInputError(f"Ask for {LINEAGE} on its own (types={LINEAGE})")


def scan_rows(max_records: int) -> int:
    """How many stored events a page of ``max_records`` looks at, at most."""
    return max(MIN_SCAN, min(MAX_SCAN, SCAN_PER_RECORD * max_records))


def source() -> str:
    """The catalog, as CloudEvents' ``source`` (SAPWOOD_EVENT_SOURCE)."""
    return os.environ.get("SAPWOOD_EVENT_SOURCE") or "urn:sapwood:catalog"


class Feed:
    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.events = catalog.store.events

    def page(self, q: FeedQuery, may_read_ref: RefFilter | None = None,
             keys_of: KeyFilter | None = None) -> tuple[list[dict[str, Any]], bool]:
        """CloudEvents after ``q.after``, oldest first, as the reader may see
        them, at most ``q.max_records``; and whether more follow."""
        events, more, _ = self.page_to(q, may_read_ref, keys_of)
        return events, more

    def page_to(self, q: FeedQuery, may_read_ref: RefFilter | None = None,
                keys_of: KeyFilter | None = None) -> tuple[list[dict[str, Any]], bool, int]:
        """``page``, and the cursor to go on from: the last event shown when
        the page is full, else the last event looked at (shown or not) — a
        follower may move its cursor there, never further.

        A page looks at the next ``scan_rows`` stored events at most; the
        references the reader may not read are left out by the query, keys
        it may not read in batches that grow, so a page costs a few queries
        however little of it the reader may see. When the page stops at the
        end of its stretch with more stored beyond, it says so (``True``)
        with the cursor at that end."""
        lineage = LINEAGE in q.types
        kinds = list(_WRITES) if lineage else [t.removeprefix(TYPE_PREFIX) for t in q.types]
        scan = scan_rows(q.max_records)
        end, beyond = self.events.window(q.after, scan)
        refs = [q.ref] if q.ref else []
        if may_read_ref is not None and end > q.after:
            names = self.events.refs_between(q.after, end, kinds, refs)
            allowed = [n for n in names if may_read_ref(n)]
            if not allowed:
                return [], beyond, end
            if len(allowed) < len(names) and len(allowed) <= _MAX_NAMED_REFS:
                refs = allowed
        out: list[dict[str, Any]] = []
        after = q.after
        batch = q.max_records + 1  # enough when the reader sees everything
        while after < end:
            stored, more = self.events.page(after, min(batch, scan), kinds, refs, until=end)
            hidden = 0
            for e in stored:
                shown = self._shown(e, q.key, may_read_ref, keys_of)
                if shown is not None and lineage:
                    shown = self._lineage(e, shown, keys_of)
                if shown is None:
                    hidden += 1
                    after = e.seq
                    continue
                if len(out) == q.max_records:
                    return out, True, int(out[-1]["id"])
                out.append(shown)
                after = e.seq
            if not more:
                break
            # Keys hidden from the reader (or events of other kinds, for
            # lineage): look further at once, not one event at a time.
            batch = batch * 8 if hidden else q.max_records + 1 - len(out)
        return out, beyond, end

    # -- one event ---------------------------------------------------------------------
    def _shown(self, e: StoredEvent, key: ContentKey | None, may_read_ref: RefFilter | None,
               keys_of: KeyFilter | None) -> dict[str, Any] | None:
        if may_read_ref is not None and not may_read_ref(e.ref):
            return None
        visible = keys_of(e.ref) if keys_of is not None else None
        commits = []
        for c in e.data.get("commits", []):
            ops = [op for op in c["operations"]
                   if (visible is None or visible(tuple(op["key"])))
                   and (key is None or tuple(op["key"]) == key.elements)]
            if ops or (visible is None and key is None):
                # Its message and author only to a reader of the whole
                # reference, as the log (core.redact.commit_meta).
                commits.append(commit_meta(
                    {**c, "operations": self._detailed(c["hash"], ops, visible)}, visible))
        if e.kind.startswith("reference."):
            if key is not None:
                return None
        elif not commits or (not any(c["operations"] for c in commits) and (
                visible is not None or key is not None)):
            return None
        data: dict[str, Any] = {"reference": {"name": e.ref, "type": e.ref_type.value},
                                "hashBefore": e.old_hash, "hashAfter": e.new_hash,
                                "principal": e.principal}
        if not e.kind.startswith("reference."):
            data["commits"] = commits
            authors = sorted({c["author"] for c in commits if c.get("author")})
            data["authors"] = authors
            data["message"] = commits[-1]["message"] if commits else None
        if e.data.get("operationsOmitted"):
            data["operationsOmitted"] = e.data["operationsOmitted"]
        event = CloudEvent({"id": str(e.seq), "source": source(),
                            "type": TYPE_PREFIX + e.kind, "subject": e.ref,
                            "time": format_instant(from_micros(e.at_us)),
                            "datacontenttype": "application/json"}, data)
        shown: dict[str, Any] = to_dict(event)
        return shown

    def _lineage(self, e: StoredEvent, shown: dict[str, Any],
                 keys_of: KeyFilter | None = None) -> dict[str, Any] | None:
        """The OpenLineage events of the view versions and refreshes this
        change wrote (None: none), redacted for the reader as the routes
        redact (core.redact)."""
        visible = keys_of(e.ref) if keys_of is not None else None
        runs = []
        for c in shown["data"].get("commits", []):
            for op in c["operations"]:
                if op["op"] == "PUT" and op.get("type") in ("ICEBERG_VIEW", "MATERIALIZED_VIEW"):
                    runs += self._view_runs(e, c, ContentKey(tuple(op["key"])), shown["time"],
                                            visible)
        if not runs:
            return None
        event = CloudEvent({"id": str(e.seq), "source": source(), "type": LINEAGE,
                            "subject": e.ref, "time": shown["time"],
                            "datacontenttype": "application/json"}, {"runEvents": runs})
        out: dict[str, Any] = to_dict(event)
        return out

    def _view_runs(self, e: StoredEvent, commit: dict[str, Any], key: ContentKey,
                   time_iso: str, visible: Readable | None = None) -> list[dict[str, Any]]:
        """A run for a view version this commit wrote (its version differs
        from the one before), and one for a refresh it brought."""
        # Imported here: openlineage-python costs a quarter of a second to
        # import, and only a reader of lineage events needs it.
        from catalog.feed.lineage_events import refresh_run_event, view_run_event

        store = self.catalog.store
        try:
            value = store.contents("@" + commit["hash"], [key]).get(key)
            if not isinstance(value, IcebergView | MaterializedView):
                return []
            parents = commit.get("parents") or ()
            before = store.contents("@" + parents[0], [key]).get(key) if parents else None
            mv = (self.catalog.files.mv(value.metadata_location)
                  if isinstance(value, MaterializedView) else None)
            meta = view_part(mv) if mv is not None else \
                self.catalog.files.view(value.metadata_location)[0]
            schema = next((sc for sc in meta.schemas if sc.schema_id == value.schema_id),
                          meta.schemas[-1])
        except Exception:  # gone since (gc): nothing to say about it
            return []
        runs = []
        if type(before) is not type(value) or before.version_id != value.version_id:
            runs.append(view_run_event(value, key.elements, schema, e.ref, source(), e.seq,
                                       time_iso, visible))
        if isinstance(value, MaterializedView) and mv is not None and value.refresh_id >= 0 and (
                not isinstance(before, MaterializedView)
                or before.refresh_id != value.refresh_id):
            refresh = mv.current_refresh()
            if refresh is not None and refresh.refresh_id == value.refresh_id:
                runs.append(refresh_run_event(value, key.elements, schema, refresh, e.ref,
                                              source(), e.seq, time_iso, visible))
        return runs

    def _detailed(self, commit_hash: str, ops: Sequence[dict[str, Any]],
                  visible: Readable | None = None) -> list[dict[str, Any]]:
        """Each PUT with what its value says: a table's snapshot and summary,
        a view's version, dialects and status at the commit (its reasons as
        ``visible`` may see them). A commit garbage collection removed keeps
        what the event stored."""
        ops = self._invalidated(commit_hash, ops, visible)
        puts = [op for op in ops if op["op"] == "PUT"]
        if not puts:
            return list(ops)
        reader = self.catalog.store.reader
        try:
            record = reader.commit(commit_hash)
            entries = {op.key.elements: op.entry for op in record.operations
                       if op.entry is not None}
            values = reader.load_contents(entries.values())
        except Exception:
            return list(ops)
        put = {tuple(op["key"]): values.get(e.value_hash) for op in ops
               if (e := entries.get(tuple(op["key"]))) is not None}
        views = {ContentKey(k): v for k, v in put.items()
                 if isinstance(v, IcebergView | MaterializedView)}
        try:
            found = statuses(self.catalog, f"@{commit_hash}", views) if views else {}
        except Exception:  # a base's metadata file gone since (gc): no status to give
            found = {}
        status = {k.elements: s for k, s in found.items()}
        out = []
        for op in ops:
            key = tuple(op["key"])
            value = put.get(key)
            if value is None:
                out.append(op)
                continue
            facts = self._value_facts(value)
            if key in status:
                facts |= _status_facts(status[key].seen_by(visible))
            out.append({**op, **facts})
        return out

    def _invalidated(self, commit_hash: str, ops: Sequence[dict[str, Any]],
                     visible: Readable | None) -> list[dict[str, Any]]:
        """A drop's DELETE with the views it left invalid (recorded in its
        commit's properties: catalog.views.lifecycle), those the reader may read."""
        if not any(op["op"] == "DELETE" for op in ops):
            return list(ops)
        try:
            properties = self.catalog.store.reader.commit(commit_hash).properties
        except Exception:  # the commit is gone since (gc): what the event stored
            return list(ops)
        # Those the reader may read, as the log shows them (core.redact).
        shown = [list(k) for k in invalidated_views(properties, visible) or ()]
        if not shown:
            return list(ops)
        return [{**op, "invalidatedViews": shown} if op["op"] == "DELETE" else op
                for op in ops]

    def _value_facts(self, value: Any) -> dict[str, Any]:
        if isinstance(value, IcebergTable):
            facts: dict[str, Any] = {"snapshotId": value.snapshot_id,
                                     "metadataLocation": value.metadata_location}
            try:
                meta, _ = self.catalog.files.table(value.metadata_location)
                snap = meta.snapshot_by_id(value.snapshot_id) if value.snapshot_id >= 0 else None
                if snap is not None and snap.summary is not None:
                    facts["summary"] = {"operation": snap.summary.operation.value,
                                        **snap.summary.additional_properties}
                if snap is not None and snap.first_row_id is not None:  # format v3
                    facts["rowIds"] = {"first": snap.first_row_id, "added": snap.added_rows}
            except Exception:
                pass
            return facts
        if isinstance(value, MaterializedView | IcebergView):
            facts = {"versionId": value.version_id, "metadataLocation": value.metadata_location,
                     "dialects": sorted({a.dialect for a in value.analysis or []})}
            if isinstance(value, MaterializedView):
                facts["refresh"] = {"refreshId": value.refresh_id,
                                    "storageSnapshotId": value.snapshot_id}
            return facts
        return {}


def _status_facts(s: ViewStatus) -> dict[str, Any]:
    return {"status": s.status, "reasons": list(s.reasons)}
