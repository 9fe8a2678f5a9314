"""Reading a Nessie repository over its v2 REST API with plain HTTP (httpx):
its configuration, its references, and its commits with their operations
(``fetch=ALL``), page by page (``max-records``, ``page-token``).

Sapwood has no Nessie client library and needs none: the import reads four
shapes. Every answer is checked as it is used — an answer that is not what
Nessie's API says (a missing field, a page token that does not move) stops
the import with a message naming the request, never a guess. Logs are read
from a commit hash (``@hash``), not a reference name, so a reference that
moves while the import runs does not change what it reads.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx

from core.errors import InvalidInputError, UnavailableError

TIMEOUT_S = 60.0
# Log pages: small first (an import that continues usually needs a few
# commits), then large.
FIRST_PAGE = 50
PAGE = 1000
MAX_REFERENCES_PAGE = 1000


@dataclass(frozen=True, slots=True)
class NessieConfig:
    default_branch: str
    no_ancestor: str
    # The repository's creation (ISO-8601 as Nessie gives it), if it says.
    created: str | None


@dataclass(frozen=True, slots=True)
class NessieRef:
    name: str
    type: str  # BRANCH or TAG
    hash: str


class NessieApiError(InvalidInputError):
    """Nessie answered something the import cannot use (the message says
    which request and what)."""


class NessieSource:
    """One Nessie repository, by the base of its v2 API (``…/api/v2``; a
    server's root or ``…/api`` is taken too)."""

    def __init__(self, url: str, client: httpx.Client | None = None) -> None:
        base = url.rstrip("/")
        if not base.startswith(("http://", "https://")):
            raise InvalidInputError(f"--from-nessie takes the http(s) URL of a Nessie server, "
                                    f"not {url!r}")
        if base.endswith("/api"):
            base += "/v2"
        elif not base.endswith("/api/v2"):
            base += "/api/v2"
        self.base = base
        self.http = client or httpx.Client(timeout=TIMEOUT_S, follow_redirects=False)
        self.requests = 0

    def close(self) -> None:
        self.http.close()

    def _get(self, path: str, params: dict[str, str | int] | None = None) -> dict[str, Any]:
        url = f"{self.base}{path}"
        self.requests += 1
        try:
            r = self.http.get(url, params=params, headers={"Accept": "application/json"})
        except httpx.HTTPError as e:
            raise UnavailableError(f"Nessie at {self.base} did not answer GET {path}: "
                                   f"{e}") from None
        if r.status_code != 200:
            try:
                said = r.json().get("message") or r.text[:300]
            except ValueError:
                said = r.text[:300]
            raise NessieApiError(f"Nessie answered GET {path} with {r.status_code}: {said}")
        try:
            body = r.json()
        except ValueError:
            raise NessieApiError(f"Nessie's answer to GET {path} is not JSON") from None
        if not isinstance(body, dict):
            raise NessieApiError(f"Nessie's answer to GET {path} is not a JSON object")
        return body

    def config(self) -> NessieConfig:
        body = self._get("/config")
        if body.get("maxSupportedApiVersion", 0) < 2 or not body.get("noAncestorHash"):
            raise NessieApiError(f"{self.base}/config is not a Nessie v2 API's configuration")
        return NessieConfig(str(body.get("defaultBranch") or "main"), str(body["noAncestorHash"]),
                            body.get("repositoryCreationTimestamp"))

    def references(self) -> list[NessieRef]:
        out: list[NessieRef] = []
        token: str | None = None
        while True:
            params: dict[str, str | int] = {"max-records": MAX_REFERENCES_PAGE}
            if token:
                params["page-token"] = token
            body = self._get("/trees", params)
            for r in _list(body, "references", "/trees"):
                if not isinstance(r, dict) or r.get("type") not in ("BRANCH", "TAG") \
                        or not isinstance(r.get("name"), str) \
                        or not isinstance(r.get("hash"), str):
                    raise NessieApiError(f"GET /trees answered a reference that is not one: {r!r}")
                out.append(NessieRef(r["name"], r["type"], r["hash"]))
            token = _next(body, token, "/trees")
            if token is None:
                return out

    def log(self, start: str) -> Iterator[dict[str, Any]]:
        """The commits from ``start`` (a hash) down its first parents, newest
        first, each with its operations: log entries as Nessie gives them.
        Past the first page, the next page is asked for while the caller
        works through this one (Nessie answers on another core)."""
        path = f"/trees/@{quote(start, safe='')}/history"

        def page(token: str | None, size: int) -> dict[str, Any]:
            params: dict[str, str | int] = {"fetch": "ALL", "max-records": size}
            if token:
                params["page-token"] = token
            return self._get(path, params)

        ahead = ThreadPoolExecutor(max_workers=1, thread_name_prefix="nessie-page")
        try:
            body = page(None, FIRST_PAGE)
            token: str | None = None
            first = True
            while True:
                entries = _list(body, "logEntries", path)
                token = _next(body, token, path)
                nxt = ahead.submit(page, token, PAGE) if token is not None and not first \
                    else None
                for entry in entries:
                    if not isinstance(entry, dict) or not isinstance(entry.get("commitMeta"),
                                                                     dict):
                        raise NessieApiError(f"GET {path} answered a log entry without "
                                             "commitMeta")
                    yield entry
                if token is None:
                    return
                body = nxt.result() if nxt is not None else page(token, PAGE)
                first = False
        finally:
            # A caller that stopped early leaves at most one page being read.
            ahead.shutdown(wait=True, cancel_futures=True)


def _list(body: dict[str, Any], field: str, path: str) -> list[Any]:
    found = body.get(field)
    if not isinstance(found, list):
        raise NessieApiError(f"Nessie's answer to GET {path} has no {field} list")
    return found


def _next(body: dict[str, Any], token: str | None, path: str) -> str | None:
    """The next page's token, if there is one (one that does not move is an error)."""
    if not body.get("hasMore"):
        return None
    nxt = body.get("token")
    if not isinstance(nxt, str) or not nxt or nxt == token:
        raise NessieApiError(f"Nessie's answer to GET {path} says it has more but gives no "
                             "new page token")
    return nxt
