"""moto's server (tests.s3.SecuredS3 runs it in a process of its own), with
its signature check made to read a query the way S3 does.

moto checks a signature against a URL it rebuilds from the request, with
the query's values decoded ('wh%2Ft%2F' becomes 'wh/t/'), so every signed
listing whose prefix holds a '/' is refused (SignatureDoesNotMatch) although
AWS accepts it. Here the canonical query is built from the decoded pairs,
each encoded as SigV4 says (every byte but A-Z a-z 0-9 - _ . ~), which is
what the clients signed. Only this process is changed.

``POST /_sapwood/age?prefix=P&seconds=N`` makes the objects below P look N
seconds older (tests.s3.SecuredS3.age): what time passing does to them."""

from __future__ import annotations

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


def _install_aging() -> None:
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication

    DomainDispatcherApplication.__call__ = _with_aging(  # type: ignore[method-assign]
        DomainDispatcherApplication.__call__)


if __name__ == "__main__":
    from moto.server import main

    _install_aging()
    sys.exit(main())
