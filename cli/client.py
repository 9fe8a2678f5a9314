"""The CLI's HTTP side: one small client for the catalog's two APIs, and
how their refusals read as one ``error:`` line (docs/cli.md, "Errors")."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import httpx

from cli.missing import Wanted as Wanted
from cli.missing import explain
from cli.missing import ref_path as ref_path
from client import Client, Unreachable
from client.errors import body_of, message_of
from core.keys import ContentKey

DEFAULT_URI = "http://127.0.0.1:8181"
# How the API's refusal of a --force/--drop key a merge (revert) does not change starts.
MODES_FIELD = "keyMergeModes"


class CliError(Exception):
    """One line for the user; the CLI prints it and exits non-zero.
    ``status``: the HTTP status of the refusal it says, if it is one."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class CatalogClient(Client):
    """The shared client (client.Client: its transport, credential from
    SAPWOOD_CREDENTIAL, typed calls), its refusals said in the CLI's words."""

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
            return super().send(method, path, **kw)
        except Unreachable as e:
            if e.why == "connection refused":
                raise CliError(
                    f"cannot reach the catalog at {self.uri} ({e.why}): start one with "
                    "`sapwood serve`, or set SAPWOOD_URI (or --uri) to the catalog's URL"
                ) from None
            raise CliError(e.message) from None

    def refusal(self, r: httpx.Response, wanted: Wanted | None) -> str:
        """What a refused request says: the API's message, except that a
        401 names the variable that holds a credential, and a 404 names what
        is missing in one wording with what was probably meant."""
        body = body_of(r)
        message = message_of(r, body)
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
        if message.startswith(MODES_FIELD):  # the API's field; the verbs' words
            return "--force/--drop" + message[len(MODES_FIELD):]
        return message

    # -- contents ----------------------------------------------------------------
    def key_content(self, ref: str, key: ContentKey, kind: str = "key") -> dict[str, Any]:
        return self.call("GET", f"/api/v2/trees/{ref_path(ref)}/contents/"
                                f"{quote(key.to_path_string(), safe='')}",
                         wanted=Wanted(ref, str(key), kind))

    def iceberg(self, ref: str, kind: str, key: ContentKey) -> dict[str, Any]:
        ns = quote("\x1f".join(key.elements[:-1]), safe="")
        return self.call("GET", f"/iceberg/{quote(ref, safe='')}/v1/namespaces/{ns}/{kind}/"
                                f"{quote(key.name, safe='')}",
                         wanted=Wanted(ref, str(key), kind.removesuffix("s")))

