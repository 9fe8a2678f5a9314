"""The client's transport: one httpx connection pool to a catalog, its
credential and commit author on every request, and refusals raised as the
typed errors of client.errors."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import httpx

from client.errors import Unreachable, refusal

# Sapwood's header naming the author of the commits a request makes.
AUTHOR_HEADER = "Sapwood-Commit-Author"
# What a ref spec keeps unquoted in a path (the reference grammar's marks).
_REF_SAFE = "@*~^:.-_"


def ref_path(ref: str) -> str:
    """A ref spec (``main``, ``dev@ab12``, ``main*2026-01-01T00:00:00Z``) as
    a path segment; a name with ``/`` is sent as ``%2F``."""
    return quote(ref, safe=_REF_SAFE)


def key_path(key: str) -> str:
    """A dotted key (``ns.v``) as a path segment (Nessie's path form)."""
    return quote(key, safe="")


def server_root(uri: str) -> str:
    """``http://host:port`` from the server's root or any of its catalog URIs."""
    return uri.rstrip("/").split("/iceberg", 1)[0]


class Http:
    def __init__(self, uri: str, credential: str | None = None, author: str | None = None,
                 timeout: float = 60) -> None:
        """``uri``: the server's root (or an Iceberg catalog URI of it);
        ``credential``: an API key (``id:secret``) or an access token, sent
        as a bearer token (default: ``SAPWOOD_CREDENTIAL``); ``author``: the
        author of the commits this client's writes make."""
        self.uri = server_root(uri)
        credential = credential or os.environ.get("SAPWOOD_CREDENTIAL")
        self.credential = bool(credential)
        self.author = author
        headers = {"Authorization": f"Bearer {credential}"} if credential else {}
        if author:
            headers[AUTHOR_HEADER] = author
        # A TLS context (loading the CA bundle: 25 ms of CPU, a tenth of a
        # CLI verb's run) only for an https catalog; plain http never
        # negotiates TLS, and the client follows no redirects.
        self.http = httpx.Client(base_url=self.uri, timeout=timeout, headers=headers,
                                 verify=self.uri.startswith("https:"))

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> Http:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def send(self, method: str, path: str, **kw: Any) -> httpx.Response:
        """The response, whatever its status; a catalog that cannot be
        reached is Unreachable (status 0) naming the URI tried."""
        try:
            return self.http.request(method, path, **kw)
        except httpx.ConnectError as e:
            raise Unreachable(self.uri, "connection refused" if "refused" in str(e).lower()
                              else str(e)) from None
        except httpx.HTTPError as e:
            raise Unreachable(self.uri, str(e) or type(e).__name__) from None

    def call(self, method: str, path: str, **kw: Any) -> dict[str, Any]:
        """The API's JSON answer; a refusal raises its typed ApiError."""
        r = self.send(method, path, **kw)
        if r.status_code >= 400:
            raise refusal(r)
        return r.json() if r.content else {}

    def pages(self, path: str, params: dict[str, Any] | None = None, **kw: Any,
              ) -> Iterator[dict[str, Any]]:
        """Every page of a paged listing (``hasMore``, ``token`` → ``pageToken``);
        ``kw`` goes to ``call``."""
        token = None
        while True:
            page = self.call("GET", path, params={**(params or {}),
                                                  **({"pageToken": token} if token else {})},
                             **kw)
            yield page
            token = page.get("token")
            if not page.get("hasMore"):
                return
