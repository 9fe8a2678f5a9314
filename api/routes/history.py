"""Versioning API: the commit log, and commits, merges and transplants."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from fastapi import APIRouter, Query, Request, Response

from api.auth.guard import guard_of
from api.deps import commit_author, json_response, principal
from api.paths import ref_param
from api.routes.trees import name_and_hash, require, require_on_protected, store_of
from api.v2.requests import CommitBody, MergeBody, OperationBody, TransplantBody
from api.v2.shapes import key_json, log_entry_json, merge_json, page_json, reference_json
from catalog.analysis import with_analysis
from catalog.content_merge import Combined, combine, combiner, discard, report
from catalog.merge_impact import invalidated_views, merge_cycle
from catalog.service import Catalog
from core.auth import Privilege
from core.commits import (
    CommitMeta,
    Delete,
    KeyMergeDetail,
    KeyOutcome,
    MergeBehavior,
    MergeConflictError,
    MergeResult,
    Operation,
    Put,
    Resolution,
    Unchanged,
)
from core.conflicts import CommitConflictError, Conflict, ConflictType
from core.content import parse_content
from core.errors import bad_request
from core.instants import parse_instant, to_micros
from core.keys import ContentKey
from core.sql.budget import Deadline

router = APIRouter(prefix="/api/v2/trees/{ref}/history")


@router.get("")
def history(request: Request, ref: str,
            page_token: str | None = Query(None, alias="pageToken"),
            max_records: int | None = Query(None, alias="maxRecords", ge=1),
            fetch: str | None = None, author: str | None = None, key: str | None = None,
            since: str | None = None, until: str | None = None) -> Response:
    """First-parent history, newest first. ``fetch=ALL`` adds each commit's
    operations and extra parents; ``author``, ``key`` (path form) and the
    ``since``/``until`` instants filter it."""
    if fetch not in (None, "MINIMAL", "ALL"):
        raise bad_request(f"Invalid fetch option {fetch!r}: expected MINIMAL or ALL")
    page = store_of(request).log(
        ref_param(ref), page_token, max_records,
        key=ContentKey.parse(key) if key else None, author=author,
        since_us=to_micros(parse_instant(since)) if since else None,
        until_us=to_micros(parse_instant(until)) if until else None)
    entries = [log_entry_json(c, fetch == "ALL") for c in page.items]
    return json_response(page_json("logEntries", entries, page.next_token))


def _operation(op: OperationBody) -> Operation:
    key = op.key.key()
    if op.type == "PUT":
        if op.content is None:
            raise bad_request(f"PUT of '{key}' has no content")
        expected = parse_content(op.expected_content) if op.expected_content else None
        return Put(key, parse_content(op.content), expected)
    if op.type == "DELETE":
        return Delete(key, parse_content(op.expected_content) if op.expected_content else None)
    return Unchanged(key)


def _analysed(catalog: Catalog, branch: str, op: Operation, deadline: Deadline) -> Operation:
    """A view put by a commit is analysed at the branch head, as one written
    through the Iceberg API is (all of a commit's views within one budget)."""
    if isinstance(op, Put):
        catalog.files.require_put(op)
        return Put(op.key, with_analysis(catalog, branch, op.key, op.content, deadline),
                   op.expected)
    return op


@router.post("/commit")
def commit(request: Request, ref: str, body: CommitBody) -> Response:
    branch, expected = name_and_hash(ref, "A commit")
    store = store_of(request)
    catalog = request.app.state.services.catalog
    parsed = [_operation(o) for o in body.operations]
    guard = guard_of(request)
    if guard is not None:  # before any file is looked at
        for op in parsed:
            guard.require(request, Privilege.WRITE, branch, op.key.elements)
    deadline = Deadline()
    operations = [_analysed(catalog, branch, op, deadline) for op in parsed]
    meta = CommitMeta(body.commit_meta.message,
                      commit_author(request, body.commit_meta.first_author, branch),
                      properties=dict(body.commit_meta.properties))
    result = store.commit(branch, operations, meta,
                          expected_hash=expected, principal=principal(request))
    head = store.get_reference(branch)
    return json_response({
        "targetBranch": reference_json(head) | {"hash": result.hash},
        "addedContents": [{"key": key_json(k), "contentId": cid}
                          for k, cid in result.assigned_ids.items()]})


def _merge_answer(body: MergeBody | TransplantBody, run: Callable[[], MergeResult],
                  request: Request | None = None) -> Response:
    try:
        result = run()
    except MergeConflictError as e:
        if body.return_conflict_as_result:
            return json_response(merge_json(e.result))
        raise
    out = merge_json(result)
    if request is not None and result.dry_run:
        # What would break on the target: a publisher sees it before merging.
        out["invalidatedViews"] = invalidated_views(
            request.app.state.services.catalog, result.expected_target_hash, result)
    return json_response(out)


@router.post("/merge")
def merge(request: Request, ref: str, body: MergeBody) -> Response:
    branch, expected = name_and_hash(ref, "A merge")
    source = body.from_ref_name + (f"@{body.from_hash}" if body.from_hash else "")
    message = (body.commit_meta.message if body.commit_meta else None) or body.message or \
        f"merge {body.from_ref_name} into {branch}"
    author = commit_author(
        request, body.commit_meta.first_author if body.commit_meta else None, branch)
    require(request, Privilege.READ, source)
    if MergeBehavior.FORCE in (body.default_key_merge_mode, *body.modes().values()):
        require_on_protected(request, branch, "a forced merge into")
    store = store_of(request)

    def run(dry_run: bool, raise_on_conflict: bool, expected: str | None = expected,
            resolutions: dict[ContentKey, Resolution] | None = None) -> MergeResult:
        return store.merge(
            source, branch, expected_hash=expected, default_mode=body.default_key_merge_mode,
            key_modes=body.modes(), dry_run=dry_run, meta=CommitMeta(message, author),
            principal=principal(request), raise_on_conflict=raise_on_conflict,
            resolutions=resolutions)

    catalog = request.app.state.services.catalog
    raising = not body.return_conflict_as_result
    result: MergeResult | None = None
    for _ in range(_CONTENT_MERGE_ATTEMPTS):
        # A dry run first: each branch may hold half of a view read-cycle, and
        # keys changed on both sides may be combined (catalog.content_merge).
        preview = run(True, False)
        combined = combine(catalog, preview, write=not body.dry_run) \
            if body.content_merge else Combined()
        shown = report(preview, combined)
        cycle = merge_cycle(catalog, shown.expected_target_hash, shown) \
            if not shown.conflicts else None
        if cycle:
            discard(catalog, combined)
            raise CommitConflictError([Conflict(
                ConflictType.VALUE_DIFFERS, cycle[0],
                "the merge would make views read themselves: "
                + " → ".join(str(k) for k in cycle))])
        if body.dry_run or shown.conflicts:
            discard(catalog, combined)  # a refused merge keeps none of its files
            return _merge_answer(body, lambda shown=shown: _raise_or(shown, raising), request)
        try:
            # Against the head the combinations were worked out at.
            result = run(False, False, shown.expected_target_hash, combined.resolutions)
        except BaseException:
            discard(catalog, combined)
            raise
        if not result.applied:
            discard(catalog, combined)
        result = _moved(result, shown)
        if result.conflicts and all(c.retryable for c in result.conflicts):
            continue  # the target moved under a combination: work it out again
        return _merge_answer(body, lambda result=result: _raise_or(result, raising), request)
    # Abandoned: the target kept moving. The answer names each key, says so,
    # and is marked retryable (a client tells it from "cannot be merged").
    assert result is not None
    gave_up = replace(result, details=[_abandoned(d) for d in result.details])
    return _merge_answer(body, lambda: _raise_or(gave_up, raising), request)


def _moved(result: MergeResult, preview: MergeResult) -> MergeResult:
    """Conflicts the merge met that its dry run did not: the target changed
    those keys in between, so the merge was worked out without them (no
    combination was tried); sending it again works them out."""
    seen = {c.key for c in preview.conflicts}
    details = []
    for d in result.details:
        c = d.conflict
        if c is not None and d.outcome is KeyOutcome.CONFLICT and not c.retryable and \
                c.key not in seen and c.type is ConflictType.VALUE_DIFFERS:
            d = replace(d, conflict=replace(
                c, retryable=True, message=f"{c.message} (the target changed it after the "
                                           "merge was worked out)"))
        details.append(d)
    return replace(result, details=details)


def _abandoned(d: KeyMergeDetail) -> KeyMergeDetail:
    if d.conflict is None or not d.conflict.retryable:
        return d
    why = (f"the target changed under the combination of key '{d.key}' on each of "
           f"{_CONTENT_MERGE_ATTEMPTS} attempts: the merge was abandoned; send it again")
    return replace(d, conflict=replace(d.conflict, message=why),
                   conflict_details={**(d.conflict_details or {}), "combination": "abandoned",
                                     "reason": "target-moved",
                                     "attempts": _CONTENT_MERGE_ATTEMPTS})


# A combination is worked out at the target's head; if that moves before the
# merge lands, it is worked out again, this many times at most.
_CONTENT_MERGE_ATTEMPTS = 3


def _raise_or(result: MergeResult, raising: bool) -> MergeResult:
    if result.conflicts and raising:
        raise MergeConflictError(result)
    return result


@router.post("/transplant")
def transplant(request: Request, ref: str, body: TransplantBody) -> Response:
    branch, expected = name_and_hash(ref, "A transplant")
    for h in body.hashes_to_transplant:
        require(request, Privilege.READ, f"@{h}")
    if MergeBehavior.FORCE in (body.default_key_merge_mode, *body.modes().values()):
        require_on_protected(request, branch, "a forced transplant onto")
    catalog = request.app.state.services.catalog
    # Keys a transplanted commit and the target both changed are combined by
    # the merge's rules (catalog.content_merge), commit by commit.
    written: list[str] = []
    combine_one = combiner(catalog, not body.dry_run, written) if body.content_merge else None

    def run() -> MergeResult:
        try:
            result = store_of(request).transplant(
                body.hashes_to_transplant, branch, expected_hash=expected,
                default_mode=body.default_key_merge_mode, key_modes=body.modes(),
                dry_run=body.dry_run, principal=principal(request),
                raise_on_conflict=not body.return_conflict_as_result, combiner=combine_one)
        except BaseException:
            discard(catalog, Combined(files=written))
            raise
        if not result.applied:
            discard(catalog, Combined(files=written))
        return result

    return _merge_answer(body, run)
