"""Getting around the UI: the branch switcher's destination, and every other
path under ``/ui``: a trailing slash is the same page without it, and a path
that is no page gets a "Not found" page that says what to try. Its router
comes last: the catch-all must not shadow a page."""

from __future__ import annotations

from urllib.parse import quote, urlencode

from fastapi import APIRouter, Request, Response
from fastapi.responses import RedirectResponse

from api.ui.client import seg
from api.ui.pages import not_found, without_slash
from api.ui.switcher import listing
from core.commits import DEFAULT_BRANCH

router = APIRouter(include_in_schema=False)

# A path's characters kept as they are when it is sent back (as api.ui.client.seg).
_SAFE = "/@*~^:"
# What a switch keeps of the page it leaves, by the kind of page it goes to.
_KEPT = {"log": ("author", "key", "since", "until"), "tree": ("prefix",)}


@router.get("/ui/switch")
async def ui_switch(request: Request, ref: str = "", page: str = "tree",
                    key: str = "") -> Response:
    """The same kind of page on another reference: its log, its browser at
    the same namespace, the same table or view there (``page``: log, tree,
    object). Anything else asked: its browser."""
    ref = ref.strip() or DEFAULT_BRANCH
    q = request.query_params
    if page == "object" and key:
        return RedirectResponse(f"/ui/object/{seg(ref)}/{seg(key)}", status_code=303)
    kind = page if page in _KEPT else "tree"
    kept = [(k, q[k]) for k in _KEPT[kind] if q.get(k)]
    return RedirectResponse(f"/ui/{kind}/{seg(ref)}"
                            + (f"?{urlencode(kept)}" if kept else ""), status_code=303)


@router.get("/ui/{rest:path}")
@listing
async def ui_not_found(request: Request, rest: str) -> Response:
    if rest.endswith("/") or not rest:
        # /ui/diff/ is /ui/diff (and /ui/ is /ui): the page without the slash.
        kept = rest.rstrip("/")
        return without_slash(request, f"/ui/{quote(kept, safe=_SAFE)}" if kept else "/ui")
    if rest.startswith("object/") and "/" not in rest[len("object/"):]:
        # An object's page without its key: what the reference holds.
        return without_slash(request, f"/ui/tree/{seg(rest[len('object/'):])}")
    return not_found(request, f"There is no page at /ui/{rest}.")
