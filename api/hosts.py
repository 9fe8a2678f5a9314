"""Serve only the host names the server is configured for.

A page in a browser can reach a server on the loopback address through DNS
rebinding: its own host name, re-pointed at 127.0.0.1, makes the browser send
the page's requests there as same-origin. Those requests still carry the
page's host name in ``Host``; refusing names the server does not know
(SAPWOOD_ALLOWED_HOSTS) defeats the attack whatever the network does. The
check is made in api.edge, before anything else; ``*`` allows any name and
ports are not compared.
"""

from __future__ import annotations

from api.asgi import Message, Scope, Send

ANY = "*"


def host_name(value: str) -> str:
    """The name part of a Host header or a configured entry, lower case,
    without port or a trailing dot: ``[::1]:8181`` → ``[::1]``,
    ``Example.COM.:80`` → ``example.com``. A bare IPv6 address stays whole."""
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        return value[:end + 1] if end > 0 else value  # "[::1" stays malformed: no match
    if value.count(":") == 1:
        value = value.partition(":")[0]
    return value[:-1] if value.endswith(".") and value != "." else value


async def refuse_host(scope: Scope, send: Send, host: str | None) -> None:
    """The answer to a request whose Host is not one the server serves (or
    that has none): 400, and it goes no further (api.edge checks)."""
    from api.errors import error_response

    shown = "no Host header" if host is None else f"host {host[:100]!r}"
    response = error_response(
        400, "BadRequestException",
        f"This server does not answer to {shown}: the host names it serves are set by "
        "SAPWOOD_ALLOWED_HOSTS (comma-separated; '*' for any)", scope)
    await response(scope, _no_receive, send)


async def _no_receive() -> Message:
    return {"type": "http.disconnect"}

