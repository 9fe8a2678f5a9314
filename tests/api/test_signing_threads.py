"""Remote signing from a client's threads: every request a table's FileIO
makes is signed, whatever another FileIO of the same process does then.

PyIceberg 0.12's FsspecFileIO shares one s3fs file system (fsspec's
instance cache) between every FileIO with the same S3 settings, and each
FileIO, once per thread, swaps its signer onto that shared client by
unregistering the one there and registering its own; a request signed in
between has no signer, goes out unsigned, and S3 answers 403
(apache/iceberg-python#3896; tests.pyiceberg_signing, installed by
tests/conftest.py, gives each FileIO a client of its own). The suite saw
it as a HeadObject 403 in test_signing_damage. Here the moment between the
two is held open, so the test does not depend on luck; on an S3 that
checks every signature (tests.moto_secured), the catalog on SQLite and
PostgreSQL."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.hooks import HierarchicalEmitter
from pyiceberg.catalog.rest import RestCatalog

from tests.api.test_pyiceberg import SCHEMA, rows
from tests.fixtures import BACKENDS, database_url
from tests.s3 import BUCKET, SecuredS3
from tests.server import Server, serving

# The unique id PyIceberg registers its signer under (pyiceberg.io.fsspec._s3).
_SIGNER_ID = 1925


@pytest.fixture(scope="module", params=BACKENDS)
def signing(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
            ) -> Iterator[Server]:
    """A server on a warehouse in an S3 that refuses unsigned requests."""
    tmp = tmp_path_factory.mktemp("signing-threads")
    s3 = SecuredS3.start()
    try:
        env = {**s3.server_env(),
               # botocore's default checksums are not verified by moto's signature check.
               "AWS_REQUEST_CHECKSUM_CALCULATION": "when_required",
               "AWS_RESPONSE_CHECKSUM_VALIDATION": "when_required"}
        with serving(database_url(request, request.param, tmp), tmp, extra_env=env,
                     warehouse=f"s3://{BUCKET}/wh") as server:
            yield server
    finally:
        s3.stop()


def test_a_request_is_signed_while_another_file_io_takes_up_signing(
        signing: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    # PyIceberg holding no storage credentials: every request signed by the catalog.
    etl = RestCatalog("threads", uri=signing.uri(), **{
        "py-io-impl": "pyiceberg.io.fsspec.FsspecFileIO",
        "header.X-Iceberg-Access-Delegation": "remote-signing"})
    etl.create_namespace("sales")
    t = etl.create_table("sales.threads", SCHEMA)
    t.append(rows(2, start=1))
    snap = t.current_snapshot()
    assert snap is not None
    listed = snap.manifest_list
    reader = etl.load_table("sales.threads")
    assert reader.io.new_input(listed).exists()  # its file system, in this thread

    # The other reader's signer, once taken down, stays down until the test
    # lets it go on (others' go up at once).
    down, go_on = threading.Event(), threading.Event()
    unregister = HierarchicalEmitter.unregister

    def held(self: HierarchicalEmitter, event_name: str, handler: Any = None,
             unique_id: Any = None, unique_id_uses_count: bool = False) -> None:
        unregister(self, event_name, handler, unique_id, unique_id_uses_count)
        if unique_id == _SIGNER_ID and event_name == "before-sign.s3" and \
                threading.current_thread().name == "another-reader" and not down.is_set():
            down.set()
            go_on.wait(30)

    monkeypatch.setattr(HierarchicalEmitter, "unregister", held)
    failed: list[BaseException] = []

    def another_reader() -> None:
        try:
            assert etl.load_table("sales.threads").io.new_input(listed).exists()
        except BaseException as e:  # reported by the test's own thread
            failed.append(e)

    other = threading.Thread(target=another_reader, name="another-reader")
    other.start()
    try:
        assert down.wait(30), "the other FileIO never took up signing"
        # The first reader's requests, while the other's signer goes up.
        assert reader.io.new_input(listed).exists()
        assert len(reader.io.new_input(listed).open().read()) > 0
        ids = reader.scan().to_arrow().column("id").to_pylist()
        assert sorted(ids) == [1, 2]
    finally:
        go_on.set()
        other.join(30)
    assert not failed, failed
