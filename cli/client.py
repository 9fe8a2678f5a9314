"""The CLI's HTTP side: one small client for the catalog's two APIs, and
how their refusals read as one ``error:`` line (docs/cli.md, "Errors")."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import httpx

from cli.missing import Wanted as Wanted
from cli.missing import explain
from cli.missing import ref_path as ref_path
from core.keys import ContentKey

DEFAULT_URI = "http://127.0.0.1:8181"


class CliError(Exception):
    """One line for the user; the CLI prints it and exits non-zero.
    ``status``: the HTTP status of the refusal it says, if it is one."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class CatalogClient:
    def __init__(self, uri: str, credential: str | None = None) -> None:
        self.uri = uri.rstrip("/")
        # An API key (id:secret) is accepted as a bearer token as it is.
        credential = credential or os.environ.get("SAPWOOD_CREDENTIAL")
        self.credential = bool(credential)
        headers = {"Authorization": f"Bearer {credential}"} if credential else {}
        # A TLS context (loading the CA bundle: 25 ms of CPU, a tenth of a
        # verb's run) only for an https catalog; plain http never negotiates
        # TLS, and the client follows no redirects.
        self.http = httpx.Client(base_url=self.uri, timeout=60, headers=headers,
                                 verify=self.uri.startswith("https:"))

    def call(self, method: str, path: str, *, wanted: Wanted | None = None,
             **kw: Any) -> dict[str, Any]:
        """The API's answer; a refusal is a CliError in the CLI's words
        (``wanted``: what a 404 means, for a request about a key)."""
        r = self.send(method, path, **kw)
        if r.status_code >= 400:
            raise CliError(self.refusal(r, wanted), r.status_code)
        return r.json() if r.content else {}

    def send(self, method: str, path: str, **kw: Any) -> httpx.Response:
        """The response, whatever its status; a catalog that cannot be
        reached is a CliError naming the URI tried and what to do."""
        try:
            return self.http.request(method, path, **kw)
        except httpx.ConnectError as e:
            why = "connection refused" if "refused" in str(e).lower() else str(e)
            raise CliError(
                f"cannot reach the catalog at {self.uri} ({why}): start one with "
                "`sapwood serve`, or set SAPWOOD_URI (or --uri) to the catalog's URL"
            ) from None
        except httpx.HTTPError as e:
            raise CliError(f"cannot reach the catalog at {self.uri}: {e}") from None

    def refusal(self, r: httpx.Response, wanted: Wanted | None) -> str:
        """What a refused request says: the API's message, except that a
        401 names the variable that holds a credential, and a 404 names what
        is missing in one wording with what was probably meant."""
        body = _body(r)
        message = _message(r, body)
        if r.status_code == 401:
            if self.credential:
                return (f"the catalog at {self.uri} refused the credential in "
                        f"SAPWOOD_CREDENTIAL: {message}")
            return (f"authentication required by the catalog at {self.uri}: set "
                    "SAPWOOD_CREDENTIAL to an API key (ID:SECRET, from `sapwood key "
                    "create`) or an access token")
        if r.status_code == 404:
            return explain(self, body.get("errorCode"), message, wanted)
        if r.status_code >= 500:
            return f"the catalog failed (HTTP {r.status_code}): {message}"
        return message

    def pages(self, path: str, params: dict[str, Any] | None = None,
              wanted: Wanted | None = None) -> Iterator[dict[str, Any]]:
        """Every page of a paged listing (``hasMore``, ``token`` → ``pageToken``)."""
        token = None
        while True:
            page = self.call("GET", path, wanted=wanted,
                             params={**(params or {}), **({"pageToken": token} if token else {})})
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
    def content(self, ref: str, key: ContentKey, kind: str = "key") -> dict[str, Any]:
        return self.call("GET", f"/api/v2/trees/{ref_path(ref)}/contents/"
                                f"{quote(key.to_path_string(), safe='')}",
                         wanted=Wanted(ref, str(key), kind))

    def iceberg(self, ref: str, kind: str, key: ContentKey) -> dict[str, Any]:
        ns = quote("\x1f".join(key.elements[:-1]), safe="")
        return self.call("GET", f"/iceberg/{quote(ref, safe='')}/v1/namespaces/{ns}/{kind}/"
                                f"{quote(key.name, safe='')}",
                         wanted=Wanted(ref, str(key), kind.removesuffix("s")))


def _body(r: httpx.Response) -> dict[str, Any]:
    try:
        body = r.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def _message(r: httpx.Response, body: dict[str, Any]) -> str:
    """The API's message as it is: the versioning API's ``message``, the
    Iceberg REST API's ``error.message``, else the body's first characters;
    a refused commit's conflicts after it."""
    error = body.get("error")
    msg = (body.get("message") or (error.get("message") if isinstance(error, dict) else None)
           or r.text[:200] or f"HTTP {r.status_code}")
    conflicts = (body.get("errorDetails") or {}).get("conflicts") or []
    if conflicts:
        msg += " [" + ", ".join(f"{c.get('key')}: {c.get('conflictType')}"
                                for c in conflicts) + "]"
    return str(msg)
