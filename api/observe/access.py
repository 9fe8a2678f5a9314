"""The outermost ASGI layer: a request id (the caller's ``X-Request-Id`` when
it is a sane token, else a new one) echoed in the response, and, once the
answer is sent, the metrics and one access-log line with the principal,
reference, route template, status and duration."""

from __future__ import annotations

import itertools
import logging
import os
import re
import time

from api.asgi import App, Message, Receive, Scope, Send
from api.auth.guard import PRINCIPAL
from api.observe.logs import ACCESS
from api.observe.metrics import Metrics
from api.paths import SCOPE_KEY

_SANE = re.compile(r"[A-Za-z0-9._-]{1,128}")
HEADER = b"x-request-id"
_PROCESS = os.urandom(8).hex()
_COUNT = itertools.count(int.from_bytes(os.urandom(4), "big"))


class Observe:
    def __init__(self, app: App, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        given = next((v.decode("latin-1") for k, v in scope["headers"] if k == HEADER), "")
        # 32 hex digits: this process's random half and a counter (a system
        # call for random bits on every request cost more than the rest of
        # this layer).
        rid = given if given and _SANE.fullmatch(given) else f"{_PROCESS}{next(_COUNT):016x}"
        status = 500
        finished = False  # the whole answer was handed to the server

        async def sending(message: Message) -> None:
            nonlocal status, finished
            if message["type"] == "http.response.body" and not message.get("more_body"):
                finished = True
            if message["type"] == "http.response.start":
                status = message["status"]
                # The server's own time to the answer (Server-Timing: the UI
                # benchmark reads it; browsers show it in their tools).
                dur = (time.perf_counter() - start) * 1000
                message["headers"] = [*message.get("headers", []),
                                      (HEADER, rid.encode("latin-1")),
                                      (b"server-timing", f"app;dur={dur:.2f}".encode())]
            await send(message)

        try:
            await self.app(scope, receive, sending)
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
            if ACCESS.isEnabledFor(logging.INFO):
                _log(scope, rid, template, status, took)


def _log(scope: Scope, rid: str, template: str, status: int, took: float) -> None:
    who = scope.get(PRINCIPAL)
    ref = scope.get(SCOPE_KEY, (None, None))
    ACCESS.info("%s %s %d %.1fms", scope["method"], template, status, took * 1000,
                extra={"fields": {
                    "request_id": rid, "method": scope["method"], "route": template,
                    "path": scope.get("path"), "status": status,
                    "duration_ms": round(took * 1000, 3),
                    "principal": who.name if who is not None else None,
                    "reference": ref[0] or ref[1]}})
