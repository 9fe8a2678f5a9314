"""The CLI's HTTP side: one small client for the catalog's two APIs."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import httpx

from core.keys import ContentKey

DEFAULT_URI = "http://127.0.0.1:8181"


class CliError(Exception):
    """One line for the user; the CLI prints it and exits non-zero."""


def ref_path(ref: str) -> str:
    return quote(ref, safe="@*~^:.-_")


class CatalogClient:
    def __init__(self, uri: str, credential: str | None = None) -> None:
        self.uri = uri.rstrip("/")
        # An API key (id:secret) is accepted as a bearer token as it is.
        credential = credential or os.environ.get("SAPWOOD_CREDENTIAL")
        headers = {"Authorization": f"Bearer {credential}"} if credential else {}
        # A TLS context (loading the CA bundle: 25 ms of CPU, a tenth of a
        # verb's run) only for an https catalog; plain http never negotiates
        # TLS, and the client follows no redirects.
        self.http = httpx.Client(base_url=self.uri, timeout=60, headers=headers,
                                 verify=self.uri.startswith("https:"))

    def call(self, method: str, path: str, *, expect_conflict_result: bool = False,
             **kw: Any) -> dict[str, Any]:
        try:
            r = self.http.request(method, path, **kw)
        except httpx.HTTPError as e:
            raise CliError(f"cannot reach the catalog at {self.uri}: {e}") from None
        if r.status_code >= 400:
            raise CliError(_message(r))
        return r.json() if r.content else {}

    def pages(self, path: str, params: dict[str, Any] | None = None,
              ) -> Iterator[dict[str, Any]]:
        """Every page of a paged listing (``hasMore``, ``token`` → ``pageToken``)."""
        token = None
        while True:
            page = self.call("GET", path, params={**(params or {}),
                                                  **({"pageToken": token} if token else {})})
            yield page
            token = page.get("token")
            if not page.get("hasMore"):
                return

    # -- references --------------------------------------------------------------
    def references(self) -> list[dict[str, Any]]:
        return [r for page in self.pages("/api/v2/trees") for r in page["references"]]

    def reference(self, ref: str) -> dict[str, Any]:
        found: dict[str, Any] = self.call("GET", f"/api/v2/trees/{ref_path(ref)}")["reference"]
        return found

    # -- contents ----------------------------------------------------------------
    def content(self, ref: str, key: ContentKey) -> dict[str, Any]:
        return self.call("GET", f"/api/v2/trees/{ref_path(ref)}/contents/"
                                f"{quote(key.to_path_string(), safe='')}")

    def iceberg(self, ref: str, kind: str, key: ContentKey) -> dict[str, Any]:
        ns = quote("\x1f".join(key.elements[:-1]), safe="")
        return self.call("GET", f"/iceberg/{quote(ref, safe='')}/v1/namespaces/{ns}/{kind}/"
                                f"{quote(key.name, safe='')}")


def _message(r: httpx.Response) -> str:
    try:
        body = r.json()
    except ValueError:
        return f"HTTP {r.status_code}: {r.text[:200]}"
    msg = body.get("message") or body.get("error", {}).get("message") or r.text[:200]
    conflicts = (body.get("errorDetails") or {}).get("conflicts") or []
    if conflicts:
        msg += " [" + ", ".join(f"{c.get('key')}: {c.get('conflictType')}"
                                for c in conflicts) + "]"
    return f"HTTP {r.status_code}: {msg}"
