"""Domain values as Nessie v2 JSON, field for field."""

from __future__ import annotations

from typing import Any

from api.v2 import nessie as nessie_client
from api.v2 import redact
from api.v2.redact import Readable
from catalog.mviews.mviews import Described
from catalog.mviews.refresh import RefreshPlan
from catalog.undo.restore import FROM_COMMIT, FROM_REF, FROM_VERSION
from catalog.views.audit import AuditEntry, ViewHistory
from core.commits import (
    Commit,
    CommitOperation,
    DiffEntry,
    Entry,
    MergeResult,
    OpKind,
    Reference,
    ResolvedRef,
)
from core.content import Content
from core.instants import format_instant, from_micros
from core.keys import ContentKey
from core.mv.metadata import view_part
from core.sql.incremental import DELTA, DELTA_RESULT, STORED
from core.sql.validity import ViewStatus
from core.views import current_version, sql_representations


def key_json(key: ContentKey) -> dict[str, Any]:
    return {"elements": list(key.elements)}


def content_json(content: Content | None, readable: Readable | None = None,
                 key: ContentKey | None = None, nessie: bool = False,
                 ) -> dict[str, Any] | None:
    """``readable``: the keys the caller may read (None: all); what a view's
    analysis says of the others is left out (api.v2.redact). ``key``: where
    the value is (a namespace answers its elements); ``nessie``: the caller
    is a Nessie client, answered in Nessie's fields only (api.v2.nessie)."""
    if content is None:
        return None
    shown = redact.content(content.to_json(), readable)
    return None if shown is None else nessie_client.content_out(shown, key, nessie)


def reference_json(ref: Reference) -> dict[str, Any]:
    return {"type": ref.type.value, "name": ref.name, "hash": ref.hash}


def effective_json(resolved: ResolvedRef) -> dict[str, Any]:
    """The reference a read was answered from (detached when pinned by hash)."""
    if resolved.name is None or resolved.type is None:
        return {"type": "DETACHED", "name": "DETACHED", "hash": resolved.hash}
    return {"type": resolved.type.value, "name": resolved.name, "hash": resolved.hash}


def commit_meta_json(c: Commit, readable: Readable | None = None) -> dict[str, Any]:
    """``readable``: the keys the caller may read on the reference it reads
    the commit through (None: all); its message, authors and properties
    are shown only to a reader of all of it (api.v2.redact.commit_meta)."""
    at = format_instant(c.created_at)
    authors = [c.author] if c.author else []
    return redact.commit_meta({
        "hash": c.hash, "committer": c.committer, "authors": authors, "allSignedOffBy": [],
        "message": c.message, "commitTime": at, "authorTime": at,
        "allProperties": {k: [v] for k, v in c.properties.items()},
        "parentCommitHashes": list(c.parents),
    }, readable)


def log_entry_json(c: Commit, fetch_all: bool,
                   values: dict[ContentKey, Content] | None = None,
                   nessie: bool = False) -> dict[str, Any]:
    """``values``: what each key the commit put holds at it (a PUT carries its
    content, as Nessie's model requires: its client cannot read one without)."""
    out: dict[str, Any] = {"commitMeta": commit_meta_json(c),
                           "parentCommitHash": c.parent}
    if fetch_all:
        out["additionalParents"] = list(c.parents[1:])
        out["operations"] = [_operation_json(op, values or {}, nessie) for op in c.operations
                             if not nessie or op.entry is None
                             or op.entry.type in nessie_client.SHOWN]
    return out


def _operation_json(op: CommitOperation, values: dict[ContentKey, Content],
                    nessie: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"type": op.kind.value, "key": key_json(op.key)}
    if op.kind is OpKind.PUT and op.key in values:
        out["content"] = content_json(values[op.key], None, op.key, nessie)
    return out


def entry_json(e: Entry, readable: Readable | None = None, nessie: bool = False,
               ) -> dict[str, Any]:
    out: dict[str, Any] = {"type": e.type.value, "name": key_json(e.key),
                           "contentId": e.content_id}
    if e.content is not None:
        out["content"] = content_json(e.content, readable, e.key, nessie)
    return out


def diff_json(d: DiffEntry, nessie: bool = False) -> dict[str, Any]:
    return {"key": key_json(d.key), "from": content_json(d.before, None, d.key, nessie),
            "to": content_json(d.after, None, d.key, nessie)}


def merge_json(r: MergeResult) -> dict[str, Any]:
    return {
        "resultantTargetHash": r.result_hash or r.expected_target_hash,
        "commonAncestor": r.common_ancestor,
        "targetBranch": r.target_branch,
        "effectiveTargetHash": r.expected_target_hash,
        "expectedHash": r.expected_target_hash,
        "wasApplied": r.applied,
        "wasSuccessful": not r.conflicts,
        # Whether the same merge may land if sent again (its conflicts came
        # only from the target moving while it was worked out).
        "retryable": bool(r.conflicts) and all(c.retryable for c in r.conflicts),
        "details": [
            {"key": key_json(d.key), "mergeBehavior": d.behavior.value,
             "outcome": d.outcome.value,
             **({"conflict": {"conflictType": d.conflict.type.value,
                              "key": key_json(d.conflict.key) if d.conflict.key else None,
                              "message": d.conflict.message,
                              "retryable": d.conflict.retryable}} if d.conflict else {}),
             **({"combined": d.combined} if d.combined is not None else {}),
             **({"conflictDetails": d.conflict_details}
                if d.conflict_details is not None else {})}
            for d in r.details],
    }


def page_json(items_name: str, items: list[Any], token: str | None) -> dict[str, Any]:
    return {"hasMore": token is not None, "token": token, items_name: items}


def status_json(s: ViewStatus) -> dict[str, Any]:
    """A view's status (catalog.views.status), redacted by the caller."""
    return {"status": s.status, "reasons": list(s.reasons), "dialect": s.dialect}


def _instant_ms(ms: int) -> str:
    return format_instant(from_micros(ms * 1000))


def view_history_json(h: ViewHistory) -> dict[str, Any]:
    """A page of the view audit (api/routes/audit.py)."""
    out: dict[str, Any] = {
        "key": key_json(h.key), "contentId": h.content_id, "type": h.type,
        # Whether the view holds at the ref now.
        **status_json(h.status),
        "versions": [audit_entry_json(e) for e in h.versions],
        "hasMore": h.token is not None, "token": h.token}
    if h.history_expired:
        # Older versions were left out: past retention (docs/operations.md).
        out["historyExpired"] = True
        if h.expired_before is not None:
            out["historyExpiredBefore"] = format_instant(h.expired_before)
    if h.refreshes is not None:
        out["refreshes"] = [{
            "refreshId": r.refresh_id, "versionId": r.version_id,
            "refreshedAt": _instant_ms(r.timestamp_ms), "kind": r.kind,
            "sourceCommit": r.source_commit, "snapshotId": r.snapshot_id,
            "baseTables": {k: b.snapshot_reference for k, b in r.base_tables.items()}}
            for r in h.refreshes]
    out["effectiveReference"] = effective_json(h.resolved)
    return out


def restored_from(summary: dict[str, str]) -> dict[str, Any] | None:
    """Where a restored view version came from (catalog.undo.restore), if it was."""
    if FROM_COMMIT not in summary:
        return None
    version = summary.get(FROM_VERSION)
    return {"ref": summary.get(FROM_REF), "commit": summary[FROM_COMMIT],
            "versionId": int(version) if version and version.isdigit() else None}


def audit_entry_json(e: AuditEntry) -> dict[str, Any]:
    c = e.commit
    return {
        "versionId": e.version_id,
        "currentFrom": _instant_ms(e.current_from_ms),
        "currentUntil": _instant_ms(e.current_until_ms) if e.current_until_ms is not None
        else None,
        "key": key_json(e.key),
        "commit": {"hash": c.hash, "author": c.author, "committer": c.committer,
                   "message": c.message, "commitTime": format_instant(c.created_at)},
        "representations": e.representations,
        "sqlDiff": e.sql_diff,
        "summary": e.summary,
        "restoredFrom": restored_from(e.summary),
        "defaultNamespace": e.default_namespace,
        # Whether it held when it became current.
        **status_json(e.status),
        # What this version read, as analysed when it was written.
        "analysis": [{"dialect": a.dialect, "status": a.status, "reasons": a.reasons,
                      "dependencies": [{"key": d.key, "contentId": d.content_id,
                                        "type": d.type} for d in a.dependencies],
                      "unresolved": a.unresolved}
                     for a in e.analysis],
    }


def refresh_plan_json(p: RefreshPlan) -> dict[str, Any]:
    """The plan an engine follows to refresh a materialized view."""
    d = p.decision
    out: dict[str, Any] = {
        "key": list(p.key.elements), "branch": p.branch, "hash": p.hash,
        "pinnedReference": p.pinned_reference, "versionId": p.version_id,
        "dialect": p.dialect, "sql": p.sql, "defaultNamespace": p.default_namespace,
        "baseTables": p.base_tables, "views": p.views, "kind": d.kind, "reason": d.reason}
    if d.incremental is not None:
        i = d.incremental
        out["incremental"] = {
            "shape": i.shape, "table": i.table, "fromSnapshot": i.from_snapshot,
            "toSnapshot": i.to_snapshot, "deltaView": DELTA, "storedView": STORED,
            "deltaResultView": DELTA_RESULT, "deltaSql": i.delta_sql, "mergeSql": i.merge_sql}
    return out


def mv_summary_json(d: Described) -> dict[str, Any]:
    """A materialized view: its definition, storage snapshot and refreshes."""
    meta, c = d.meta, d.content
    version = current_version(view_part(meta))
    schema = next(s for s in meta.schemas if s.schema_id == version.schema_id)
    reps = sql_representations(version)
    return {
        "key": list(d.key.elements), "contentId": c.id, "metadataLocation": c.metadata_location,
        "versionId": meta.current_version_id, "currentRefreshId": meta.current_refresh_id,
        "snapshotId": meta.current_snapshot_id,
        "defaultNamespace": list(version.default_namespace or []),
        "representations": [{"dialect": r.dialect, "sql": r.sql} for r in reps],
        "columns": [{"name": f.name, "type": str(f.field_type)} for f in schema.fields],
        "properties": meta.properties,
        "refreshes": [r.model_dump(mode="json", by_alias=True) for r in meta.refreshes],
    }
