"""The UI's merge: a preview (the API's dry run) with, per conflicting key,
how to resolve it (take the source's change or keep the target's: the
choice for the preview, and the same as a `sapwood merge` command), then the
merge itself with the choices made, against the head the preview was made at."""

from __future__ import annotations

import re
import shlex
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from api.ui.client import Api, ApiError, seg
from api.ui.pages import failed, fields, form_post, page
from api.ui.switcher import listing

router = APIRouter(include_in_schema=False)

# Per key: FORCE takes the source's change, DROP keeps the target's value.
MODES = ("force", "drop")
MODES_FIELD = "keyMergeModes"
_MISSING = re.compile(r"^reference '([^']*)' does not exist")


@router.get("/ui/merge", response_class=HTMLResponse)
@listing
async def ui_merge_preview(request: Request) -> Response:
    q = request.query_params
    frm, into = q.get("from"), q.get("into") or "main"
    chosen = _choices(q.multi_items())
    result = None
    if frm:
        async with Api(request) as api:
            try:
                result = await _merge(api, frm, into, chosen, dry_run=True)
            except ApiError as e:
                return _refused(request, e, frm, into, chosen)
    return _page(request, frm, into, chosen, result)


@router.post("/ui/merge", response_class=HTMLResponse)
@form_post
async def ui_merge(request: Request) -> Response:
    sent = await fields(request)
    one = dict(sent)
    frm, into, expected = one.get("from", ""), one.get("into", "main"), one.get("expected", "")
    chosen = _choices(sent)
    async with Api(request) as api:
        try:
            result = await _merge(api, frm, into, chosen, dry_run=False,
                                  expected=expected or None)
        except ApiError as e:
            return _refused(request, e, frm, into, chosen)
    return _page(request, frm, into, chosen, result)


def _refused(request: Request, e: ApiError, frm: str, into: str,
             chosen: dict[str, str]) -> Response:
    """The refusal's page; a reference that does not exist (either side)
    gets the names close to it, each a link to this preview with it."""
    missing = _MISSING.search(e.message)
    if missing is None:
        # A choice refused: back to the preview without the choices.
        back = "/ui/merge?" + urlencode([("from", frm), ("into", into)]) \
            if e.message.startswith(MODES_FIELD) else None
        return failed(request, _in_page_words(e), back=back)
    name = missing[1]
    if name not in (frm, into):  # a ref spec's name (dve~1): the references' pages
        return failed(request, e, ref=name)

    def retry(n: str) -> str:
        sides = [("from", n if frm == name else frm), ("into", n if into == name else into)]
        return "/ui/merge?" + urlencode(sides + [(m, k) for k, m in sorted(chosen.items())])

    return failed(request, e, ref=name, retry=retry)


def _in_page_words(e: ApiError) -> ApiError:
    """The API's refusal of a choice for a key the merge does not change
    names its field (keyMergeModes); the page's words are force= and drop=."""
    if not e.message.startswith(MODES_FIELD):
        return e
    return ApiError(e.status, "a choice (force= or drop=)" + e.message[len(MODES_FIELD):],
                    e.code)


def _choices(fields: list[tuple[str, str]]) -> dict[str, str]:
    """Key -> "force" or "drop", from repeated ``force=KEY`` / ``drop=KEY``
    fields (a key named twice: the last choice holds)."""
    return {v: k for k, v in fields if k in MODES and v}


def _page(request: Request, frm: str | None, into: str, chosen: dict[str, str],
          result: dict[str, Any] | None) -> Response:

    def preview(key: str, mode: str | None) -> str:
        """The preview's URL with ``key`` resolved by ``mode`` (None: undecided)."""
        rest = {k: m for k, m in chosen.items() if k != key}
        if mode:
            rest[key] = mode
        return "/ui/merge?" + urlencode(
            [("from", frm or ""), ("into", into), *((m, k) for k, m in sorted(rest.items()))])

    def command(extra: dict[str, str]) -> str:
        """The `sapwood merge` that does what the page would, with ``extra`` choices."""
        picks = {**chosen, **extra}
        return " ".join(["sapwood merge", shlex.quote(frm or ""), "--into", shlex.quote(into),
                         *(f"--{m} {shlex.quote(k)}" for k, m in sorted(picks.items()))])

    return page(request, "merge.html", frm=frm, into=into, result=result, chosen=chosen,
                preview=preview, command=command)


async def _merge(api: Api, frm: str, into: str, chosen: dict[str, str], dry_run: bool,
                 expected: str | None = None) -> dict[str, Any]:
    head = expected or (await api.get(f"/api/v2/trees/{seg(into)}"))["reference"]["hash"]
    got = await api.call("POST", f"/api/v2/trees/{seg(into)}@{head}/history/merge",
                         json={"fromRefName": frm, "dryRun": dry_run,
                               "returnConflictAsResult": True,
                               "keyMergeModes": [
                                   {"key": {"elements": k.split(".")},
                                    "mergeBehavior": m.upper()}
                                   for k, m in sorted(chosen.items())]})
    details = [{"key": ".".join(d["key"]["elements"]), "outcome": d["outcome"],
                "conflict": (d.get("conflict") or {}).get("message"),
                # A view's conflict: per dialect what each side did, and the
                # diff from the target's SQL to the source's.
                "dialects": (d.get("conflictDetails") or {}).get("dialects") or {},
                "diffs": (d.get("conflictDetails") or {}).get("sqlDiff") or {}}
               for d in got["details"]]
    return {"applied": got["wasApplied"], "head": got["resultantTargetHash"],
            "target": got["expectedHash"], "details": details,
            "conflicts": [d["key"] for d in details if d["outcome"] == "CONFLICT"],
            # The target's views the merge would break (the one verdict, on
            # the merge's result), each with the way to what breaks it.
            "invalidated": [{"key": ".".join(v["key"]), "reasons": v.get("reasons") or []}
                            for v in got.get("invalidatedViews", [])]}
