"""Sapwood's versioning API (``/api/v2``) over plain HTTP, for the Spark side.

The standard library's ``urllib`` is enough here, so the Spark extra adds no
HTTP client of its own."""

from __future__ import annotations

import json
from typing import Any
from urllib.error import HTTPError, URLError
from urllib.parse import quote, urlencode
from urllib.request import Request, urlopen

from spark.errors import CatalogError
from spark.session import AUTHOR_HEADER, server_root

_REF_SAFE = "@*~^:.-_"


def _key_path(key: str) -> str:
    """Nessie's path form of a dotted key (``ns.v``); dots inside an element are
    not expressible in the dotted form, which is fine for the helpers' users."""
    return quote(key, safe="")


class Versioning:
    def __init__(self, uri: str, timeout: float = 60, credential: str | None = None,
                 author: str | None = None) -> None:
        """``credential`` (an API key ``id:secret``) is for a catalog with
        authentication on; the server takes a raw key as a bearer token.
        ``author`` names the commits this client's writes make: it goes on
        every request as ``Sapwood-Commit-Author``, as a Spark catalog's
        ``header.`` property does (restore, revert, materialized views), and
        into a merge's ``commitMeta``, where the merge route takes it."""
        self.root = server_root(uri)
        self.timeout = timeout
        self.credential = credential
        self.author = author

    def call(self, method: str, path: str, body: Any = None,
             params: dict[str, Any] | None = None) -> dict[str, Any]:
        url = self.root + path + ("?" + urlencode(params) if params else "")
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Content-Type": "application/json"} if data else {}
        if self.author:
            headers[AUTHOR_HEADER] = self.author
        if self.credential:
            headers["Authorization"] = f"Bearer {self.credential}"
        req = Request(url, data=data, method=method, headers=headers)
        try:
            with urlopen(req, timeout=self.timeout) as r:
                raw = r.read()
        except HTTPError as e:
            raise CatalogError(e.code, _message(e.read())) from None
        except URLError as e:
            raise CatalogError(0, f"cannot reach the catalog at {self.root}: {e.reason}") from None
        return json.loads(raw) if raw else {}

    def head(self, ref: str) -> str:
        return str(self.call("GET", f"/api/v2/trees/{quote(ref, safe=_REF_SAFE)}")
                   ["reference"]["hash"])

    def create_branch(self, name: str, from_ref: str = "main") -> str:
        """Create branch ``name`` at ``from_ref``'s head; returns that hash."""
        hash_ = self.head(from_ref)
        return str(self.call("POST", "/api/v2/trees", {"type": "BRANCH", "hash": hash_},
                             {"name": name, "type": "BRANCH"})["reference"]["hash"])

    def delete_branch(self, name: str) -> None:
        self.call("DELETE", f"/api/v2/trees/{quote(name, safe='')}@{self.head(name)}",
                  params={"type": "BRANCH"})

    def merge(self, source: str, into: str = "main", message: str | None = None,
              dry_run: bool = False) -> dict[str, Any]:
        """Merge ``source`` into branch ``into`` at its current head. A conflict
        raises CatalogError (409) naming the keys; nothing is written then."""
        body: dict[str, Any] = {"fromRefName": source, "dryRun": dry_run}
        meta = {**({"message": message} if message else {}),
                **({"author": self.author} if self.author else {})}
        if meta:
            body["commitMeta"] = meta
        return self.call("POST", f"/api/v2/trees/{quote(into, safe='')}@{self.head(into)}"
                                 "/history/merge", body)

    def restore(self, keys: list[str], source: str, branch: str = "main",
                dry_run: bool = False) -> dict[str, Any]:
        """Make ``keys`` (dotted) on ``branch`` as at ``source`` (a ref spec):
        one commit; returns what was done per key and the new hash."""
        return self.call(
            "POST", f"/api/v2/trees/{quote(branch, safe='')}@{self.head(branch)}"
                    "/history/restore",
            {"source": source, "dryRun": dry_run,
             "keys": [{"elements": k.split(".")} for k in keys]})

    def revert(self, commits: list[str], branch: str = "main", parent: int = 1,
               dry_run: bool = False) -> dict[str, Any]:
        """Undo ``commits`` on ``branch`` in one commit (409 naming keys
        changed again since)."""
        return self.call(
            "POST", f"/api/v2/trees/{quote(branch, safe='')}@{self.head(branch)}"
                    "/history/revert",
            {"commits": commits, "parent": parent, "dryRun": dry_run})

    def diff(self, from_ref: str, to_ref: str) -> list[dict[str, Any]]:
        """``[{key, change: added|removed|changed, type}]`` from ``from_ref`` to ``to_ref``."""
        out: list[dict[str, Any]] = []
        token = None
        while True:
            page = self.call("GET", f"/api/v2/trees/{quote(from_ref, safe=_REF_SAFE)}/diff/"
                                    f"{quote(to_ref, safe=_REF_SAFE)}",
                             params={"pageToken": token} if token else None)
            for d in page["diffs"]:
                change = ("added" if d["from"] is None else "removed" if d["to"] is None
                          else "changed")
                out.append({"key": ".".join(d["key"]["elements"]), "change": change,
                            "type": (d["to"] or d["from"])["type"]})
            token = page.get("token")
            if not page.get("hasMore"):
                return out

    def view_history(self, key: str, ref: str = "main") -> list[dict[str, Any]]:
        """Every version, following the audit's pages."""
        path = f"/api/v2/trees/{quote(ref, safe=_REF_SAFE)}/views/{_key_path(key)}/history"
        page = self.call("GET", path)
        out = list(page["versions"])
        while page.get("hasMore"):
            page = self.call("GET", path, params={"pageToken": page["token"]})
            out += page["versions"]
        return out

    def first_change_since(self, key: str, ref: str, since: str) -> dict[str, Any] | None:
        """The oldest commit on ``ref`` (first parents, as the log walks)
        since instant ``since`` that changed ``key``: for a key that was not
        there at ``since``, the commit that created it. None when none did."""
        path = f"/api/v2/trees/{quote(ref, safe=_REF_SAFE)}/history"
        params: dict[str, Any] = {"key": key, "since": since}
        oldest = None
        while True:
            page = self.call("GET", path, params=params)
            oldest = (page.get("logEntries") or [oldest])[-1]
            if not page.get("hasMore"):
                return oldest["commitMeta"] if oldest else None
            params = {**params, "pageToken": page["token"]}

    def lineage(self, key: str, ref: str = "main") -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = self.call(
            "GET", f"/api/v2/trees/{quote(ref, safe=_REF_SAFE)}/views/{_key_path(key)}/lineage"
        )["columns"]
        return found

    def dependents(self, key: str, ref: str = "main") -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = self.call(
            "GET", f"/api/v2/trees/{quote(ref, safe=_REF_SAFE)}/contents/{_key_path(key)}/"
            "dependents")["dependents"]
        return found


def _message(raw: bytes) -> str:
    try:
        body = json.loads(raw)
    except ValueError:
        return raw[:200].decode(errors="replace")
    msg = body.get("message") or body.get("error", {}).get("message") or str(body)[:200]
    conflicts = (body.get("errorDetails") or {}).get("conflicts") or []
    if conflicts:
        msg += " [" + ", ".join(f"{_dotted(c.get('key'))}: {c.get('conflictType')}"
                                for c in conflicts) + "]"
    return msg


def _dotted(key: Any) -> str:
    return ".".join(key["elements"]) if isinstance(key, dict) else str(key)
