"""Serve only the host names the server is configured for.

A page in a browser can reach a server on the loopback address through DNS
rebinding: its own host name, re-pointed at 127.0.0.1, makes the browser send
the page's requests there as same-origin. Those requests still carry the
page's host name in ``Host``; refusing names the server does not know
(SAPWOOD_ALLOWED_HOSTS) defeats the attack whatever the network does.
"""

from __future__ import annotations

from collections.abc import Iterable

from api.asgi import App, Message, Receive, Scope, Send

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


class AllowedHosts:
    """ASGI middleware: a request whose Host is not one of ``hosts`` (ports are
    not compared) is answered 400 and goes no further. ``*`` allows any."""

    def __init__(self, app: App,
                 hosts: Iterable[str]) -> None:
        self.app = app
        hosts = list(hosts)
        self.any = ANY in hosts
        self.hosts = frozenset(host_name(h) for h in hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.any or scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        host = next((v for k, v in scope["headers"] if k == b"host"), None)
        text = host.decode("latin-1") if host is not None else None
        if text is not None and host_name(text) in self.hosts:
            await self.app(scope, receive, send)
            return
        await self._refuse(scope, send, text)

    async def _refuse(self, scope: Scope, send: Send, host: str | None) -> None:
        from api.errors import error_response

        shown = "no Host header" if host is None else f"host {host[:100]!r}"
        response = error_response(
            400, "BadRequestException",
            f"This server does not answer to {shown}: the host names it serves are set by "
            "SAPWOOD_ALLOWED_HOSTS (comma-separated; '*' for any)", scope)
        await response(scope, _no_receive, send)


async def _no_receive() -> Message:
    return {"type": "http.disconnect"}

