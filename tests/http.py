"""httpx for the test servers, which speak plain http: clients made without
the TLS context httpx builds for every client by default (loading the CA
bundle costs 25 ms of CPU each, and the suite makes thousands of clients,
one per server-start poll among them)."""

from __future__ import annotations

from typing import Any

import httpx


def http_client(**kw: Any) -> httpx.Client:
    kw.setdefault("verify", False)  # plain http: no TLS is negotiated
    return httpx.Client(**kw)


def http_request(method: str, url: str, **kw: Any) -> httpx.Response:
    """``httpx.request`` (get, post, …) on a client without a TLS context."""
    with http_client(timeout=kw.pop("timeout", 5.0)) as c:
        return c.request(method, url, **kw)
