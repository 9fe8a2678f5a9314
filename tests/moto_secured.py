"""moto's server (tests.s3.SecuredS3 runs it in a process of its own), with
its signature check made to read a query the way S3 does.

moto checks a signature against a URL it rebuilds from the request, with
the query's values decoded ('wh%2Ft%2F' becomes 'wh/t/'), so every signed
listing whose prefix holds a '/' is refused (SignatureDoesNotMatch) although
AWS accepts it. Here the canonical query is built from the decoded pairs,
each encoded as SigV4 says (every byte but A-Z a-z 0-9 - _ . ~), which is
what the clients signed. Only this process is changed."""

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

if __name__ == "__main__":
    from moto.server import main

    sys.exit(main())
