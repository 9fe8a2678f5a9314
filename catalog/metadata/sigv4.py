"""S3 requests signed with the warehouse's credentials (AWS Signature
Version 4): the catalog's own (catalog.metadata.s3_direct) and those it
signs for a client (catalog.delegation).

For a client, the answer is the headers signing adds (``Authorization``,
``X-Amz-Date``, the payload hash, a session token, and what the catalog's
rules add: the writer's mark, ``If-None-Match``, a body's ``Content-MD5``),
which the client adds to its request. Which headers are signed is
catalog.delegation.sign_headers' choice; ``host`` always is, and the
headers a client's HTTP library sets or changes later are not, so they do
not break the signature.

The signature is computed here rather than with botocore's ``S3SigV4Auth``
(tests/catalog/test_delegation.py holds the two equal): botocore's general
machinery took 210 µs a signature, more than a whole cached loadView; this
takes about 15, the derived key being kept for the day.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from typing import Any
from urllib.parse import urlsplit

from core.errors import UnavailableError

UNSIGNED_PAYLOAD = "UNSIGNED-PAYLOAD"


class Signer:
    def __init__(self, clock: Any = time.gmtime) -> None:
        import botocore.session  # only a warehouse on S3 signs: imported when one does

        self._session = botocore.session.get_session()
        self._found: Any = None  # botocore's credentials: looked up once, refreshed by it
        self._clock = clock
        self._keys: dict[tuple[str, str, str], bytes] = {}
        self._last: tuple[Any, str] | None = None  # the last date formatted (_stamp)

    def credentials(self) -> Any:
        """The warehouse's credentials (refreshed by botocore when they rotate)."""
        creds = self._found
        if creds is None:
            # The provider chain (environment, profile, role) is walked once:
            # on every request it cost more than the signature.
            creds = self._found = self._session.get_credentials()
        if creds is None:
            raise UnavailableError("The catalog has no AWS credentials to sign with (the "
                                   "standard AWS settings: AWS_ACCESS_KEY_ID, a profile, a role)")
        return creds.get_frozen_credentials()

    def sign(self, method: str, uri: str, signed: dict[str, str], given: dict[str, str],
             region: str) -> dict[str, list[str]]:
        """The headers to add to the request: ``signed`` (names lower-cased)
        are the ones the signature covers besides ``host``, ``x-amz-date``
        and the session token, ``given`` the client's own (lower-cased): a
        header it sends already with the same value is not repeated."""
        creds = self.credentials()
        parts = urlsplit(uri)
        stamp = self._stamp()
        signed = dict(signed)
        signed["host"] = parts.netloc
        signed["x-amz-date"] = stamp
        signed.setdefault("x-amz-content-sha256", UNSIGNED_PAYLOAD)
        if creds.token:
            signed["x-amz-security-token"] = creds.token
        names = sorted(signed)
        query = "&".join(sorted(f"{k}={v}" for k, _, v in
                                (p.partition("=") for p in parts.query.split("&") if p)))
        canonical = "\n".join([
            method.upper(), parts.path or "/", query,
            # Values trimmed and inner runs of spaces made one (SigV4's Trimall).
            "".join(f"{n}:{' '.join(signed[n].split())}\n" for n in names), ";".join(names),
            signed["x-amz-content-sha256"]])
        scope = f"{stamp[:8]}/{region}/s3/aws4_request"
        to_sign = "\n".join(["AWS4-HMAC-SHA256", stamp, scope,
                             hashlib.sha256(canonical.encode()).hexdigest()])
        # hmac.digest: OpenSSL's one call, a third of hmac.new's time.
        signature = hmac.digest(self._key(creds.secret_key, stamp[:8], region),
                                to_sign.encode(), "sha256").hex()
        signed["authorization"] = (f"AWS4-HMAC-SHA256 Credential={creds.access_key}/{scope}, "
                                   f"SignedHeaders={';'.join(names)}, Signature={signature}")
        return {_SHOWN.get(k, k): [v] for k, v in signed.items()
                if k != "host" and given.get(k) != v}

    def _stamp(self) -> str:
        """The request's date as SigV4 writes it (formatted once a second)."""
        now = self._clock()
        last = self._last
        if last is not None and last[0] == now:
            return last[1]
        stamp = time.strftime("%Y%m%dT%H%M%SZ", now)
        self._last = (now, stamp)
        return stamp

    def _key(self, secret: str, day: str, region: str) -> bytes:
        found = self._keys.get((secret, day, region))
        if found is None:
            key = ("AWS4" + secret).encode()
            for part in (day, region, "s3", "aws4_request"):
                key = hmac.digest(key, part.encode(), "sha256")
            if len(self._keys) > 64:
                self._keys.clear()
            self._keys[(secret, day, region)] = found = key
        return found


# The spelling of an answer's header: the AWS SDKs' (Iceberg's Java client
# merges the answer with its request's headers by name).
_SHOWN = {"authorization": "Authorization", "x-amz-date": "X-Amz-Date",
          "x-amz-content-sha256": "X-Amz-Content-SHA256",
          "x-amz-security-token": "X-Amz-Security-Token", "content-md5": "Content-MD5",
          "if-none-match": "If-None-Match"}
