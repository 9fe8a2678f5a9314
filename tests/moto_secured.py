"""moto's server (tests.s3.SecuredS3 runs it in a process of its own), with
its signature check made to read a query the way S3 does.

moto checks a signature against a URL it rebuilds from the request, with
the query's values decoded ('wh%2Ft%2F' becomes 'wh/t/'), so every signed
listing whose prefix holds a '/' is refused (SignatureDoesNotMatch) although
AWS accepts it. Here the canonical query is built from the decoded pairs,
each encoded as SigV4 says (every byte but A-Z a-z 0-9 - _ . ~), which is
what the clients signed. Only this process is changed.

It also checks what AWS S3 checks and moto does not: a payload hash
(``x-amz-content-sha256``) and a ``Content-MD5`` must be the body's
(400 XAmzContentSHA256Mismatch, BadDigest), and every ``x-amz-*`` header
must be signed (403 AccessDenied, "There were headers present in the
request which were not signed"): moto's signature check takes the claimed
hash as the body's, so without this a request signed for one body could
be sent with any other.

``POST /_sapwood/age?prefix=P&seconds=N`` makes the objects below P look N
seconds older (tests.s3.SecuredS3.age): what time passing does to them."""

from __future__ import annotations

import base64
import hashlib
import io
import sys
from typing import Any
from urllib.parse import quote, unquote

import botocore.auth


def _canonical_query(self: Any, parts: Any) -> str:
    if not parts.query:
        return ""
    pairs = []
    for pair in parts.query.split("&"):
        key, _, value = pair.partition("=")
        pairs.append((quote(unquote(key), safe="-_.~"), quote(unquote(value), safe="-_.~")))
    return "&".join(f"{k}={v}" for k, v in sorted(pairs))


botocore.auth.SigV4Auth._canonical_query_string_url = _canonical_query  # type: ignore[method-assign]


def _with_aging(call: Any) -> Any:
    def dispatch(self: Any, environ: dict[str, Any], start_response: Any) -> Any:
        if environ.get("PATH_INFO") != "/_sapwood/age":
            return call(self, environ, start_response)
        from datetime import timedelta
        from urllib.parse import parse_qs

        from moto.core import DEFAULT_ACCOUNT_ID
        from moto.s3.models import s3_backends

        query = parse_qs(environ.get("QUERY_STRING", ""))
        prefix, seconds = query["prefix"][0], float(query["seconds"][0])
        n = 0
        for bucket in s3_backends[DEFAULT_ACCOUNT_ID]["global"].buckets.values():
            for key in bucket.keys.values():
                if key.name.startswith(prefix):
                    key.last_modified -= timedelta(seconds=seconds)
                    n += 1
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [str(n).encode()]

    return dispatch


def _refusal(environ: dict[str, Any]) -> tuple[str, str, str] | None:
    """What AWS S3 would refuse in this request before reading it, or None."""
    auth = environ.get("HTTP_AUTHORIZATION", "")
    if "SignedHeaders=" not in auth:
        return None
    signed = set(auth.split("SignedHeaders=", 1)[1].split(",", 1)[0].split(";"))
    for name in environ:
        header = name[5:].replace("_", "-").lower() if name.startswith("HTTP_") else ""
        if header.startswith("x-amz-") and header not in signed:
            return ("403 Forbidden", "AccessDenied",
                    f"There were headers present in the request which were not signed: {header}")
    claimed = environ.get("HTTP_X_AMZ_CONTENT_SHA256", "")
    md5 = environ.get("HTTP_CONTENT_MD5")
    length = environ.get("CONTENT_LENGTH")
    if (len(claimed) != 64 and md5 is None) or not length:
        return None
    body = environ["wsgi.input"].read(int(length))
    environ["wsgi.input"] = io.BytesIO(body)
    if len(claimed) == 64 and hashlib.sha256(body).hexdigest() != claimed:
        return ("400 Bad Request", "XAmzContentSHA256Mismatch",
                "The provided 'x-amz-content-sha256' header does not match what was computed.")
    if md5 is not None and base64.b64encode(hashlib.md5(body).digest()).decode() != md5:
        return ("400 Bad Request", "BadDigest",
                "The Content-MD5 you specified did not match what we received.")
    return None


def _checking(call: Any) -> Any:
    def dispatch(self: Any, environ: dict[str, Any], start_response: Any) -> Any:
        refused = _refusal(environ)
        if refused is None:
            return call(self, environ, start_response)
        status, code, message = refused
        start_response(status, [("Content-Type", "application/xml")])
        return [f"<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>{code}</Code>"
                f"<Message>{message}</Message></Error>".encode()]

    return dispatch


def _install_aging() -> None:
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication

    DomainDispatcherApplication.__call__ = _checking(_with_aging(  # type: ignore[method-assign]
        DomainDispatcherApplication.__call__))


if __name__ == "__main__":
    from moto.server import main

    _install_aging()
    sys.exit(main())
