"""A request that offers an upgrade the server does not take is served as
HTTP/1.1 with its body (RFC 9110, 7.8). Every JDK HttpClient offers h2c on
an http:// URL (Sapwood's Spark SQL extension is one), and so does
``curl --http2``. uvicorn's httptools parser drops such a request's body
(uvicorn#2722); the test extra installs httptools, so uvicorn would take it
unless the server keeps to h11 (api/server.py)."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator

import pytest

from tests.fixtures import server_fixture
from tests.http import http_client
from tests.server import Server

server = server_fixture(prefix="upgrade")

OFFER = ("Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n"
         "HTTP2-Settings: AAEAAEAAAAIAAAABAAMAAABkAAQBAAAAAAUAAEAA\r\n")


@pytest.fixture
def conn(server: Server) -> Iterator[socket.socket]:
    host, port = server.base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as s:
        yield s


def _post(path: str, body: bytes, *, chunked: bool) -> bytes:
    head = f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    if chunked:
        # Split in two chunks, as a client streaming its body would.
        half = len(body) // 2
        framed = b"".join(b"%x\r\n%s\r\n" % (len(part), part)
                          for part in (body[:half], body[half:])) + b"0\r\n\r\n"
        return (head + OFFER + "Transfer-Encoding: chunked\r\n\r\n").encode() + framed
    return (head + OFFER + f"Content-Length: {len(body)}\r\n\r\n").encode() + body


def _answer(s: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """One HTTP/1.1 response read off the connection (Content-Length framed,
    as the server frames its JSON answers)."""
    data = b""
    while b"\r\n\r\n" not in data:
        got = s.recv(65536)
        assert got, f"the server closed the connection: {data!r}"
        data += got
    head, _, rest = data.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, v in (x.split(":", 1) for x in lines)}
    size = int(headers["content-length"])
    while len(rest) < size:
        got = s.recv(65536)
        assert got, "the server closed the connection mid-answer"
        rest += got
    return int(status_line.split()[1]), headers, rest[:size]


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_an_h2c_offer_is_ignored_and_the_body_read(server: Server, conn: socket.socket,
                                                   chunked: bool) -> None:
    name = f"up_{'chunked' if chunked else 'sized'}"
    conn.sendall(_post("/iceberg/v1/namespaces",
                       json.dumps({"namespace": [name], "properties": {"k": "v"}}).encode(),
                       chunked=chunked))
    status, headers, body = _answer(conn)
    assert status == 200, body  # not 101 Switching Protocols, not 400/422 for a lost body
    assert "upgrade" not in headers, headers
    assert json.loads(body) == {"namespace": [name], "properties": {"k": "v"}}
    # The connection stays HTTP/1.1: a second request on it is answered.
    conn.sendall(f"GET /iceberg/v1/namespaces/{name} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                 .encode())
    status, _, body = _answer(conn)
    assert status == 200 and json.loads(body)["properties"] == {"k": "v"}, body
    with http_client(base_url=server.base, timeout=10) as c:
        assert c.get(f"/iceberg/v1/namespaces/{name}").status_code == 200
