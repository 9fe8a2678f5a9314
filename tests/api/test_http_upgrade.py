"""A request that offers an upgrade the server does not take is served as
HTTP/1.1 with its body (RFC 9110, 7.8). Every JDK HttpClient offers h2c on
an http:// URL, and so does ``curl --http2``. uvicorn's httptools protocol
drops such a request's body (uvicorn#2722); the server parses with httptools
through api/http_protocol.py, which ignores the offer, and these tests run
against that parser (the first checks it is the one the server is given)."""

from __future__ import annotations

import json
import socket
import time
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


def _answers(s: socket.socket, n: int) -> list[tuple[int, dict[str, str], bytes]]:
    """n HTTP/1.1 responses read off the connection (Content-Length framed,
    as the server frames its JSON answers); answers to pipelined requests
    may arrive in one read."""
    data = b""
    out = []
    while len(out) < n:
        while b"\r\n\r\n" not in data:
            got = s.recv(65536)
            assert got, f"the server closed the connection: {data!r}"
            data += got
        head, _, data = data.partition(b"\r\n\r\n")
        status_line, *lines = head.decode("latin-1").split("\r\n")
        headers = {k.strip().lower(): v.strip() for k, v in (x.split(":", 1) for x in lines)}
        size = int(headers["content-length"])
        while len(data) < size:
            got = s.recv(65536)
            assert got, "the server closed the connection mid-answer"
            data += got
        out.append((int(status_line.split()[1]), headers, data[:size]))
        data = data[size:]
    assert not data, f"more than {n} answers: {data!r}"
    return out


def _answer(s: socket.socket) -> tuple[int, dict[str, str], bytes]:
    return _answers(s, 1)[0]


def test_the_server_parses_with_httptools() -> None:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    from api.http_protocol import HttpProtocol
    from api.server import uvicorn_config

    used = uvicorn_config("127.0.0.1", 0, 1, "warning").http
    assert used is HttpProtocol and issubclass(used, HttpToolsProtocol), used


@pytest.mark.parametrize("split", [False, True], ids=["one-write", "head-then-body"])
@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_an_h2c_offer_is_ignored_and_the_body_read(server: Server, conn: socket.socket,
                                                   chunked: bool, split: bool) -> None:
    name = f"up_{'chunked' if chunked else 'sized'}{'_split' if split else ''}"
    request = _post("/iceberg/v1/namespaces",
                    json.dumps({"namespace": [name], "properties": {"k": "v"}}).encode(),
                    chunked=chunked)
    if split:  # the parser meets the offer with none of the body read yet
        head, _, body = request.partition(b"\r\n\r\n")
        conn.sendall(head + b"\r\n\r\n")
        time.sleep(0.2)
        conn.sendall(body)
    else:
        conn.sendall(request)
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


def test_requests_sent_together_after_an_offer_are_each_answered(conn: socket.socket) -> None:
    """Pipelined: the offer's body and the requests after it arrive in one
    write, each parsed after the body (none lost, none taken for a body)."""
    body = json.dumps({"namespace": ["up_piped"], "properties": {"k": "v"}}).encode()
    get = b"GET /iceberg/v1/namespaces/up_piped HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    conn.sendall(_post("/iceberg/v1/namespaces", body, chunked=True) + get
                 + _post("/iceberg/v1/namespaces/up_piped/properties",
                         b'{"updates": {"k": "w"}}', chunked=False) + get)
    answers = _answers(conn, 4)
    assert [status for status, _, _ in answers] == [200] * 4, answers
    assert json.loads(answers[1][2])["properties"] == {"k": "v"}
    assert json.loads(answers[3][2])["properties"] == {"k": "w"}
