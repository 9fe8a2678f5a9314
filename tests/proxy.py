"""A loopback HTTP proxy that loses answers: it forwards every request to a
server and relays the answer, except for requests a rule picks, whose
answer it reads from the server and then drops (the client's connection is
closed with nothing sent), as a timeout, a dropped connection or a proxy
restart would. ``dropped`` keeps what the server had answered. It can also
hold the requests another rule picks until the test releases them."""

from __future__ import annotations

import http.client
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# Which requests lose their answer: (method, path) -> whether to drop it.
Rule = Callable[[str, str], bool]
_HOP = {"connection", "keep-alive", "transfer-encoding", "proxy-connection", "upgrade"}


@dataclass
class Dropped:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    status: int
    answer: bytes
    # The headers of the answer the client never got, by lower-case name.
    answer_headers: dict[str, str] = field(default_factory=dict)


@dataclass
class LossyProxy:
    upstream: str                    # "127.0.0.1:port"
    rule: Rule
    # Called once the server's answer to a dropped request has begun (e.g.
    # to kill the server before the rest of it is read).
    on_drop: Callable[[], None] | None = None
    times: int = 1                   # how many answers to drop
    dropped: list[Dropped] = field(default_factory=list)
    # Every request received: (method, path, headers by lower-case name).
    received: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)
    # The body of every request received, in the same order.
    bodies: list[bytes] = field(default_factory=list)
    # Every answer passed on: (method, path, status, headers by lower-case name).
    relayed: list[tuple[str, str, int, dict[str, str]]] = field(default_factory=list)
    # Requests a rule picks wait, before they are forwarded, until ``release``
    # is set; ``holding`` is set when one arrives (a store that is slow to
    # answer, for as long as a test needs).
    hold: Rule | None = None
    holding: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)
    _server: ThreadingHTTPServer | None = None

    @property
    def base(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> LossyProxy:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _relay(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
                proxy.received.append((self.command, self.path,
                                       {k.lower(): v for k, v in headers.items()}))
                proxy.bodies.append(body)
                if proxy.hold is not None and proxy.hold(self.command, self.path):
                    proxy.holding.set()
                    proxy.release.wait(120)
                drop = len(proxy.dropped) < proxy.times and proxy.rule(self.command, self.path)
                conn = http.client.HTTPConnection(proxy.upstream, timeout=60)
                conn.request(self.command, self.path, body=body or None, headers=headers)
                r = conn.getresponse()
                if drop:
                    if proxy.on_drop is not None:
                        proxy.on_drop()
                    try:
                        answer = r.read()
                    except (http.client.HTTPException, OSError):
                        answer = b""
                    proxy.dropped.append(Dropped(self.command, self.path, headers, body,
                                                 r.status, answer,
                                                 {k.lower(): v for k, v in r.getheaders()}))
                    conn.close()
                    self.close_connection = True  # nothing is sent back
                    return
                data = r.read()
                conn.close()
                proxy.relayed.append((self.command, self.path, r.status,
                                      {k.lower(): v for k, v in r.getheaders()}))
                self.send_response(r.status)
                for k, v in r.getheaders():
                    if k.lower() not in _HOP and k.lower() != "content-length":
                        self.send_header(k, v)
                # A HEAD's answer has no body but tells the body's length.
                self.send_header("Content-Length", r.getheader("Content-Length", "0")
                                 if self.command == "HEAD" else str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _relay

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()
