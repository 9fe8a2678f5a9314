"""The catalog's own small S3 requests, sent directly: reading a metadata
file or the head of a manifest (one ranged GET) and creating a metadata
file (one PUT with ``If-None-Match: *``), over a kept HTTP connection and
signed by catalog.metadata.sigv4 rather than through s3fs.

Why: botocore's request machinery costs about 1.7 ms of CPU a request (its
parameter checks, hooks, user agent, endpoint rules, response parsing);
this takes about 0.45. An append's commit makes three such requests (its
metadata file, the manifest list it checks, a manifest's header), and on a
busy server that CPU is what the commit waits for (docs/performance.md).

Only answers with one meaning are taken here: a GET's 200 or 206 (the
bytes), 404 (no such file) and 416 (an empty file); a create's 200, 412,
409 ConditionalRequestConflict and 501 NotImplemented (made; there
already; being made; no conditional writes here).
Anything else — a 403, a redirect, a 5xx, a slow-down, a dropped
connection — gives None, and the caller sends the request again through
s3fs, whose retries, redirects and errors are the catalog's as before. A
store that refuses a direct request (a 3xx, 400 or 403: a region, an
endpoint or a signature this module got wrong) is sent none again.

Used only where the settings are the ones s3fs's client would use — the
standard AWS settings, read from botocore's session as s3fs reads them
(credentials, region, endpoint, addressing style) — and nothing else is
configured: no fsspec options for S3, no proxy, no other botocore S3
option (the certificates botocore would trust are the ones trusted here).
Elsewhere every request goes through s3fs.
"""

from __future__ import annotations

import hashlib
import http.client
import logging
import re
import ssl
import threading
import time
import urllib.request
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit

from catalog.metadata.sigv4 import Signer
from core.errors import SapwoodError

log = logging.getLogger(__name__)

_SCHEMES = ("s3", "s3a")
# A kept connection idle longer than this is not reused: S3 closes idle
# connections after about 20 s, and a request sent on one it closed fails
# without an answer.
_IDLE_S = 4.0
_TIMEOUT_S = 60.0
# An error answer's body is read up to this, for its code.
_ERROR_BYTES = 64 * 1024
# Sent with each direct request: a store's logs tell them from s3fs's.
USER_AGENT = "sapwood-catalog"
_CODE = re.compile(rb"<Code>([A-Za-z]+)</Code>")
# A bucket name that can be a host name's first label (no dots).
_DNS_BUCKET = re.compile(r"[a-z0-9][a-z0-9-]{1,61}[a-z0-9]")


class Unconditional(Exception):
    """The store does not take conditional writes (a create's 501
    NotImplemented, as AWS S3 before August 2024): catalog.metadata.exclusive
    creates there by looking first."""


@dataclass(frozen=True)
class _Store:
    scheme: str
    netloc: str  # the endpoint's host[:port]
    prefix: str  # the endpoint's path, when it has one
    virtual: bool  # the bucket in the host name (AWS), not in the path
    region: str
    tls: ssl.SSLContext | None  # botocore's CA bundle, over https


class Direct:
    def __init__(self, store: _Store, signer: Signer) -> None:
        self.store = store
        self.signer = signer
        self.refused = False  # the store refused a direct request: none again
        self._local = threading.local()

    # -- requests ---------------------------------------------------------------------
    def get(self, bucket: str, key: str, want: int) -> bytes | None:
        """A file's first ``want`` bytes (all of it, when shorter);
        FileNotFoundError when there is none; None: not answered here."""
        answer = self._send("GET", bucket, key, {"range": f"bytes=0-{want - 1}"}, b"", want)
        if answer is None:
            return None
        status, body = answer
        if status in (200, 206):
            return body
        if status == 404:
            raise FileNotFoundError(f"{bucket}/{key}")
        if status == 416:  # a range of an empty object
            return b""
        self._unanswered(status, body)
        return None

    def create(self, bucket: str, key: str, data: bytes) -> bool | None:
        """True when the file was made; FileExistsError when a file is
        there (or being made); Unconditional when the store takes no
        conditional writes; None: not answered here."""
        signed = {"x-amz-content-sha256": hashlib.sha256(data).hexdigest(),
                  "if-none-match": "*"}
        answer = self._send("PUT", bucket, key, signed, data, 0)
        if answer is None:
            return None
        status, body = answer
        if status == 200:
            return True
        if status == 412 or (status == 409 and _code(body) == "ConditionalRequestConflict"):
            raise FileExistsError(f"{bucket}/{key}")
        if status == 501 and _code(body) == "NotImplemented":
            raise Unconditional(f"{bucket}/{key}")
        self._unanswered(status, body)
        return None

    def _unanswered(self, status: int, body: bytes) -> None:
        if 300 <= status < 400 or status in (400, 403):
            if not self.refused:
                log.warning("S3 answered a direct request %s %s: the catalog's own S3 "
                            "requests go through s3fs from now on", status,
                            (_code(body) or "")[:60])
            self.refused = True

    # -- HTTP -------------------------------------------------------------------------
    def _send(self, method: str, bucket: str, key: str, signed: dict[str, str],
              body: bytes, want: int) -> tuple[int, bytes] | None:
        """The answer's status and body (a GET's up to ``want`` bytes), or
        None when the request could not be made or answered."""
        if self.refused:
            return None
        s = self.store
        path = "/" + quote(key, safe="/")
        if s.virtual:
            netloc = f"{bucket}.{s.netloc}"
        else:
            netloc, path = s.netloc, f"/{quote(bucket, safe='')}{path}"
        path = s.prefix + path
        try:
            # Every header signed, and the signature's own (host is sent as signed).
            headers = {k: v[0] for k, v in self.signer.sign(
                method, f"{s.scheme}://{netloc}{path}", signed, {}, s.region).items()}
        except SapwoodError:  # no credentials: s3fs says so in its own words
            return None
        headers["Host"] = netloc
        headers["User-Agent"] = USER_AGENT
        conn = self._connection(netloc)
        try:
            conn.request(method, path, body=body or None, headers=headers)
            r = conn.getresponse()
            out = r.read(want if r.status in (200, 206) and method == "GET" else _ERROR_BYTES)
            if not r.isclosed() or r.will_close:
                # Left unread (more than asked for), or closed by the store.
                conn.close()
        except (OSError, http.client.HTTPException):
            conn.close()
            return None
        self._local.used = time.monotonic()
        return r.status, out

    def _connection(self, netloc: str) -> http.client.HTTPConnection:
        """This thread's kept connection to ``netloc``, or a new one."""
        local = self._local
        conn: http.client.HTTPConnection | None = getattr(local, "conn", None)
        if conn is not None and (local.netloc != netloc or conn.sock is None
                                 or time.monotonic() - local.used > _IDLE_S):
            conn.close()
            conn = None
        if conn is None:
            conn = http.client.HTTPSConnection(netloc, timeout=_TIMEOUT_S,
                                               context=self.store.tls) \
                if self.store.scheme == "https" \
                else http.client.HTTPConnection(netloc, timeout=_TIMEOUT_S)
            local.conn, local.netloc, local.used = conn, netloc, time.monotonic()
        return conn


def _code(body: bytes) -> str | None:
    found = _CODE.search(body)
    return found.group(1).decode() if found else None


# -- the one instance -----------------------------------------------------------------
_lock = threading.Lock()
_found: list[Direct | None] = []


def direct() -> Direct | None:
    """The process's direct requests, or None where they are not used."""
    if not _found:
        with _lock:
            if not _found:
                _found.append(from_settings())
    return _found[0]


def from_settings() -> Direct | None:
    """Direct requests with the standard AWS settings as they are now, or
    None where s3fs would send its requests differently."""
    try:
        store = _store()
    except Exception as e:  # botocore could not make a client: s3fs will say why
        log.debug("no direct S3 requests: %s", e)
        return None
    return Direct(store, Signer()) if store is not None else None


def _store() -> _Store | None:
    import fsspec.config

    proxies = {k for k in urllib.request.getproxies() if k != "no"}
    if any(fsspec.config.conf.get(p) for p in _SCHEMES) or proxies:
        return None
    import botocore.httpsession
    import botocore.session

    session = botocore.session.get_session()
    client: Any = session.create_client("s3")
    config = client.meta.config
    options = dict(config.s3 or {})
    style = options.pop("addressing_style", None)
    if options or config.proxies or config.client_cert:
        return None
    endpoint = urlsplit(client.meta.endpoint_url)
    aws = endpoint.hostname is not None and endpoint.hostname.endswith(".amazonaws.com")
    virtual = style == "virtual" or (style in (None, "auto") and aws)
    # The certificates botocore trusts: its setting (AWS_CA_BUNDLE, a
    # profile's ca_bundle), else its default bundle.
    tls = ssl.create_default_context(cafile=botocore.httpsession.get_cert_path(
        session.get_config_variable("ca_bundle") or True)) \
        if endpoint.scheme == "https" else None
    return _Store(endpoint.scheme, endpoint.netloc, endpoint.path.rstrip("/"), virtual,
                  client.meta.region_name or "us-east-1", tls)


def split(fs_or_uri: str) -> tuple[str, str] | None:
    """The bucket and key of an ``s3://`` location (or of s3fs's
    ``bucket/key`` path), or None."""
    scheme, sep, rest = fs_or_uri.partition("://")
    if sep and scheme not in _SCHEMES:
        return None
    bucket, _, key = (rest if sep else fs_or_uri).partition("/")
    return (bucket, key) if bucket and key else None


def get(uri: str, want: int) -> bytes | None:
    """``Direct.get`` for an ``s3://`` location; None: not answered here."""
    where = split(uri)
    d = direct() if where is not None else None  # botocore's settings: read for S3 only
    if d is None or where is None or not _addressable(d, where[0]):
        return None
    return d.get(where[0], where[1], want)


def create(fs: Any, path: str, data: bytes) -> bool | None:
    """``Direct.create`` for s3fs's ``bucket/key`` path; None: not
    answered here (not S3, or not a direct request)."""
    protocol = fs.protocol if isinstance(fs.protocol, tuple) else (fs.protocol,)
    if not any(p in _SCHEMES for p in protocol):
        return None
    d, where = direct(), split(path)
    if d is None or where is None or not _addressable(d, where[0]):
        return None
    return d.create(where[0], where[1], data)


def _addressable(d: Direct, bucket: str) -> bool:
    """Whether a request can name the bucket the way the store's client
    would: in the host name, only a bucket that is one label (no dots: a
    TLS certificate covers one)."""
    return not d.store.virtual or bool(_DNS_BUCKET.fullmatch(bucket))
