"""Versioning API: the commit log, and commits, merges and transplants."""

from __future__ import annotations

from functools import partial
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response

from api.auth.guard import guard_of
from api.deps import (
    MaxRecords,
    NessieMaxRecords,
    NessiePageToken,
    VersioningPageToken,
    commit_author,
    json_response,
    principal,
    reads_of,
    services_of,
)
from api.idempotency import answering, once_of
from api.paging import Paging
from api.paths import ref_param
from api.routes.trees import (
    name_and_hash,
    name_and_maybe_hash,
    require,
    require_on_protected,
    versioning_of,
)
from api.v2 import nessie as nessie_client
from api.v2 import redact
from api.v2.filtered import NessieFilter, filtered_log, log_filter
from api.v2.redact import Readable
from api.v2.requests import CommitBody, MergeBody, OperationBody, TransplantBody
from api.v2.shapes import key_json, log_entry_json, merge_json, page_json, reference_json
from catalog.imports.checks import FileChecks
from catalog.kernel import Catalog, Who
from catalog.merge import merging
from catalog.merge.impact import InvalidatedView
from catalog.versioning import Versioning
from catalog.views.analysis import with_analysis
from catalog.views.definers import put_by
from core.auth import Privilege
from core.commits import (
    Commit,
    CommitMeta,
    CommitResult,
    Delete,
    MergeBehavior,
    MergeConflictError,
    MergeResult,
    Operation,
    OpKind,
    Put,
    Reference,
    RefType,
    Unchanged,
)
from core.content import Content, parse_content
from core.errors import ConflictError, bad_request
from core.instants import format_instant, from_micros, parse_instant, to_micros
from core.keys import ContentKey
from core.numbers import out_of_range
from core.refs import RefSpec, normalize_hash, parse_ref
from core.sql.budget import Deadline

router = APIRouter(prefix="/api/v2/trees/{ref}/history")


@router.get("")
def history(request: Request, ref: str,
            page_token: VersioningPageToken = None,
            max_records: MaxRecords = None, nessie_token: NessiePageToken = None,
            nessie_max: NessieMaxRecords = None,
            fetch: str | None = None, author: str | None = None, key: str | None = None,
            since: str | None = None, until: str | None = None,
            cel: NessieFilter = None,
            limit_hash: Annotated[str | None, Query(alias="limit-hash")] = None) -> Response:
    """First-parent history, newest first. ``fetch=ALL`` adds each commit's
    operations and extra parents; ``author``, ``key`` (path form) and the
    ``since``/``until`` instants filter it, and so does Nessie's ``filter``
    (CEL: api.v2.filtered); Nessie's ``limit-hash`` ends it at that commit
    (included)."""
    if fetch not in (None, "MINIMAL", "ALL"):
        raise bad_request(f"Invalid fetch option {fetch!r}: expected MINIMAL or ALL")
    until_hash = normalize_hash(limit_hash, context="limit-hash") if limit_hash else None
    compiled = log_filter(cel)  # before anything is read: a 400 naming what is wrong
    refs = versioning_of(request)
    spec = ref_param(ref)
    # The token is sealed, for the caller and this log (api.paging).
    paging = Paging(request, "log", {"ref": ref, "author": author, "key": key,
                                     "since": since, "until": until, "filter": cel,
                                     "limit-hash": until_hash},
                    page_token, max_records, nessie_token, nessie_max)
    log = partial(refs.log, spec, key=ContentKey.parse(key) if key else None, author=author,
                  since_us=to_micros(parse_instant(since)) if since else None,
                  until_us=to_micros(parse_instant(until)) if until else None)
    # A branch's log goes back as far as its retention: the commits before
    # its cutoff are past it (a read of one is refused), and the answer says
    # from when (store.retention). A filtered walk stops there itself, and
    # may answer an empty page with a token (its budget spent).
    cutoff = refs.cutoff_of(spec.name) if spec.name else None
    if compiled is not None:
        page = filtered_log(log, compiled, paging.cursor, paging.size, fetch == "ALL", cutoff)
    else:
        page = log(paging.cursor, paging.size, operations=fetch == "ALL")
    items, token, expired = page.items, page.next_token, None
    if until_hash is not None:
        at = next((i for i, c in enumerate(items) if c.hash.startswith(until_hash)), None)
        if at is not None:
            items, token = items[:at + 1], None
    if cutoff is not None:
        kept = [c for c in items if to_micros(c.created_at) >= cutoff]
        if len(kept) < len(items) or (not items and compiled is None):
            items, token = kept, None
        expired = format_instant(from_micros(cutoff))
    # The log's rule asks read on the whole reference: its reader may read
    # every key a commit's properties name (api.v2.shapes.commit_meta_json).
    nessie = nessie_client.strict(request)
    entries = [log_entry_json(c, True, _put_values(refs, c), nessie) if fetch == "ALL"
               else log_entry_json(c, False) for c in items]
    body = page_json("logEntries", entries, paging.seal(token))
    if expired is not None and not nessie:  # not a field of Nessie's LogResponse
        body["historyExpiredBefore"] = expired
    return json_response(body)


def _put_values(refs: Versioning, c: Commit) -> dict[ContentKey, Content]:
    """What each key a commit put holds at that commit (its PUTs answer them)."""
    keys = [op.key for op in c.operations if op.kind is OpKind.PUT]
    return refs.contents(f"@{c.hash}", keys) if keys else {}


def _operation(op: OperationBody) -> Operation:
    key = op.key.key()
    if op.type == "PUT":
        if op.content is None:
            raise bad_request(f"PUT of '{key}' has no content")
        expected = _content(op.expected_content, key, "expectedContent") \
            if op.expected_content else None
        return Put(key, _content(op.content, key, "content"), expected)
    if op.type == "DELETE":
        return Delete(key, _content(op.expected_content, key, "expectedContent")
                      if op.expected_content else None)
    return Unchanged(key)


def _based_on(catalog: Catalog, branch: str, expected_hash: str, ops: list[Operation],
              ) -> list[Operation]:
    """An update without ``expectedContent`` (Nessie's clients never send
    one) is based on the key's value at the commit's expected hash, as
    Nessie takes it: the store then refuses it as a conflict if the key
    changed since. A key absent there but present now was created since:
    a conflict too."""
    bare = [op for op in ops if isinstance(op, Put) and op.expected is None
            and op.content.id is not None]
    if not bare:
        return ops
    _, found = catalog.read(f"@{expected_hash}", [op.key for op in bare])
    out: list[Operation] = []
    for op in ops:
        if isinstance(op, Put) and op in bare:
            base = found.get(op.key)
            if base is None and catalog.get(branch, op.key) is not None:
                raise ConflictError(f"key '{op.key}' was created on '{branch}' after "
                                    f"{expected_hash}, the hash this commit is based on")
            # Absent at both: the store answers (new content must carry no id).
            out.append(Put(op.key, op.content, base, op.revive) if base is not None else op)
        else:
            out.append(op)
    return out


def _content(payload: dict[str, Any], key: ContentKey, field: str) -> Content:
    """A content value a commit names, without the fields only Nessie's
    model has (api.v2.nessie); its ids (snapshotId, versionId, …) are
    checked here rather than in core's model, which also reads what the
    store holds."""
    content = parse_content(nessie_client.content_in(payload, key, field))
    wrong = out_of_range(content, field)
    if wrong is not None:
        raise bad_request(f"invalid content: {wrong}")
    return content


def _checked(checks: FileChecks, op: Put) -> None:
    """A table or view put at a new metadata file (a client such as Iceberg's
    NessieCatalog writes it itself) names a file inside the warehouse, there,
    valid metadata of the kind named, whose current ids are the value's: the
    import's checks (catalog.imports.checks), the snapshots aside (its writer
    made them). Else a 400 naming the key and what is wrong."""
    loc = getattr(op.content, "metadata_location", None)
    if loc is None or loc == getattr(op.expected, "metadata_location", None):
        return
    problem = checks.problem(op.key, op.content)
    if problem is not None:
        raise bad_request(f"PUT of '{op.key}': {problem}")


def _analysed(catalog: Catalog, branch: str, op: Operation, deadline: Deadline,
              who: Who, checks: FileChecks) -> Operation:
    """A view put by a commit is analysed at the branch head, as one written
    through the Iceberg API is (all of a commit's views within one budget);
    a definer view's file names no definer or the committer, who must then
    hold read on what it reads (catalog.views.definers)."""
    if isinstance(op, Put):
        catalog.files.require_put(op)
        _checked(checks, op)
        put = Put(op.key, with_analysis(catalog, branch, op.key, op.content, deadline),
                  op.expected)
        put_by(catalog, parse_ref(branch), put, who)
        return put
    return op


@router.post("/commit")
def commit(request: Request, ref: str, body: CommitBody) -> Response:
    branch, expected = name_and_hash(ref, "A commit")
    properties = body.commit_meta.client_properties()  # before anything is read
    svc = services_of(request)
    catalog = svc.catalog
    parsed = _based_on(catalog, branch, expected, [_operation(o) for o in body.operations])
    guard = guard_of(request)
    if guard is not None:  # before any file is looked at
        for op in parsed:
            guard.require(request, Privilege.WRITE, branch, op.key.elements)
    deadline = Deadline()
    who = Who(principal(request), reads=reads_of(request))
    checks = FileChecks(catalog, snapshots=False)
    operations = [_analysed(catalog, branch, op, deadline, who, checks) for op in parsed]
    meta = CommitMeta(body.commit_meta.message,
                      commit_author(request, body.commit_meta.author_text, branch),
                      properties=properties)
    def answer(result: CommitResult) -> Response:
        return json_response({
            "targetBranch": reference_json(Reference(branch, RefType.BRANCH, result.hash)),
            "addedContents": [{"key": key_json(k), "contentId": cid}
                              for k, cid in result.assigned_ids.items()]})

    once = once_of(request)
    return answering(request, answer)(svc.versioning.commit(
        branch, operations, meta, expected, principal(request), once))


def _merge_answer(body: MergeBody | TransplantBody, result: MergeResult,
                  invalidated: list[InvalidatedView] | None = None,
                  readable: Readable | None = None, nessie: bool = False) -> Response:
    """The merge result, or its conflicts as a 409 (unless the body asks for
    them as a result); the target's views it breaks as the caller may see
    them (``readable``: the keys it may read on the target; api.v2.redact);
    to a Nessie client (``nessie``), Nessie's fields only (api.v2.nessie)."""
    if result.conflicts and not body.conflict_as_result:
        raise MergeConflictError(result)
    out = merge_json(result)
    if invalidated is not None:
        out["invalidatedViews"] = redact.invalidated(
            [(v.key.elements, v.status) for v in invalidated], readable)
    return json_response(nessie_client.merge_out(out) if nessie else out)


def _target_readable(request: Request, branch: str) -> Readable | None:
    """The keys the caller may read on the target (None: all of them)."""
    guard = guard_of(request)
    return guard.key_filter(request, RefSpec(name=branch)) if guard is not None else None


@router.post("/merge")
def merge(request: Request, ref: str, body: MergeBody) -> Response:
    branch, expected = name_and_maybe_hash(ref, "A merge")
    source = body.source()
    # fromRefName may be a whole ref spec (``dev*T``, ``dev@hash``): the
    # server resolves it, so a client need not ask first; the message names
    # the reference.
    message = (body.commit_meta.message if body.commit_meta else None) or body.message or \
        f"merge {parse_ref(body.from_ref_name).name or body.from_ref_name} into {branch}"
    # Kept on the merge commit, as Nessie keeps them (they were dropped unsaid).
    properties = body.commit_meta.client_properties() if body.commit_meta else {}
    author = commit_author(
        request, body.commit_meta.author_text if body.commit_meta else None, branch)
    require(request, Privilege.READ, source)
    if MergeBehavior.FORCE in (body.default_key_merge_mode, *body.modes().values()):
        require_on_protected(request, branch, "a forced merge into")
    readable = _target_readable(request, branch)
    # One shape for the answer and the one recorded with an Idempotency-Key
    # (made once, in the merge's transaction: catalog.merge.merging).
    nessie = nessie_client.strict(request)
    answer = answering(request, lambda outcome: _merge_answer(
        body, outcome.result, outcome.invalidated, readable, nessie))
    return answer(merging.merge(services_of(request).catalog, merging.MergeRequest(
        source, branch, expected, body.default_key_merge_mode, body.modes(), body.dry,
        body.content_merge, CommitMeta(message, author, properties=properties),
        principal(request), once_of(request))))


@router.post("/transplant")
def transplant(request: Request, ref: str, body: TransplantBody) -> Response:
    branch, expected = name_and_maybe_hash(ref, "A transplant")
    hashes = body.hashes()
    for h in hashes:
        require(request, Privilege.READ, f"@{h}")
    if MergeBehavior.FORCE in (body.default_key_merge_mode, *body.modes().values()):
        require_on_protected(request, branch, "a forced transplant onto")
    nessie = nessie_client.strict(request)
    answer = answering(request, lambda result: _merge_answer(body, result, nessie=nessie))
    return answer(merging.transplant(services_of(request).catalog,
                                     merging.TransplantRequest(
        hashes, branch, expected, body.default_key_merge_mode,
        body.modes(), body.dry, body.content_merge, principal(request),
        once_of(request))))
