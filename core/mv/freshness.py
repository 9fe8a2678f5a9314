"""Whether a materialized view's stored rows are those its SQL gives now.

Pure: the caller looks up, at one commit, every base table the view reads
(through nested views) and every nested view's version, and says what time
it is there (the instant read as of, or the clock). The rules:

- never refreshed, or the current refresh computed another version of the
  view (a replace), or a nested view it reads changed: stale, and the stored
  rows are never served (they answer another query);
- a base table whose current snapshot is not the one the refresh read:
  stale since the first snapshot after it (the snapshot log's time), so a
  reader that accepts ``max-staleness-ms`` of that still gets the stored rows;
- the SQL no longer resolves (a base dropped, a column gone): invalid.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from core.mv.metadata import CONTENT_ID, MaterializedViewMetadata, Refresh

Status = Literal["fresh", "stale", "invalid"]


@dataclass(frozen=True, slots=True)
class TableNow:
    """A base table as the commit holds it: its current snapshot and its
    snapshot log (snapshot id, time in ms), oldest first."""

    content_id: str
    snapshot_id: int
    log: tuple[tuple[int, int], ...] = ()
    last_updated_ms: int = 0


@dataclass(frozen=True, slots=True)
class BaseState:
    identifier: str
    snapshot_read: int | None
    snapshot_now: int | None
    changed_at_ms: int | None = None

    @property
    def fresh(self) -> bool:
        return self.snapshot_read == self.snapshot_now


@dataclass(frozen=True, slots=True)
class Freshness:
    status: Status
    reasons: list[str]
    refresh: Refresh | None
    bases: list[BaseState] = field(default_factory=list)
    # ms since the first change the stored rows miss; None: they answer
    # another query (or there are none), so no staleness bound admits them.
    stale_for_ms: int | None = 0
    # Per reason, the base table or view it is about (None: the view itself,
    # or not one object): an answer hides reasons about what its reader may
    # not read.
    subjects: list[str | None] = field(default_factory=list)

    def subject(self, i: int) -> str | None:
        return self.subjects[i] if i < len(self.subjects) else None

    def servable(self, max_staleness_ms: int) -> bool:
        """Whether a reader accepting ``max_staleness_ms`` gets the stored rows."""
        if self.status == "fresh":
            return True
        return (self.status == "stale" and self.stale_for_ms is not None
                and self.stale_for_ms <= max_staleness_ms)

    def to_json(self, now_ms: int) -> dict[str, Any]:
        r = self.refresh
        return {
            "status": self.status, "reasons": self.reasons, "staleForMs": self.stale_for_ms,
            "refresh": None if r is None else {
                "refreshId": r.refresh_id, "versionId": r.version_id,
                "timestampMs": r.timestamp_ms, "kind": r.kind,
                "sourceCommit": r.source_commit, "snapshotId": r.snapshot_id},
            "baseTables": [{
                "identifier": b.identifier, "snapshotRead": b.snapshot_read,
                "snapshotCurrent": b.snapshot_now, "fresh": b.fresh,
                "changedAtMs": b.changed_at_ms,
                "changedAgoMs": None if b.changed_at_ms is None else now_ms - b.changed_at_ms,
            } for b in self.bases]}


def changed_at(read: int, now: TableNow) -> int:
    """When the table first moved past the snapshot ``read``: the time of the
    next entry of its snapshot log; the table's last update when the log does
    not hold ``read`` (it was expired, or the table rewritten)."""
    seen = False
    for snapshot_id, ts in now.log:
        if seen and snapshot_id != read:
            return ts
        seen = seen or snapshot_id == read
    return now.log[-1][1] if now.log and not seen else now.last_updated_ms


def freshness(mv: MaterializedViewMetadata, tables: dict[str, TableNow | None],
              views: dict[str, int | None], invalid: list[str], now_ms: int) -> Freshness:
    """``tables``: every base table the current version reads, by identifier
    (None: absent); ``views``: every view it reads, by identifier, with its
    version now; ``invalid``: why its SQL no longer resolves (empty: it does)."""
    refresh = mv.current_refresh()
    if invalid:
        return Freshness("invalid", list(invalid), refresh, stale_for_ms=None)
    if refresh is None:
        return Freshness("stale", ["never refreshed"], None,
                         [BaseState(n, None, t.snapshot_id if t else None)
                          for n, t in sorted(tables.items())], None)
    reasons: list[str] = []
    subjects: list[str | None] = []

    def why(text: str, subject: str | None) -> None:
        reasons.append(text)
        subjects.append(subject)

    if refresh.version_id != mv.current_version_id:
        why(f"the definition changed: refresh {refresh.refresh_id} computed version "
            f"{refresh.version_id}, version {mv.current_version_id} is current", None)
    for name, version in sorted(views.items()):
        was = refresh.views.get(name)
        if was != version:
            why(f"view {name} changed since the refresh (version {was} → {version})", name)
    bases: list[BaseState] = []
    first_change: int | None = None
    for name in sorted(set(tables) | set(refresh.base_tables)):
        read = refresh.base_tables.get(name)
        now = tables.get(name)
        if read is None or now is None:
            what = "now read" if read is None else "no longer read"
            why(f"table {name} is {what} by the view", name)
            bases.append(BaseState(name, read.snapshot_reference if read else None,
                                   now.snapshot_id if now else None))
            continue
        if read.properties.get(CONTENT_ID, now.content_id) != now.content_id:
            why(f"table {name} was dropped and created again", name)
            bases.append(BaseState(name, read.snapshot_reference, now.snapshot_id))
            continue
        state = BaseState(name, read.snapshot_reference, now.snapshot_id)
        if not state.fresh:
            at = changed_at(read.snapshot_reference, now)
            state = BaseState(name, read.snapshot_reference, now.snapshot_id, at)
            first_change = at if first_change is None else min(first_change, at)
        bases.append(state)
    if reasons:  # another query's rows: no staleness bound admits them
        return Freshness("stale", reasons, refresh, bases, None, subjects)
    if first_change is None:
        return Freshness("fresh", [], refresh, bases, 0)
    moved = [b.identifier for b in bases if not b.fresh]
    return Freshness("stale", [f"table {n} changed since the refresh" for n in moved],
                     refresh, bases, max(0, now_ms - first_change), list(moved))


