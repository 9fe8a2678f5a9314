"""A store that predates S3's conditional writes (issue 48).

AWS S3 answered a PUT carrying ``If-None-Match`` 501 NotImplemented until
August 2024, and some S3-compatible stores still do. The catalog's writes
must not all fail there: it falls back to looking the name up and then
writing it with a plain PUT (what it did before conditional writes), once
per store, so later files cost no refused request. The store here is moto
behind a loopback proxy that answers every conditional PUT as such a store
does and passes the rest on."""

from __future__ import annotations

import http.client
import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC
from pyiceberg.schema import Schema
from pyiceberg.table.metadata import new_table_metadata
from pyiceberg.table.sorting import UNSORTED_SORT_ORDER
from pyiceberg.types import LongType, NestedField

from catalog.metadata.files import MetadataFiles
from catalog.metadata.locations import Locations
from catalog.metadata.reading import MetadataReader
from core.errors import BadRequestError
from tests.s3 import BUCKET, LocalS3

_NOT_IMPLEMENTED = (b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>NotImplemented</Code>'
                    b'<Message>A header you provided implies functionality that is not '
                    b'implemented</Message><Header>If-None-Match</Header>'
                    b'<RequestId>0</RequestId></Error>')
_HOP = {"connection", "keep-alive", "transfer-encoding", "upgrade"}


class OlderS3:
    """moto, except that a PUT with If-None-Match is answered 501."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        # Every request: (method, path, whether it was conditional, status).
        self.seen: list[tuple[str, str, bool, int]] = []
        older = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _relay(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                conditional = "If-None-Match" in self.headers
                if self.command == "PUT" and conditional:
                    older.seen.append((self.command, self.path, True, 501))
                    self.send_response(501)
                    self.send_header("Content-Type", "application/xml")
                    self.send_header("Content-Length", str(len(_NOT_IMPLEMENTED)))
                    self.end_headers()
                    self.wfile.write(_NOT_IMPLEMENTED)
                    return
                headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
                conn = http.client.HTTPConnection(older.upstream, timeout=60)
                conn.request(self.command, self.path, body=body or None, headers=headers)
                r = conn.getresponse()
                data = r.read()
                conn.close()
                older.seen.append((self.command, self.path, conditional, r.status))
                self.send_response(r.status)
                for k, v in r.getheaders():
                    if k.lower() not in _HOP and k.lower() != "content-length":
                        self.send_header(k, v)
                self.send_header("Content-Length", r.getheader("Content-Length", "0")
                                 if self.command == "HEAD" else str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_PUT = do_HEAD = do_DELETE = do_POST = _relay

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def older(s3: LocalS3, monkeypatch: pytest.MonkeyPatch) -> Iterator[OlderS3]:
    """This process's S3 client pointed at the older store."""
    import s3fs

    store = OlderS3(s3.endpoint.removeprefix("http://"))
    for k, v in {**s3.env, "AWS_ENDPOINT_URL": store.base}.items():
        monkeypatch.setenv(k, v)
    s3fs.S3FileSystem.clear_instance_cache()  # none made before, for another endpoint
    try:
        yield store
    finally:
        store.close()
        s3fs.S3FileSystem.clear_instance_cache()


def test_a_store_without_conditional_writes_still_takes_files_once(
        s3: LocalS3, older: OlderS3) -> None:
    warehouse = s3.warehouse(f"older{uuid.uuid4().hex[:8]}")
    files = MetadataFiles(MetadataReader(Locations(warehouse, False), 10_000_000, 30))
    schema = Schema(NestedField(1, "n", LongType(), required=False))
    meta = new_table_metadata(schema, UNPARTITIONED_PARTITION_SPEC, UNSORTED_SORT_ORDER,
                              f"{warehouse}/ns/t", {})
    first = f"{warehouse}/ns/t/metadata/00000-{uuid.uuid4()}.metadata.json"
    second = f"{warehouse}/ns/t/metadata/00001-{uuid.uuid4()}.metadata.json"

    def key(loc: str) -> str:
        return "/" + loc.removeprefix("s3://")

    def sent(act: Any) -> list[tuple[str, str, bool, int]]:
        before = len(older.seen)
        act()
        return older.seen[before:]

    # The first file: the conditional PUT is refused as not implemented,
    # then the name is looked up (absent: a HEAD, and s3fs's LIST) and the
    # file written with a plain PUT.
    trips = sent(lambda: files.write_table(meta, first))
    assert trips[0] == ("PUT", key(first), True, 501), trips
    assert trips[-1] == ("PUT", key(first), False, 200), trips
    assert {m for m, *_ in trips[1:-1]} <= {"HEAD", "GET"}, trips
    assert s3.client().get_object(Bucket=BUCKET, Key=key(first)[len(BUCKET) + 2:])
    # The same name again: found, refused, nothing written.
    before = len(older.seen)
    with pytest.raises(BadRequestError, match="exists already: files are never overwritten"):
        files.write_table(meta, first)
    assert [m for m, *_ in older.seen[before:]] == ["HEAD"], older.seen[before:]
    # Another file: the store is known now, so no conditional PUT is tried.
    trips = sent(lambda: files.write_table(meta, second))
    assert not any(conditional for _, _, conditional, _ in trips), trips
    assert trips[-1] == ("PUT", key(second), False, 200), trips
