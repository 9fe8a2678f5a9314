"""The view audit: every version a view has had on a ref, when it became
current and stopped being current, which commit brought it, who made it, and
how its SQL changed.

The walk follows the view's content id over every parent, so renames (same
id, new key) and merges (the merged-in side's commits) are part of it. Each
commit that put the view is read at that commit; consecutive commits that left
the current version alone (properties, renames, the merge commit that carried
it over) collapse into one entry. "Became current" is the version-log time
in that commit's metadata (the catalog's clock), else the commit's time.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

from pyiceberg.view.metadata import ViewMetadata, ViewVersion

from api.catalog.service import Catalog
from api.errors import no_such_view
from api.v2.shapes import effective_json, key_json
from core.commits import Commit, OpKind
from core.content import IcebergView
from core.instants import format_instant, from_micros, to_micros
from core.keys import ContentKey
from core.refs import RefSpec
from core.views import current_version


@dataclass(slots=True)
class _Step:
    commit: Commit
    key: ContentKey
    version: ViewVersion
    became_ms: int
    content: IcebergView


def view_history(catalog: Catalog, ref: RefSpec, key: ContentKey, since_ms: int | None,
                 until_ms: int | None) -> dict[str, Any]:
    store = catalog.store
    resolved, found = store.lookup(ref, [key])
    view = found.get(key)
    if not isinstance(view, IcebergView):
        raise no_such_view(".".join(key.elements))
    steps: list[_Step] = []
    for commit in reversed(store.lineage(f"@{resolved.hash}", view.id)):  # type: ignore[arg-type]
        op = next(o for o in commit.operations if o.kind is OpKind.PUT
                  and o.entry is not None and o.entry.content_id == view.id)
        then = store.contents(f"@{commit.hash}", [op.key]).get(op.key)
        if not isinstance(then, IcebergView):
            continue
        meta = catalog.files.view(then.metadata_location)[0]
        version = current_version(meta)
        if steps and steps[-1].version.version_id == version.version_id:
            continue
        steps.append(_Step(commit, op.key, version, _became(meta, commit), then))
    out = []
    for i, step in enumerate(steps):
        until = steps[i + 1].became_ms if i + 1 < len(steps) else None
        if since_ms is not None and until is not None and until <= since_ms:
            continue
        if until_ms is not None and step.became_ms > until_ms:
            continue
        before = steps[i - 1].version if i else None
        out.append(_entry(step, until, before))
    return {"key": key_json(key), "contentId": view.id, "versions": out,
            "effectiveReference": effective_json(resolved)}


def _became(meta: ViewMetadata, commit: Commit) -> int:
    times = [e.timestamp_ms for e in meta.version_log
             if e.version_id == meta.current_version_id]
    return times[-1] if times else to_micros(commit.created_at) // 1000


def _sql(v: ViewVersion) -> dict[str, str]:
    return {r.root.dialect.lower(): r.root.sql for r in v.representations}


def _entry(step: _Step, until_ms: int | None, before: ViewVersion | None) -> dict[str, Any]:
    c = step.commit
    sql = _sql(step.version)
    old = _sql(before) if before else {}
    diffs = {}
    for dialect in sorted(set(sql) | set(old)):
        a, b = old.get(dialect, ""), sql.get(dialect, "")
        diffs[dialect] = "\n".join(difflib.unified_diff(
            a.splitlines(), b.splitlines(), lineterm="",
            fromfile=f"v{before.version_id}/{dialect}" if before else "/dev/null",
            tofile=f"v{step.version.version_id}/{dialect}"))
    return {
        "versionId": step.version.version_id,
        "currentFrom": _instant(step.became_ms),
        "currentUntil": _instant(until_ms) if until_ms is not None else None,
        "key": key_json(step.key),
        "commit": {"hash": c.hash, "author": c.author, "committer": c.committer,
                   "message": c.message, "commitTime": format_instant(c.created_at)},
        "representations": sql,
        "sqlDiff": diffs,
        "summary": dict(step.version.summary),
        "defaultNamespace": list(step.version.default_namespace),
        # What this version read, as analysed when it was written.
        "analysis": [{"dialect": a.dialect, "status": a.status, "reasons": a.reasons,
                      "dependencies": [{"key": d.key, "contentId": d.content_id,
                                        "type": d.type} for d in a.dependencies]}
                     for a in step.content.analysis or []],
    }


def _instant(ms: int) -> str:
    return format_instant(from_micros(ms * 1000))
