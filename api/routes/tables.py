"""Tables: list, create, load, exists, commit, drop, rename, register,
unregister, metrics, and multi-table transactions."""

from __future__ import annotations

import json
from typing import Annotated

from fastapi import APIRouter, Query, Request, Response
from starlette.concurrency import run_in_threadpool

from api.answers import ANSWERS, loaded_json
from api.delegated import HEADER, answering_table, delegating, table_answer
from api.deps import Call, PageSize, PageToken, identifiers_response, no_content
from api.models import (
    CommitTableRequest,
    CommitTransactionRequest,
    CreateTableRequest,
    RegisterTableRequest,
    RenameTableRequest,
    TableIdentifier,
)
from api.paging import iceberg_listing
from api.paths import namespace_key
from api.unused import takes_body
from catalog.commands import Loaded, ReadOptions
from catalog.mviews.mviews import STALENESS_HEADER
from catalog.mviews.refresh import REFRESH_HEADER, commit_refresh
from catalog.targets import Target, namespace_from_levels, target
from catalog.views.lifecycle import drop, rename, unregister
from core.auth import Privilege
from core.content import ContentType
from core.errors import bad_request
from core.keys import ContentKey

router = APIRouter(prefix="/iceberg/v1")


@router.get("/namespaces/{namespace}/tables")
async def list_tables(request: Request, namespace: str, page_token: PageToken = None,
                      page_size: PageSize = None) -> Response:
    c = Call(request)
    keys, token = await iceberg_listing(request, c, "tables", {"namespace": namespace},
                                        page_token, page_size, c.svc.namespaces.children,
                                        c.ref, namespace_key(namespace), ContentType.ICEBERG_TABLE)
    return identifiers_response(keys, token)


@router.post("/namespaces/{namespace}/tables")
def create_table(request: Request, namespace: str, body: CreateTableRequest,
                 ) -> Response:
    c = Call(request)
    ns = namespace_key(namespace)
    t = target(c.ref, ns, body.name)
    return answering_table(c, request, t)(c.svc.tables.create(c.ref, ns, body.command(), c.who))


@router.get("/namespaces/{namespace}/tables/{table}")
async def load_table(request: Request, namespace: str, table: str,
                     snapshots: str | None = None) -> Response:
    c = Call(request)
    if snapshots not in (None, "all", "refs"):
        raise bad_request(f"Invalid snapshots mode {snapshots!r}: expected 'all' or 'refs'")
    t = target(c.ref, namespace_key(namespace), table)
    loaded = await c.read(c.svc.tables.load, t, snapshots, mv_options(request))
    if delegating(c, request.headers.get(HEADER)):  # may ask STS: off the event loop
        return await run_in_threadpool(table_answer, c, request, t, loaded, True)
    return table_answer(c, request, t, loaded, conditional=True)


def mv_options(request: Request) -> ReadOptions | None:
    """How a materialized view answers this reader (None: as its own settings say)."""
    h = request.headers
    refresh, bound = h.get(REFRESH_HEADER), h.get(STALENESS_HEADER)
    if refresh is None and bound is None:
        return None
    if bound is not None and not (bound.isdigit() and len(bound) < 19):
        raise bad_request(f"Invalid {STALENESS_HEADER} header {bound!r}: expected a number "
                          "of milliseconds, 0 or more")
    return ReadOptions(refresh is not None, int(bound) if bound is not None else None)


@router.head("/namespaces/{namespace}/tables/{table}", status_code=204)
async def table_exists(request: Request, namespace: str, table: str) -> Response:
    c = Call(request)
    t = target(c.ref, namespace_key(namespace), table)
    # Its ETag is the one a load would carry (a cached answer: no file read).
    _, etag = ANSWERS.body(await c.read(c.svc.tables.load, t, None, None))
    return Response(status_code=204, headers={"ETag": etag})


@router.post("/namespaces/{namespace}/tables/{table}")
def commit_table(request: Request, namespace: str, table: str,
                 body: CommitTableRequest) -> Response:
    c = Call(request)
    t = target(c.ref, namespace_key(namespace), table)
    check_identifier(body.identifier, t)
    refresh = request.headers.get(REFRESH_HEADER)
    answer = answering_table(c, request, t)
    if refresh is not None:
        return answer(commit_refresh(c.svc.mviews, t, body.command(), refresh, c.who))
    return answer(c.svc.tables.commit(t, body.command(), c.who))


@router.delete("/namespaces/{namespace}/tables/{table}", status_code=204)
def drop_table(request: Request, namespace: str, table: str,
               purge_requested: Annotated[bool, Query(alias="purgeRequested")] = False,
               cascade: bool = False) -> Response:
    # cascade=true (ours, not Iceberg's): the views that read it go in the same commit.
    c = Call(request)
    drop(c.svc.catalog, target(c.ref, namespace_key(namespace), table),
         ContentType.ICEBERG_TABLE, c.answered_by(no_content), cascade,
         lambda k: c.require(Privilege.WRITE, k))
    return no_content()


@router.post("/namespaces/{namespace}/tables/{table}/unregister")
def unregister_table(request: Request, namespace: str, table: str) -> Response:
    """The spec's unregisterTable (catalog.views.lifecycle.unregister): the
    entry leaves the branch, its files stay; answered with the last metadata
    file and its metadata (UnregisterTableResult)."""
    c = Call(request)
    t = target(c.ref, namespace_key(namespace), table)
    return c.answering(unregistered)(unregister(c.svc.catalog, t, c.who,
                                                lambda k: c.require(Privilege.WRITE, k)))


def unregistered(loaded: Loaded) -> Response:
    assert loaded.location is not None
    body = (b'{"metadata-location":' + json.dumps(loaded.location).encode()
            + b',"metadata":' + loaded.metadata + b"}")
    return Response(body, media_type="application/json")


@router.post("/namespaces/{namespace}/tables/{table}/metrics", status_code=204)
@takes_body  # the spec's report: accepted, not kept (docs/iceberg-rest.md)
def report_metrics(namespace: str, table: str) -> Response:
    # Scan and commit reports are accepted and not kept.
    namespace_key(namespace)
    return Response(status_code=204)


@router.post("/namespaces/{namespace}/register")
def register_table(request: Request, namespace: str, body: RegisterTableRequest,
                   ) -> Response:
    c = Call(request)
    return c.answering(loaded_json)(c.svc.tables.register(c.ref, namespace_key(namespace),
                                                          body.command(), c.who))


@router.post("/tables/rename", status_code=204)
def rename_table(request: Request, body: RenameTableRequest) -> Response:
    return renamed(request, body, ContentType.ICEBERG_TABLE)


@router.post("/transactions/commit", status_code=204)
def commit_transaction(request: Request, body: CommitTransactionRequest,
                       ) -> Response:
    c = Call(request)
    changes = [(ContentKey([*namespace_from_levels(ch.identifier.namespace).elements,
                            ch.identifier.name]), ch.command()) for ch in body.table_changes]
    for key, _ in changes:
        c.require(Privilege.WRITE, key)
    c.svc.tables.transaction(c.ref, changes, c.answered_by(no_content))
    return no_content()


def renamed(request: Request, body: RenameTableRequest, kind: ContentType) -> Response:
    """Rename a table or a view (across namespaces too): one commit."""
    c = Call(request)
    src = identifier(body.source.namespace, body.source.name)
    dst = identifier(body.destination.namespace, body.destination.name)
    c.require(Privilege.WRITE, src)
    c.require(Privilege.WRITE, dst)
    rename(c.svc.catalog, c.ref, src, dst, kind, c.answered_by(no_content))
    return no_content()


def identifier(namespace: list[str], name: str) -> ContentKey:
    if "@" in name:
        raise bad_request(f"Cannot rename {name!r}: a name with its own reference is "
                          "read-only here; rename on the branch itself")
    return ContentKey([*namespace_from_levels(namespace).elements, name])


def check_identifier(ident: TableIdentifier | None, t: Target) -> None:
    """A commit body may repeat its identifier; it must then be the path's."""
    if ident is None:
        return
    if tuple(ident.namespace) != t.key.elements[:-1] or ident.name != t.key.name:
        raise bad_request(f"The identifier in the body ({'.'.join(ident.namespace)}."
                          f"{ident.name}) is not the one in the path ({t.name})")
