"""The view audit: every version a view has had on a ref, when it became
current and stopped being current, which commit brought it, who made it, and
how its SQL changed.

It follows the view's content id over every parent, so renames (same id,
new key) and merges (the merged-in side's commits) are part of it; the
change index (store.changes) names those commits, so the cost follows the
view's own changes, not the history's length. Each
commit that put the view is read at that commit; consecutive commits that left
the current version alone (properties, renames, the merge commit that carried
it over) collapse into one entry. "Became current" is the version-log time
in that commit's metadata (the catalog's clock), else the commit's time.
Each version's status is the one it had when it became current (at the
commit that brought it); the page's is the view's at the ref now.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from datetime import datetime

from pyiceberg.view.metadata import ViewMetadata, ViewVersion

from catalog.kernel import Catalog
from catalog.views.status import status
from core.commits import Commit, OpKind, ResolvedRef
from core.content import IcebergView, MaterializedView
from core.errors import bad_request, no_such_view
from core.instants import from_micros, to_micros
from core.keys import ContentKey
from core.mv.metadata import Refresh
from core.pages import clamp_page_size, decode_token, encode_token
from core.refs import RefSpec
from core.sql.stored import DialectAnalysis
from core.sql.validity import ViewStatus
from core.views import current_version, sql_representations


@dataclass(slots=True)
class _Step:
    commit: Commit
    key: ContentKey
    version: ViewVersion
    became_ms: int
    content: IcebergView | MaterializedView


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One version the view had: when it became current (and stopped), the
    commit that brought it, its SQL per dialect with the diff from the
    version before, and what it read as analysed when it was written."""

    version_id: int
    current_from_ms: int
    current_until_ms: int | None
    key: ContentKey
    commit: Commit
    representations: dict[str, str]
    sql_diff: dict[str, str]
    summary: dict[str, str]
    default_namespace: list[str]
    analysis: list[DialectAnalysis]
    # Whether it held when it became current (catalog.views.status).
    status: ViewStatus


@dataclass(frozen=True, slots=True)
class ViewHistory:
    key: ContentKey
    content_id: str | None
    type: str
    versions: list[AuditEntry]
    # The page token of the next page (None: the last page).
    token: str | None
    resolved: ResolvedRef
    # Whether the view holds at the ref now (catalog.views.status).
    status: ViewStatus
    # A materialized view's refreshes, oldest first (None for a view).
    refreshes: list[Refresh] | None = None
    # Whether older versions were left out: past every reference's retention
    # (and from when the ref's own history has expired, when it has a policy).
    history_expired: bool = False
    expired_before: datetime | None = None


# Versions per page when the caller does not say (at most MAX_PAGE).
DEFAULT_PAGE = 100


def view_history(catalog: Catalog, ref: RefSpec, key: ContentKey, since_ms: int | None,
                 until_ms: int | None, page_token: str | None = None,
                 max_records: int | None = None) -> ViewHistory:
    """One page of the view's versions, oldest first. The commits that put
    the view come from the change index (cost: the view's own changes);
    only the page's commits are read, plus one on each side (the previous
    version for the diff, the next for ``currentUntil``)."""
    store = catalog.store
    size = clamp_page_size(max_records or DEFAULT_PAGE)
    resolved, found = store.lookup(ref, [key])
    view = found.get(key)
    if not isinstance(view, IcebergView | MaterializedView):
        raise no_such_view(".".join(key.elements))
    commits = list(reversed(store.lineage(f"@{resolved.hash}", view.id)))  # type: ignore[arg-type]
    # Versions only history past retention held are not read (their files
    # may be gone): the audit goes back to the cutoff and says so.
    kept = store.retention.retained_among([c.hash for c in commits])
    expired = len(kept) < len(commits)
    if expired:
        commits = [c for c in commits if c.hash in kept]
    start = 0
    if page_token:
        wanted = decode_token(page_token)
        start = next((i for i, c in enumerate(commits) if c.hash == wanted), -1)
        if start < 0:
            raise bad_request(f"Invalid page token {page_token!r} for the history of "
                              f"{'.'.join(key.elements)} on this reference")
    before = _step(catalog, commits[start - 1], view.id) if start else None  # type: ignore[arg-type]
    out: list[AuditEntry] = []
    current: _Step | None = None
    token = None
    for commit in commits[start:]:
        step = _step(catalog, commit, view.id)  # type: ignore[arg-type]
        if step is None or (current is not None
                            and current.version.version_id == step.version.version_id):
            continue  # the same version carried on (properties, a rename, a merge)
        if current is not None:
            if _within(current, step.became_ms, since_ms, until_ms):
                if len(out) == size:
                    token = encode_token(current.commit.hash)
                    break
                out.append(_entry(catalog, current, step.became_ms,
                                  before.version if before else None))
            before = current
        current = step
    else:
        if current is not None and _within(current, None, since_ms, until_ms):
            if len(out) == size:
                token = encode_token(current.commit.hash)
            else:
                out.append(_entry(catalog, current, None, before.version if before else None))
    # A materialized view's refreshes: every one is kept in the file at the head.
    refreshes = (list(catalog.files.mv(view.metadata_location).refreshes)
                 if isinstance(view, MaterializedView) else None)
    cutoff = store.retention.cutoff_of(resolved.name) if expired and resolved.name else None
    return ViewHistory(key, view.id, view.type, out, token, resolved,
                       status(catalog, f"@{resolved.hash}", key, view), refreshes,
                       history_expired=expired,
                       expired_before=from_micros(cutoff) if cutoff is not None else None)


def _step(catalog: Catalog, commit: Commit, content_id: str) -> _Step | None:
    op = next(o for o in commit.operations if o.kind is OpKind.PUT
              and o.entry is not None and o.entry.content_id == content_id)
    then = catalog.store.contents(f"@{commit.hash}", [op.key]).get(op.key)
    if not isinstance(then, IcebergView | MaterializedView):
        return None
    meta = catalog.files.view_of(then)
    return _Step(commit, op.key, current_version(meta), _became(meta, commit), then)


def _within(step: _Step, until: int | None, since_ms: int | None, until_ms: int | None) -> bool:
    """Whether the version was current at some point in the window."""
    if since_ms is not None and until is not None and until <= since_ms:
        return False
    return not (until_ms is not None and step.became_ms > until_ms)


def _became(meta: ViewMetadata, commit: Commit) -> int:
    times = [e.timestamp_ms for e in meta.version_log
             if e.version_id == meta.current_version_id]
    return times[-1] if times else to_micros(commit.created_at) // 1000


def _sql(v: ViewVersion) -> dict[str, str]:
    return {r.dialect.lower(): r.sql for r in sql_representations(v)}


def _entry(catalog: Catalog, step: _Step, until_ms: int | None, before: ViewVersion | None,
           ) -> AuditEntry:
    sql = _sql(step.version)
    old = _sql(before) if before else {}
    diffs = {}
    for dialect in sorted(set(sql) | set(old)):
        a, b = old.get(dialect, ""), sql.get(dialect, "")
        diffs[dialect] = "\n".join(difflib.unified_diff(
            a.splitlines(), b.splitlines(), lineterm="",
            fromfile=f"v{before.version_id}/{dialect}" if before else "/dev/null",
            tofile=f"v{step.version.version_id}/{dialect}"))
    return AuditEntry(step.version.version_id, step.became_ms, until_ms, step.key, step.commit,
                      sql, diffs, dict(step.version.summary),
                      list(step.version.default_namespace), list(step.content.analysis or []),
                      status(catalog, f"@{step.commit.hash}", step.key, step.content))
