"""The change feed: ``GET /api/v2/events`` pages CloudEvents oldest first
from a cursor (the answer's ``after``), and long-polls with ``wait``
(catalog.feed.events). A caller sees only events on references it may read,
with the keys it may not read removed. ``POST /iceberg/v1/{prefix}/events``
is the proposed Iceberg REST shape of the same feed (catalog.feed.iceberg_events)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Annotated

from fastapi import APIRouter, Query, Request, Response
from starlette.concurrency import run_in_threadpool

from api.auth.guard import guard_of
from api.deps import Call, json_response
from api.models import QueryEventsRequest
from api.paging import either
from catalog.feed.events import MAX_WAIT_S, Feed, FeedQuery, KeyFilter, RefFilter
from catalog.feed.iceberg_events import EventsQuery, IcebergEvents
from core.errors import InvalidInputError
from core.keys import ContentKey
from core.numbers import INT64_MAX
from core.refs import parse_ref

router = APIRouter()


@router.get("/api/v2/events")
async def list_events(request: Request,
                      after: Annotated[int, Query(ge=0, le=INT64_MAX)] = 0,
                      max_records: Annotated[int | None,
                                             Query(alias="maxRecords", ge=1, le=1000)] = None,
                      types: str | None = None, ref: str | None = None, key: str | None = None,
                      wait: Annotated[float, Query(ge=0, le=MAX_WAIT_S)] = 0,
                      nessie_max: Annotated[int | None,
                                            Query(alias="max-records", ge=1, le=1000)] = None,
                      ) -> Response:
    c = Call(request)
    # Nessie's spelling of the page size too (api.paging).
    size = either(max_records, nessie_max, "maxRecords", "max-records") or 100
    q = FeedQuery(after, size,
                  tuple(t.strip() for t in (types or "").split(",") if t.strip()),
                  ref or None, ContentKey.parse(key) if key else None)
    feed = Feed(c.svc.catalog)
    may_read_ref, keys_of = _grants(request)
    # In the thread pool on every backend: a page looks at up to thousands of
    # stored events, which must not hold up the event loop's other requests.
    events, more, cursor = await run_in_threadpool(feed.page_to, q, may_read_ref, keys_of)
    deadline = time.monotonic() + wait
    while not events and not more and time.monotonic() < deadline:
        # A long poll, caught up: look again when something was committed
        # (cheap on SQLite: the database's change counter), and then only at
        # what landed since the last look, hidden or not. A client gone away
        # ends it: nobody would read the answer, and a server stopping waits
        # for every request in flight.
        await asyncio.sleep(0.05)
        if await request.is_disconnected():
            break
        if await c.read(feed.events.last) > cursor:
            events, more, cursor = await run_in_threadpool(
                feed.page_to, replace(q, after=cursor), may_read_ref, keys_of)
    return json_response({"events": events, "hasMore": more, "after": cursor})


def _grants(request: Request) -> tuple[RefFilter | None, KeyFilter | None]:
    """The feed's filters for the caller (None: authentication is off)."""
    guard = guard_of(request)
    if guard is None:
        return None, None

    def keys_of(name: str) -> Callable[[tuple[str, ...]], bool] | None:
        return guard.key_filter(request, parse_ref(name))

    return guard.ref_filter(request), keys_of


@router.post("/iceberg/v1/events")
async def query_events(request: Request, body: QueryEventsRequest) -> Response:
    """The proposed Iceberg REST events endpoint, for the prefix's reference."""
    c = Call(request)
    if not c.ref.is_plain:
        raise InvalidInputError(
            f"Events follow a reference by name; {c.ref} pins a commit (use the branch's name "
            "as the prefix)")
    assert c.ref.name is not None
    q = EventsQuery(body.continuation_token, body.page_size, body.after_timestamp_ms,
                    tuple(body.operation_types),
                    tuple(tuple(n) for n in body.catalog_objects_by_name),
                    tuple(o.uuid for o in body.catalog_objects_by_id),
                    tuple(body.object_types), dict(body.custom_filters))
    # The prefix's reference is readable (the route's rule): keys are filtered.
    _, keys_of = _grants(request)
    events = IcebergEvents(Feed(c.svc.catalog))
    return json_response(await run_in_threadpool(events.query, c.ref.name, q, None, keys_of))
