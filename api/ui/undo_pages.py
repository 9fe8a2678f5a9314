"""The UI's undo pages: restore a key as it was at a commit (from a view's
version list), revert a commit (from its page). Each shows a preview (the
API's dry run) first, and does it only when the visitor confirms, against
the branch head the preview was made at."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import HTMLResponse

from api.ui.client import Api, ApiError, seg
from api.ui.pages import failed, form, form_post, page
from api.ui.switcher import listing

router = APIRouter(include_in_schema=False)


@router.get("/ui/restore", response_class=HTMLResponse)
@listing
async def ui_restore_preview(request: Request, key: str = "", source: str = "",
                             branch: str = "main") -> Response:
    result = None
    if key and source:
        async with Api(request) as api:
            try:
                result = await _undo(api, "restore", branch, {
                    "source": source, "keys": [{"elements": key.split(".")}]}, True)
            except ApiError as e:
                return failed(request, e)
    return page(request, "restore.html", key=key, source=source, branch=branch, result=result)


@router.post("/ui/restore", response_class=HTMLResponse)
@form_post
async def ui_restore(request: Request) -> Response:
    f = await form(request)
    key, source, branch = f.get("key", ""), f.get("source", ""), f.get("branch", "main")
    async with Api(request) as api:
        try:
            result = await _undo(api, "restore", branch, {
                "source": source, "keys": [{"elements": key.split(".")}]}, False,
                f.get("expected") or None)
        except ApiError as e:
            return failed(request, e)
    return page(request, "restore.html", key=key, source=source, branch=branch, result=result)


@router.get("/ui/revert", response_class=HTMLResponse)
@listing
async def ui_revert_preview(request: Request, commit: str = "", branch: str = "main",
                            parent: int = Query(1, ge=1, le=16)) -> Response:
    result = None
    if commit:
        async with Api(request) as api:
            try:
                result = await _undo(api, "revert", branch,
                                     {"commits": [commit], "parent": parent}, True)
            except ApiError as e:
                if e.status == 400 and "is not in the history of" in e.message:
                    # Reached from a commit's page without its branch (main by
                    # default): say so, with the form to name the branch.
                    return page(request, "revert.html", status=400, commit=commit,
                                branch=branch, parent=parent, result=None, refusal=e.message)
                return failed(request, e)
    return page(request, "revert.html", commit=commit, branch=branch, parent=parent,
                result=result)


@router.post("/ui/revert", response_class=HTMLResponse)
@form_post
async def ui_revert(request: Request) -> Response:
    f = await form(request)
    commit, branch = f.get("commit", ""), f.get("branch", "main")
    parent = int(f["parent"]) if f.get("parent", "").isdigit() else 1
    async with Api(request) as api:
        try:
            result = await _undo(api, "revert", branch, {"commits": [commit], "parent": parent},
                                 False, f.get("expected") or None)
        except ApiError as e:
            return failed(request, e)
    return page(request, "revert.html", commit=commit, branch=branch, parent=parent,
                result=result)


async def _undo(api: Api, verb: str, branch: str, body: dict[str, Any], dry_run: bool,
                expected: str | None = None) -> dict[str, Any]:
    head = expected or (await api.get(f"/api/v2/trees/{seg(branch)}"))["reference"]["hash"]
    got = await api.call("POST", f"/api/v2/trees/{seg(branch)}@{head}/history/{verb}",
                         json={**body, "dryRun": dry_run})
    keys = [{"key": ".".join(k["key"]["elements"]), "action": k["action"],
             "said": k["action"] if not dry_run else _WOULD.get(k["action"], k["action"]),
             "type": k.get("type") or "", "from": k["source"]["ref"],
             "detail": _detail(k)} for k in got["keys"]]
    # What confirming would do: nothing (no button), or delete keys (the
    # button says so, as the CLI asks --yes for it).
    changes = any(k["action"] != "unchanged" for k in keys)
    deletes = [k["key"] for k in keys if k["action"] == "deleted"]
    return {"done": not dry_run, "hash": got.get("hash"), "expected": head, "keys": keys,
            "message": got["message"], "changes": changes, "deletes": deletes}


# A preview says what confirming would do; the API's actions are what was done.
_WOULD = {"restored": "would restore", "revived": "would revive", "deleted": "would delete"}


def _detail(k: dict[str, Any]) -> str:
    if "sourceVersionId" in k:
        return f"version {k['sourceVersionId']} as new version {k['versionId']}"
    if k.get("sourceSnapshotId") is not None:
        return f"snapshot {k['sourceSnapshotId']} current again"
    return ""
