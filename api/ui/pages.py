"""The UI's pages. Each reads through the API (api.ui.client) with the
visitor's token and renders a template; an API refusal becomes an error page
with the API's own message (401: a sign-in link)."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode

from fastapi import APIRouter, Request, Response
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.templating import Jinja2Templates

from api.ui import csrf
from api.ui.changes import change, describe_views
from api.ui.client import COOKIE, Api, ApiError, seg
from api.ui.format import count, instant, short, size, words, yesno
from api.ui.hints import MISSING_REF, what_to_try
from api.ui.retention import retention_of
from api.ui.switcher import listing, readable, switch_context
from core.commits import DEFAULT_BRANCH

TEMPLATES = Jinja2Templates(directory=str(Path(__file__).parent / "templates"))
TEMPLATES.env.globals.update(seg=seg, short=short)
TEMPLATES.env.filters.update(instant=instant, yesno=yesno, count=count, size=size,
                             words=words)
# HTML pages, not API: left out of /openapi.json.
router = APIRouter(include_in_schema=False)


# A merge form names a key per choice made: room for many.
MAX_FIELDS = 1000


async def fields(request: Request) -> list[tuple[str, str]]:
    """An HTML form's fields, in order (urlencoded; no multipart needed).
    ValueError: more than MAX_FIELDS."""
    raw = (await request.body()).decode("utf-8", errors="replace")
    return parse_qsl(raw, keep_blank_values=True, max_num_fields=MAX_FIELDS)


async def form(request: Request) -> dict[str, str]:
    return dict(await fields(request))


Handler = Callable[..., Awaitable[Response]]


def form_post(handler: Handler) -> Handler:
    """A POST of one of the UI's forms: refused (403, the page says why,
    nothing done) unless it comes from the UI's own page (api.ui.csrf)."""

    @functools.wraps(handler)
    async def checked(**kw: Any) -> Response:
        request: Request = kw["request"]
        request.state.ui_refs = await readable(request)  # the page's switcher
        try:
            sent = dict(await fields(request)).get(csrf.FIELD)
        except ValueError:
            return page(request, "error.html", status=400, heading="Refused", code=400,
                        message=f"The form has more than {MAX_FIELDS} fields.", next="")
        why = csrf.refusal(request, sent)
        if why is not None:
            return page(request, "error.html", status=403, heading="Form refused", code=403,
                        message=f"{why} Nothing was changed.", next="")
        return await handler(**kw)

    return checked


def page(request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
    context.setdefault("ref", None)
    # Log, Browse and the switcher stay on the page's reference.
    context["nav_ref"] = context["ref"] or DEFAULT_BRANCH
    context["switch"] = switch_context(request, context)
    context["default_branch"] = DEFAULT_BRANCH
    context["signed_in"] = COOKIE in request.cookies
    # An open catalog (no authentication) has nothing to sign in to.
    context["auth_on"] = getattr(request.app.state, "guard", None) is not None
    context["csrf"], new = csrf.issue(request)  # every form of the page carries it
    response = TEMPLATES.TemplateResponse(request, template, context, status_code=status)
    if new is not None:
        csrf.remember(response, new)
    return response


def failed(request: Request, e: ApiError, ref: str | None = None,
           key: str | None = None, retry: Callable[[str], str] | None = None,
           close_keys: list[str] | None = None, readers: list[str] | None = None,
           back: str | None = None) -> HTMLResponse:
    """The API's refusal as a page. A 404 says what to try, from ``ref``
    and ``key`` (what the page was asked for): another reference (those the
    visitor may read whose names are close; ``retry``: the page asked again
    with one of them, else that reference's browser), the key's namespace and
    its history, the log. A 401 speaks to a browser, not to a script."""
    heading = {401: "Sign in needed", 403: "Not allowed", 404: "Not found"}.get(
        e.status, "Something went wrong" if e.status >= 500 else "Refused")
    hints = what_to_try(request, e, ref, key) if e.status == 404 else None
    if hints is not None and retry is not None:
        hints["links"] = {n: retry(n) for n in hints["close"]}
    if hints is not None:  # a key's: the close ones, and the views still reading it
        hints["close_keys"], hints["readers"] = close_keys or [], readers or []
    # The navigation stays on the page's reference, unless that is what is missing.
    nav = None if e.code in MISSING_REF else ref
    message = SIGN_IN if e.status == 401 else e.message
    return page(request, "error.html", status=e.status, heading=heading, message=message,
                code=e.status, hints=hints, ref=nav, key=key, back=back,
                next=str(request.url.path)
                + (f"?{request.url.query}" if request.url.query else ""))


# The API's 401 tells a script which header to send; a visitor signs in.
SIGN_IN = ("This catalog needs you to sign in: use an API key (ID:SECRET, made by sapwood key "
           "create) or a client id and secret.")


def not_found(request: Request, message: str) -> HTMLResponse:
    """A 404 of the UI itself (no page at this path), with what to try."""
    return failed(request, ApiError(404, message))


@router.get("/", include_in_schema=False)
async def root() -> Response:
    return RedirectResponse("/ui", status_code=307)


# References on one page of the UI (a filter box and "next" for the rest),
# and entries on one page of the browser.
REFS_PER_PAGE = 100
BROWSE_PAGE = 100


@router.get("/ui", response_class=HTMLResponse)
@listing
async def ui_references(request: Request, prefix: str | None = None,
                        token: str | None = None) -> Response:
    async with Api(request) as api:
        try:
            listed = {"maxRecords": REFS_PER_PAGE, "prefix": prefix, "pageToken": token}
            got = await api.get("/api/v2/trees", fetch="ALL", **listed)
            refs, kept = got["references"], await retention_of(api, listed)
            rows = []
            for r in refs:
                meta = (r.get("metadata") or {}).get("commitMetaOfHEAD") or {}
                rows.append({"name": r["name"], "type": r["type"], "hash": r["hash"],
                             "time": meta.get("commitTime"),
                             "author": ", ".join(meta.get("authors") or [])})
        except ApiError as e:
            return failed(request, e)
    nxt = urlencode({"prefix": prefix or "", "token": got.get("token") or ""})
    return page(request, "refs.html", refs=rows, kept=kept, prefix=prefix or "",
                more=bool(got.get("hasMore")), next_query=nxt)


@router.post("/ui/refs")
@form_post
async def ui_create_reference(request: Request) -> Response:
    f = await form(request)
    name, type, source = f.get("name", ""), f.get("type", "BRANCH"), f.get("source", "main")
    async with Api(request) as api:
        try:
            src = (await api.get(f"/api/v2/trees/{seg(source)}"))
            target = src.get("effectiveReference") or src["reference"]
            await api.call("POST", "/api/v2/trees", params={"name": name, "type": type},
                           json={"type": src["reference"]["type"],
                                 "name": src["reference"]["name"], "hash": target["hash"]})
        except ApiError as e:
            return failed(request, e)
    return RedirectResponse("/ui", status_code=303)


@router.get("/ui/refs/{name:path}/delete", response_class=HTMLResponse)
@listing
async def ui_confirm_delete(request: Request, name: str) -> Response:
    async with Api(request) as api:
        try:
            r = (await api.get(f"/api/v2/trees/{seg(name)}"))["reference"]
        except ApiError as e:
            return failed(request, e, ref=name)
    if r["type"] == "BRANCH" and r["name"] == DEFAULT_BRANCH:
        # No form to delete it: the catalog refuses (409), so none is offered.
        return page(request, "error.html", status=409, heading="Refused", code=409,
                    message=f"the default branch '{DEFAULT_BRANCH}' cannot be deleted",
                    ref=name, next="")
    return page(request, "confirm_delete.html", name=name, type=r["type"], hash=r["hash"])


@router.post("/ui/refs/{name:path}/delete")
@form_post
async def ui_delete_reference(request: Request, name: str) -> Response:
    hash = (await form(request)).get("hash", "")
    async with Api(request) as api:
        try:
            await api.call("DELETE", f"/api/v2/trees/{seg(name)}@{hash}")
        except ApiError as e:
            return failed(request, e)
    return RedirectResponse("/ui", status_code=303)


def without_slash(request: Request, path: str) -> RedirectResponse:
    """The same page at ``path`` (a trailing slash, or no reference, asked),
    its query kept."""
    query = f"?{request.url.query}" if request.url.query else ""
    return RedirectResponse(f"{path}{query}", status_code=307)


@router.get("/ui/log", include_in_schema=False)
async def ui_log_default(request: Request) -> Response:
    return without_slash(request, f"/ui/log/{DEFAULT_BRANCH}")


@router.get("/ui/log/{ref:path}", response_class=HTMLResponse)
@listing
async def ui_log(request: Request, ref: str, author: str | None = None, key: str | None = None,
                 since: str | None = None, until: str | None = None,
                 token: str | None = None) -> Response:
    if not ref or ref.endswith("/"):  # /ui/log/ and /ui/log/main/ are /ui/log/main
        return without_slash(request, f"/ui/log/{seg(ref.rstrip('/') or DEFAULT_BRANCH)}")
    filters = {"author": author, "key": key, "since": since, "until": until}
    async with Api(request) as api:
        try:
            got = await api.get(f"/api/v2/trees/{seg(ref)}/history", maxRecords=50,
                                pageToken=token, **filters)
        except ApiError as e:
            return failed(request, e, ref=ref)
    entries = [{"hash": e["commitMeta"]["hash"], "time": e["commitMeta"]["commitTime"],
                "author": ", ".join(e["commitMeta"]["authors"]),
                "message": e["commitMeta"]["message"]} for e in got["logEntries"]]
    nxt = urlencode({**{k: v for k, v in filters.items() if v}, "token": got.get("token") or ""})
    return page(request, "log.html", ref=ref, entries=entries, filters=filters,
                token=got.get("token"), next_query=nxt)


@router.get("/ui/commit/{hash}", response_class=HTMLResponse)
@listing
async def ui_commit(request: Request, hash: str, ref: str | None = None) -> Response:
    """A commit; ``ref``: the reference it was reached from (the log's, the
    page's), which the navigation stays on."""
    async with Api(request) as api:
        try:
            got = await api.get(f"/api/v2/trees/@{hash}/history", maxRecords=1, fetch="ALL")
            entry = got["logEntries"][0]
            parent = entry["parentCommitHash"]
            this = entry["commitMeta"]["hash"]
            diff = await api.get(f"/api/v2/trees/@{parent}/diff/@{this}")
            changes = [change(d, f"@{parent}", f"@{this}") for d in diff["diffs"]]
            await describe_views(api, changes, f"@{parent}", f"@{this}")
        except ApiError as e:
            return failed(request, e, ref=ref)
    return page(request, "commit.html", c=entry["commitMeta"], ref=ref,
                parents=[parent, *entry.get("additionalParents", [])], changes=changes)


@router.get("/ui/asof", include_in_schema=False)
async def ui_as_of(ref: str, at: str = "", prefix: str = "") -> Response:
    """The as-of picker: the same listing at the branch as of an instant."""
    base = ref.split("*")[0].split("@")[0] or "main"
    query = f"?{urlencode({'prefix': prefix})}" if prefix else ""
    return RedirectResponse(f"/ui/tree/{seg(f'{base}*{at.strip()}' if at.strip() else base)}"
                            f"{query}", status_code=303)


@router.get("/ui/tree", include_in_schema=False)
async def ui_tree_default(request: Request) -> Response:
    return without_slash(request, f"/ui/tree/{DEFAULT_BRANCH}")


@router.get("/ui/tree/{ref:path}", response_class=HTMLResponse)
@listing
async def ui_tree(request: Request, ref: str, prefix: str | None = None,
                  token: str | None = None) -> Response:
    if not ref or ref.endswith("/"):  # /ui/tree/ and /ui/tree/main/ are /ui/tree/main
        return without_slash(request, f"/ui/tree/{seg(ref.rstrip('/') or DEFAULT_BRANCH)}")
    async with Api(request) as api:
        try:
            got = await api.get(f"/api/v2/trees/{seg(ref)}/entries", prefixKey=prefix,
                                depth=1, maxRecords=BROWSE_PAGE, pageToken=token)
        except ApiError as e:
            return failed(request, e, ref=ref)
    namespaces, objects = [], []
    for entry in got["entries"]:
        name = ".".join(entry["name"]["elements"])
        if entry["type"] == "NAMESPACE":
            namespaces.append(name)
        else:
            objects.append({"key": name, "type": entry["type"]})
    effective = got.get("effectiveReference") or {}
    views = [o["key"] for o in objects if o["type"] in VIEW_TYPES]
    if views:  # flag the views of this page that do not hold
        async with Api(request) as api:
            try:
                flags = await _view_flags(api, ref, views)
            except ApiError as e:
                return failed(request, e, ref=ref)
        for o in objects:
            o["status"] = flags.get(o["key"])
    nxt = urlencode({"prefix": prefix or "", "token": got.get("token") or ""})
    return page(request, "tree.html", ref=ref, prefix=prefix, namespaces=namespaces,
                objects=objects, hash=effective.get("hash", ""), more=bool(got.get("hasMore")),
                next_query=nxt, base_ref=ref, at=ref.split("*", 1)[1] if "*" in ref else None)


VIEW_TYPES = ("ICEBERG_VIEW", "MATERIALIZED_VIEW")


async def _view_flags(api: Api, ref: str, keys: list[str]) -> dict[str, str]:
    """Which of these views do not hold (the status listing): key → invalid
    or unanalysed."""
    got = await api.get(f"/api/v2/trees/{seg(ref)}/views", status="all", key=keys)
    return {".".join(v["key"]): v["status"] for v in got["views"] if v["status"] != "ok"}


@router.get("/ui/diff", response_class=HTMLResponse)
@listing
async def ui_diff(request: Request) -> Response:
    frm, to = request.query_params.get("from"), request.query_params.get("to")
    entries = None
    if frm and to:
        async with Api(request) as api:
            try:
                got = await api.get(f"/api/v2/trees/{seg(frm)}/diff/{seg(to)}")
                entries = [change(d, frm, to) for d in got["diffs"]]
                await describe_views(api, entries, frm, to)
            except ApiError as e:
                return failed(request, e)
    return page(request, "diff.html", frm=frm, to=to, entries=entries)


@router.get("/ui/login", response_class=HTMLResponse)
@listing
async def ui_login_form(request: Request, next: str = "/ui") -> Response:
    return page(request, "login.html", next=next if next.startswith("/ui") else "/ui")


@router.post("/ui/login", response_class=HTMLResponse)
@form_post
async def ui_login(request: Request) -> Response:
    """An API key (``sw_…:secret``) or OAuth2 client credentials, exchanged
    at the catalog's token endpoint; the token is kept in an HttpOnly cookie."""
    f = await form(request)
    client_id, client_secret = f.get("client_id", ""), f.get("client_secret", "")
    next = f.get("next", "/ui")
    if not client_secret and ":" in client_id:
        client_id, client_secret = client_id.split(":", 1)
    async with Api(request) as api:
        try:
            got = await api.call("POST", "/iceberg/v1/oauth/tokens", data={
                "grant_type": "client_credentials", "client_id": client_id,
                "client_secret": client_secret, "scope": "catalog"})
        except ApiError as e:
            return page(request, "login.html", status=401, next=next,
                        message=f"Not signed in: {e.message}")
    resp = RedirectResponse(next if next.startswith("/ui") else "/ui", status_code=303)
    resp.set_cookie(COOKIE, got["access_token"], httponly=True, samesite="strict",
                    max_age=int(got.get("expires_in") or 3600), path="/")
    return resp


@router.get("/ui/logout", response_class=HTMLResponse)
@listing
async def ui_logout_form(request: Request) -> Response:
    """Signing out changes something, so it is a form (a link from another
    site must not sign the visitor out)."""
    return page(request, "logout.html")


@router.post("/ui/logout")
@form_post
async def ui_logout(request: Request) -> Response:
    resp = RedirectResponse("/ui", status_code=303)
    resp.delete_cookie(COOKIE, path="/")
    return resp
