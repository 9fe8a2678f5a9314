"""The catalog's own S3 requests sent directly (catalog.metadata.s3_direct):
signed so that a store checking every signature accepts them, answered only
when the answer has one meaning, and not used where s3fs would send its
requests differently."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import certifi
import fsspec.config
import pytest

from catalog.metadata import s3_direct
from catalog.metadata.s3_direct import Direct
from tests.proxy import LossyProxy
from tests.s3 import BUCKET, SecuredS3

# Keys a client may give a file: spaces, plus signs, escapes, non-ASCII.
KEYS = ["d/plain.avro", "d/a b+c=d.avro", "d/100%25 ü.avro", "d/x~y_z-(1).json"]


@pytest.fixture(scope="module")
def secured() -> Iterator[SecuredS3]:
    s3 = SecuredS3.start()
    try:
        yield s3
    finally:
        s3.stop()


def settled(monkeypatch: pytest.MonkeyPatch, endpoint: str, key_id: str,
            secret: str) -> Direct:
    """Direct requests as the server would settle them from its settings."""
    monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", key_id)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", secret)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    d = s3_direct.from_settings()
    assert d is not None
    return d


def test_requests_a_store_checking_signatures_accepts(
        secured: SecuredS3, monkeypatch: pytest.MonkeyPatch) -> None:
    d = settled(monkeypatch, secured.endpoint, secured.key_id, secured.secret)
    boto = secured.client()
    for i, key in enumerate(KEYS):
        body = f"file {i} ".encode() * 50
        assert d.create(BUCKET, key, body) is True
        assert boto.get_object(Bucket=BUCKET, Key=key)["Body"].read() == body
        assert d.get(BUCKET, key, 10**6) == body
        assert d.get(BUCKET, key, 7) == body[:7]
        # A second create of the name is refused by the store, not written.
        with pytest.raises(FileExistsError):
            d.create(BUCKET, key, b"other")
        assert boto.get_object(Bucket=BUCKET, Key=key)["Body"].read() == body
    with pytest.raises(FileNotFoundError):
        d.get(BUCKET, "d/never-written.avro", 100)
    assert d.create(BUCKET, "d/empty.json", b"") is True
    assert d.get(BUCKET, "d/empty.json", 100) == b""  # S3's 416 for an empty object
    assert not d.refused


def test_one_of_two_creates_of_a_name_wins(secured: SecuredS3,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    d = settled(monkeypatch, secured.endpoint, secured.key_id, secured.secret)
    outcomes: dict[int, object] = {}
    start = threading.Barrier(6)

    def create(i: int) -> None:
        start.wait()
        try:
            outcomes[i] = d.create(BUCKET, "race/one.metadata.json", f"writer {i}".encode())
        except FileExistsError:
            outcomes[i] = "exists"

    threads = [threading.Thread(target=create, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    won = [i for i, o in outcomes.items() if o is True]
    assert len(won) == 1 and sorted(outcomes.values(), key=str).count("exists") == 5, outcomes
    kept = secured.client().get_object(Bucket=BUCKET, Key="race/one.metadata.json")
    assert kept["Body"].read() == f"writer {won[0]}".encode()


def test_a_refused_request_goes_to_s3fs_and_none_follows(
        secured: SecuredS3, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    """Credentials the store refuses (as a wrong region or endpoint would
    be): no answer here, so the caller asks s3fs, no later request is sent
    directly, and the log says so once."""
    with LossyProxy(secured.endpoint.removeprefix("http://"), rule=lambda m, p: False) as proxy:
        d = settled(monkeypatch, proxy.base, secured.key_id, "not-the-secret")
        with caplog.at_level(logging.WARNING, logger="catalog.metadata.s3_direct"):
            assert d.get(BUCKET, KEYS[0], 100) is None
            assert d.refused and len(proxy.received) == 1
            assert d.create(BUCKET, "d/refused.json", b"x") is None
            assert d.get(BUCKET, KEYS[0], 100) is None
        assert len(proxy.received) == 1
        warned = [r.getMessage() for r in caplog.records if r.name == "catalog.metadata.s3_direct"]
        assert len(warned) == 1 and "403" in warned[0], warned


def test_a_lost_answer_is_no_answer(secured: SecuredS3,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A dropped connection gives None (s3fs then retries as it does), and
    the next request is made on a new connection."""
    d = settled(monkeypatch, secured.endpoint, secured.key_id, secured.secret)
    assert d.create(BUCKET, "lost/a.json", b"kept") is True
    with LossyProxy(secured.endpoint.removeprefix("http://"),
                    rule=lambda m, p: m == "GET") as proxy:
        d = settled(monkeypatch, proxy.base, secured.key_id, secured.secret)
        assert d.get(BUCKET, "lost/a.json", 100) is None
        assert proxy.dropped and not d.refused
        assert d.get(BUCKET, "lost/a.json", 100) == b"kept"


class _KeptAlive(BaseHTTPRequestHandler):
    """An S3 that keeps connections open (as AWS's does; moto closes each)
    and answers every GET with ``body``, whatever range is asked."""
    protocol_version = "HTTP/1.1"
    body = b"0123456789" * 10
    connections: list[int] = []

    def setup(self) -> None:
        super().setup()
        self.connections.append(1)

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args: object) -> None:
        pass


def test_a_connection_is_kept_only_when_fully_read(monkeypatch: pytest.MonkeyPatch) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _KeptAlive)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        d = settled(monkeypatch, f"http://127.0.0.1:{server.server_address[1]}", "k", "s")
        body = _KeptAlive.body
        assert d.get(BUCKET, "a", 1000) == body
        assert d.get(BUCKET, "a", 1000) == body
        assert len(_KeptAlive.connections) == 1  # the second GET reused the first's
        # A store that ignores the range sends more than asked: the rest is
        # not read, so that connection is not used again.
        assert d.get(BUCKET, "a", 5) == body[:5]
        assert d.get(BUCKET, "a", 1000) == body
        assert len(_KeptAlive.connections) == 2
    finally:
        server.shutdown()


def test_settings_s3fs_would_use_differently_keep_s3fs(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    settled(monkeypatch, "http://127.0.0.1:9", "k", "s")  # plain settings: direct
    with monkeypatch.context() as m:
        m.setenv("HTTPS_PROXY", "http://127.0.0.1:3128")
        assert s3_direct.from_settings() is None
    with monkeypatch.context() as m:
        m.setitem(fsspec.config.conf, "s3", {"requester_pays": True})
        assert s3_direct.from_settings() is None
    config = tmp_path / "config"
    with monkeypatch.context() as m:
        config.write_text("[default]\ns3 =\n  use_accelerate_endpoint = true\n")
        m.setenv("AWS_CONFIG_FILE", str(config))
        assert s3_direct.from_settings() is None
    with monkeypatch.context() as m:
        config.write_text("[default]\ns3 =\n  addressing_style = virtual\n")
        m.setenv("AWS_CONFIG_FILE", str(config))
        found = s3_direct.from_settings()
        assert found is not None and found.store.virtual
    # Over TLS, the certificates botocore would trust: AWS_CA_BUNDLE's.
    bundle = tmp_path / "one.pem"
    pems = Path(certifi.where()).read_text()
    first = pems.index("-----BEGIN CERTIFICATE-----")
    bundle.write_text(pems[first:pems.index("-----END CERTIFICATE-----") + 25] + "\n")
    with monkeypatch.context() as m:
        m.setenv("AWS_ENDPOINT_URL", "https://store.example:9000")
        m.setenv("AWS_CA_BUNDLE", str(bundle))
        found = s3_direct.from_settings()
        assert found is not None and found.store.tls is not None
        assert len(found.store.tls.get_ca_certs()) == 1
    # AWS itself: the bucket in the host name, as botocore addresses it.
    monkeypatch.delenv("AWS_ENDPOINT_URL")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-1")
    found = s3_direct.from_settings()
    assert found is not None and found.store.virtual
    assert (found.store.scheme, found.store.netloc, found.store.region) == \
        ("https", "s3.eu-west-1.amazonaws.com", "eu-west-1")
