"""The one ASGI layer in front of everything: what every request passes
before any route sees it, done in one scan of its headers.

In order: a request id (the caller's ``X-Request-Id`` when it is a sane
token, else a new one) echoed in the answer with the server's time; the
Host check (api.hosts: DNS rebinding); the body limit (api.limits: 413 before
any parser sees an oversized body, announced or chunked, and a gzip or
deflate body decoded within the same limit); the folding of the
Iceberg path shapes and the versioning API's ref segments (api.paths); and,
once the answer is sent, the metrics and one access-log line
(api.observe). These were four layers, each scanning the headers and adding a
coroutine to every request; as one they cost a cached read a third less
(docs/performance.md).
"""

from __future__ import annotations

import time
from urllib.parse import quote

from api.asgi import App, Message, Receive, Scope, Send
from api.hosts import ANY, host_name, refuse_host
from api.limits import DEFAULT_MAX_BODY_BYTES, limit_body
from api.observe.access import HEADER, access_line, request_id
from api.observe.logs import access_enabled
from api.observe.metrics import Metrics
from api.paths import fold_path


class Edge:
    def __init__(self, app: App, metrics: Metrics, *, hosts: list[str],
                 max_bytes: int = DEFAULT_MAX_BODY_BYTES) -> None:
        self.app = app
        self.metrics = metrics
        self.any_host = ANY in hosts
        self.hosts = frozenset(host_name(h) for h in hosts)
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        host = given = length = encoding = None
        chunked = expect = False
        for name, value in scope["headers"]:
            if name == b"host":
                host = value
            elif name == b"content-length":
                length = value
            elif name == HEADER:
                given = value
            elif name == b"transfer-encoding":
                chunked = b"chunked" in value.lower()
            elif name == b"content-encoding":
                encoding = value
            elif name == b"expect":
                expect = value.lower() == b"100-continue"
        rid = request_id(given)
        status = 500
        finished = False  # the whole answer was handed to the server

        async def sending(message: Message) -> None:
            nonlocal status, finished
            if message["type"] == "http.response.start":
                status = message["status"]
                # The server's own time to the answer (Server-Timing: the UI
                # benchmark reads it; browsers show it in their tools).
                dur = (time.perf_counter() - start) * 1000
                message["headers"] = [*message.get("headers", []), (HEADER, rid),
                                      (b"server-timing", f"app;dur={dur:.2f}".encode())]
            elif not message.get("more_body"):
                finished = True
            await send(message)

        try:
            text = host.decode("latin-1") if host is not None else None
            if not self.any_host and (text is None or host_name(text) not in self.hosts):
                await refuse_host(scope, sending, text)
                return
            raw = scope.get("raw_path")
            fold_path(scope, raw.decode("latin-1") if raw else quote(scope["path"]))
            if length is None and not chunked:  # no body at all: most requests
                await self.app(scope, receive, sending)
            else:
                await limit_body(self.app, scope, receive, sending, self.max_bytes,
                                 length, expect, encoding)
        except Exception:
            # Starlette answers an unhandled error with a 500 (api.errors logs
            # it) and then raises it again; passed on to uvicorn, that closes
            # the connection, and the client's next request on it is reset.
            # An answer already sent whole ends here; one cut short cannot.
            if not finished:
                raise
        finally:
            took = time.perf_counter() - start
            route = scope.get("route")
            # The template, never the path: one series per route, not per key.
            template = getattr(route, "path", None) or "unmatched"
            self.metrics.observe(scope["method"], template, status, took)
            if access_enabled():
                access_line(scope, rid, template, status, took)
