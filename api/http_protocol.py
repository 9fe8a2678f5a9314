"""The HTTP/1.1 protocol the server runs under uvicorn: uvicorn's httptools
protocol (llhttp: 1.6 times h11's requests per second on one worker,
docs/performance.md), except that an upgrade it does not take is ignored and
the request served as HTTP/1.1 with its body (RFC 9110, 7.8).

Why a subclass: every JDK HttpClient on an http:// URL (and ``curl --http2``)
offers ``Upgrade: h2c`` with ``Connection: Upgrade, HTTP2-Settings``. Told a
request upgrades, httptools ends the message at its headers (its
headers-complete callback tells llhttp there is no body), calls
``on_message_complete`` and raises ``HttpParserUpgrade`` with the offset of
the first byte it did not read: the body. uvicorn's ``data_received`` only
logs "Unsupported upgrade request." for anything but a websocket and drops
those bytes, so the application gets the request with an empty body
(uvicorn#2722). Here such a request is not started at its first headers;
its head is parsed again, by a fresh parser, without the ``Upgrade`` header,
followed by the bytes the first parser left, so llhttp frames the body
(Content-Length or chunked) and every later request on the connection as
usual. A websocket upgrade still goes where uvicorn sends it (Sapwood serves
none: its app refuses the websocket scope). tests/api/test_http_upgrade.py
shows it over a raw socket.
"""

from __future__ import annotations

import httptools
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol


class HttpProtocol(HttpToolsProtocol):
    """httptools, with an upgrade it does not take ignored (module docstring)."""

    # Set at a request's headers when it offers an upgrade that is not taken:
    # its head as it would be without the offer, to be parsed again.
    _declined: bytes | None = None

    def _new_parser(self) -> httptools.HttpRequestParser:
        parser = httptools.HttpRequestParser(self)
        # As uvicorn sets its own (a response to the first of pipelined requests).
        parser.set_dangerous_leniencies(lenient_data_after_close=True)
        return parser

    def data_received(self, data: bytes) -> None:
        self._unset_keepalive_if_required()
        while True:
            try:
                self.parser.feed_data(data)
                return
            except httptools.HttpParserError:
                msg = "Invalid HTTP request received."
                self.logger.warning(msg)
                self.send_400_response(msg)
                return
            except httptools.HttpParserUpgrade as upgrade:
                if self._should_upgrade():
                    self.handle_websocket_upgrade()
                    return
                head, self._declined = self._declined, None
                if head is None:  # CONNECT: as uvicorn answers it
                    self._unsupported_upgrade_warning()
                    return
                # The parser stopped at the body: the same request again,
                # without the offer, then everything after its head.
                data = head + data[upgrade.args[0]:]
                self.parser = self._new_parser()

    def on_headers_complete(self) -> None:
        offered = self.parser.should_upgrade() and self._get_upgrade() is not None
        if offered and not self._should_upgrade():
            self._declined = self._head_without_upgrade()
            return  # started when parsed again, with its body
        super().on_headers_complete()

    def on_body(self, body: bytes) -> None:
        if self._declined is None:
            super().on_body(body)

    def on_message_complete(self) -> None:
        # httptools ends a request that upgrades at its headers: not yet.
        if self._declined is None:
            super().on_message_complete()

    def _head_without_upgrade(self) -> bytes:
        """The request line and headers as received, but for ``Upgrade``.
        Without it llhttp sees no upgrade whatever Connection says, so the
        request is parsed again once only; the app sees no offer it cannot
        take up (Upgrade is hop-by-hop)."""
        version = self.parser.get_http_version().encode("ascii")
        lines = [self.parser.get_method(), b" ", self.url, b" HTTP/", version, b"\r\n"]
        for name, value in self.headers:
            if name != b"upgrade":
                lines += [name, b": ", value, b"\r\n"]
        lines.append(b"\r\n")
        return b"".join(lines)
