"""The references a page offers to switch to (the branch switcher in every
page's navigation, and the "did you mean" of a reference that does not
exist): the API's own listing, read with the visitor's token, so a
reference the visitor may not read is never offered. A page handler marked
``@listing`` reads them before it runs; ``page()`` puts them in the page."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from fastapi import Request, Response

from api.ui.client import Api, ApiError
from core.commits import DEFAULT_BRANCH

# References offered (the references page has a filter and pages for more).
SWITCH_MAX = 100


@dataclass(frozen=True, slots=True)
class Listed:
    """The references the visitor may read (the first SWITCH_MAX by name,
    the default branch first); ``more``: there are others."""

    branches: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    more: bool = False

    @property
    def names(self) -> list[str]:
        return self.branches + self.tags


async def readable(request: Request) -> Listed:
    async with Api(request) as api:
        try:
            got = await api.get("/api/v2/trees", maxRecords=SWITCH_MAX)
        except ApiError:
            # Not signed in, or not allowed to list: nothing to offer but
            # the page's own reference.
            return Listed()
    refs = got.get("references") or []
    branches = sorted((r["name"] for r in refs if r.get("type") == "BRANCH"),
                      key=lambda n: (n != DEFAULT_BRANCH, n))
    tags = sorted(r["name"] for r in refs if r.get("type") == "TAG")
    return Listed(branches, tags, bool(got.get("hasMore")))


Handler = Callable[..., Awaitable[Response]]


def listing(handler: Handler) -> Handler:
    """A page handler whose page offers the visitor's references."""

    @functools.wraps(handler)
    async def listed(**kw: Any) -> Response:
        request: Request = kw["request"]
        request.state.ui_refs = await readable(request)
        return await handler(**kw)

    return listed


def listed_on(request: Request) -> Listed:
    """What ``@listing`` read for this request (nothing if it did not run)."""
    got = getattr(request.state, "ui_refs", None)
    return got if isinstance(got, Listed) else Listed()


def switch_context(request: Request, context: dict[str, Any]) -> dict[str, Any]:
    """The switcher of a page: the references offered, the one shown, and
    where a switch leads: the same kind of page (log, browse, an object's
    page, else browse), its filters kept (the route is in api.ui.nav)."""
    path, q = request.url.path, request.query_params
    if path.startswith("/ui/log/"):
        kind, keep = "log", [(k, q[k]) for k in ("author", "key", "since", "until") if q.get(k)]
    elif path.startswith("/ui/tree/"):
        kind, keep = "tree", [("prefix", q["prefix"])] if q.get("prefix") else []
    elif path.startswith("/ui/object/") and context.get("key"):
        kind, keep = "object", [("key", str(context["key"]))]
    else:
        kind, keep = "tree", []
    listed = listed_on(request)
    current = context["nav_ref"]
    return {"branches": listed.branches, "tags": listed.tags, "more": listed.more,
            "current": current, "listed": current in listed.names, "page": kind,
            "keep": keep}
