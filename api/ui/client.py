"""The API, as the UI calls it: in-process (no network), through the same
ASGI layers as any client, with the visitor's token."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import httpx
from fastapi import Request

COOKIE = "sapwood_ui_token"


class ApiError(Exception):
    """An API refusal: its status, its message and its code (the versioning
    API's ``errorCode``, Iceberg's error ``type``; "" if it gave none)."""

    def __init__(self, status: int, message: str, code: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code


def seg(text: str) -> str:
    """One path segment (a ref spec or a key may hold '/', '*', '@')."""
    return quote(text, safe="@*~^:")


class Api:
    def __init__(self, request: Request) -> None:
        app = request.app.state.asgi
        token = request.cookies.get(COOKIE)
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        if "x-request-id" in request.headers:
            headers["X-Request-Id"] = request.headers["x-request-id"]
        host = request.headers.get("host", "127.0.0.1")
        self.http = httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                      base_url=f"http://{host}", headers=headers)

    async def __aenter__(self) -> Api:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.http.aclose()

    async def call(self, method: str, path: str, **kw: Any) -> Any:
        r = await self.http.request(method, path, **kw)
        if r.status_code >= 400:
            raise ApiError(r.status_code, *_message(r))
        return r.json() if r.content else None

    async def get(self, path: str, **params: Any) -> Any:
        return await self.call("GET", path, params={k: v for k, v in params.items()
                                                    if v not in (None, "")})


def _message(r: httpx.Response) -> tuple[str, str]:
    """The answer's message and code."""
    try:
        body = r.json()
    except ValueError:
        return r.text[:300] or r.reason_phrase, ""
    if isinstance(body, dict):
        if isinstance(body.get("error"), dict):
            return str(body["error"].get("message")), str(body["error"].get("type") or "")
        if "message" in body:
            return str(body["message"]), str(body.get("errorCode") or "")
    return r.reason_phrase, ""
