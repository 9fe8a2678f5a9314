"""The request id and the access line (the edge layer, api.edge, calls both):
an id for every request, echoed in its answer, and, once the answer is
sent, one line with the principal, reference, route template, status and
duration."""

from __future__ import annotations

import itertools
import os
import re

from api.asgi import Scope
from api.auth.guard import PRINCIPAL
from api.observe.logs import log_access
from api.paths import SCOPE_KEY

# Set by api.delegated: what was signed or vended, or refused.
STORAGE = "sapwood.storage"

_SANE = re.compile(rb"[A-Za-z0-9._-]{1,128}")
HEADER = b"x-request-id"
_PROCESS = os.urandom(8).hex()
_COUNT = itertools.count(int.from_bytes(os.urandom(4), "big"))


def request_id(given: bytes | None) -> bytes:
    """The caller's ``X-Request-Id`` when it is a sane token, else 32 hex
    digits: this process's random half and a counter (a system call for
    random bits on every request cost more than the rest of the edge)."""
    if given and _SANE.fullmatch(given):
        return given
    return f"{_PROCESS}{next(_COUNT):016x}".encode()


def access_line(scope: Scope, rid: bytes, template: str, status: int, took: float) -> None:
    who = scope.get(PRINCIPAL)
    ref = scope.get(SCOPE_KEY, (None, None))
    method = scope["method"]
    storage = scope.get(STORAGE)  # a signing or vending decision (api.delegated)
    msg = "%s %s %d %.1fms"
    args: tuple[object, ...] = (method, template, status, took * 1000)
    if storage is not None:  # who, which table on which ref, what was decided
        msg, args = msg + " %s %s %s %s", (*args, who.name if who is not None else "anonymous",
                                               scope.get("path"), ref[0] or ref[1] or "main",
                                               storage)
    log_access(msg, args, {
        "request_id": rid.decode("latin-1"), "method": method, "route": template,
        "path": scope.get("path"), "status": status, "duration_ms": round(took * 1000, 3),
        "principal": who.name if who is not None else None,
        "reference": ref[0] or ref[1], **({"storage": storage} if storage else {})})
