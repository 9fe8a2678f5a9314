"""Tables: list, create, load, exists, commit, drop, rename, register,
metrics, and multi-table transactions."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Response

from api.catalog.service import Who, rename
from api.deps import Services, ref, services, who
from api.errors import bad_request
from api.models import (
    CommitTableRequest,
    CommitTransactionRequest,
    CreateTableRequest,
    RegisterTableRequest,
    RenameTableRequest,
)
from api.paths import namespace_from_levels, namespace_key, target
from core.content import ContentType
from core.keys import ContentKey

router = APIRouter(prefix="/iceberg/v1")
Svc = Annotated[Services, Depends(services)]
Ref = Annotated[str, Depends(ref)]
WhoDep = Annotated[Who, Depends(who)]
PageToken = Annotated[str | None, Query(alias="pageToken")]
PageSize = Annotated[int | None, Query(alias="pageSize", ge=1)]
JSON = "application/json"


@router.get("/namespaces/{namespace}/tables")
def list_tables(svc: Svc, r: Ref, namespace: str, page_token: PageToken = None,
                page_size: PageSize = None) -> dict[str, Any]:
    keys, token = svc.tables.list(r, namespace_key(namespace), page_token, page_size)
    return {"identifiers": [{"namespace": list(k.namespace.elements), "name": k.name}  # type: ignore[union-attr]
                            for k in keys], "next-page-token": token}


@router.post("/namespaces/{namespace}/tables")
def create_table(svc: Svc, r: Ref, w: WhoDep, namespace: str, body: CreateTableRequest,
                 ) -> Response:
    ns = namespace_key(namespace)
    return Response(svc.tables.create(r, ns, body, w), media_type=JSON)


@router.get("/namespaces/{namespace}/tables/{table}")
def load_table(svc: Svc, r: Ref, namespace: str, table: str,
               snapshots: Literal["all", "refs"] | None = None) -> Response:
    t = target(r, namespace_key(namespace), table)
    return Response(svc.tables.load(t, snapshots), media_type=JSON)


@router.head("/namespaces/{namespace}/tables/{table}", status_code=204)
def table_exists(svc: Svc, r: Ref, namespace: str, table: str) -> Response:
    svc.tables.current(target(r, namespace_key(namespace), table))
    return Response(status_code=204)


@router.post("/namespaces/{namespace}/tables/{table}")
def commit_table(svc: Svc, r: Ref, w: WhoDep, namespace: str, table: str,
                 body: CommitTableRequest) -> Response:
    t = target(r, namespace_key(namespace), table)
    return Response(svc.tables.commit(t, body, w), media_type=JSON)


@router.delete("/namespaces/{namespace}/tables/{table}", status_code=204)
def drop_table(svc: Svc, r: Ref, w: WhoDep, namespace: str, table: str,
               purge_requested: Annotated[bool, Query(alias="purgeRequested")] = False,
               ) -> Response:
    svc.tables.drop(target(r, namespace_key(namespace), table), w)
    return Response(status_code=204)


@router.post("/namespaces/{namespace}/tables/{table}/metrics", status_code=204)
def report_metrics(namespace: str, table: str) -> Response:
    # Scan and commit reports are accepted and not kept.
    namespace_key(namespace)
    return Response(status_code=204)


@router.post("/namespaces/{namespace}/register")
def register_table(svc: Svc, r: Ref, w: WhoDep, namespace: str, body: RegisterTableRequest,
                   ) -> Response:
    return Response(svc.tables.register(r, namespace_key(namespace), body, w), media_type=JSON)


@router.post("/tables/rename", status_code=204)
def rename_table(svc: Svc, r: Ref, w: WhoDep, body: RenameTableRequest) -> Response:
    src, dst = identifier(body.source.namespace, body.source.name), \
        identifier(body.destination.namespace, body.destination.name)
    rename(svc.catalog, r, src, dst, ContentType.ICEBERG_TABLE, w)
    return Response(status_code=204)


@router.post("/transactions/commit", status_code=204)
def commit_transaction(svc: Svc, r: Ref, w: WhoDep, body: CommitTransactionRequest,
                       ) -> Response:
    svc.tables.transaction(r, body.table_changes, w)
    return Response(status_code=204)


def identifier(namespace: list[str], name: str) -> ContentKey:
    if "@" in name:
        raise bad_request(f"Cannot rename {name!r}: a name with its own reference is "
                          "read-only here; rename on the branch itself")
    return ContentKey([*namespace_from_levels(namespace).elements, name])
