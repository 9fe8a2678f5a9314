"""What the CLI says when something it was asked for is not there
(docs/cli.md, "Errors"): one wording in every verb (``reference 'x' does not
exist``, ``view 'ns.v' does not exist at 'main'``), a key of another kind
said to be so (``shop.orders at 'main' is a table, not a view``), and what
was probably meant (``did you mean 'dev'?``).

The suggestions come from listings the caller makes with its own
credential: a name it may not read is not listed, so it is never suggested
(docs/security.md: hidden answers as missing). They are looked up only
after a 404, with at most one listing of references or two pages of keys."""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import get_close_matches
from typing import Any, Protocol
from urllib.parse import quote

import httpx

from client.http import ref_path as ref_path
from core.keys import ContentKey


class CatalogClient(Protocol):
    """What the suggestions need of cli.client's client (which imports this
    module: the protocol keeps the two from importing each other)."""

    def send(self, method: str, path: str, **kw: Any) -> httpx.Response: ...


@dataclass(frozen=True)
class Wanted:
    """What a request asks for, so that its 404 can say so in the verb's
    words: ``kind`` ("key", "view", "table", "materialized view") KEY at REF
    (cli.missing)."""
    ref: str
    key: str
    kind: str = "key"

_REFERENCE = re.compile(r"reference '(?P<name>[^']*)' does not exist")
# A 404 about a commit (a hash, a prefix) or an instant: said as it is.
_NOT_A_KEY = ("no commit hash", "commit ", "hash prefix", "no such ref")
# The content types a kind of key the verbs ask for may have.
_TYPES = {"view": {"ICEBERG_VIEW", "MATERIALIZED_VIEW"}, "table": {"ICEBERG_TABLE"},
          "materialized view": {"MATERIALIZED_VIEW"}}
_WORDS = {"ICEBERG_TABLE": "a table", "ICEBERG_VIEW": "a view",
          "MATERIALIZED_VIEW": "a materialized view", "NAMESPACE": "a namespace"}
# The most keys looked at for a suggestion (one page of a listing each).
_PAGE = 1000
_HEX = re.compile(r"[0-9a-fA-F]{8,64}")


def explain(client: CatalogClient, code: str | None, message: str,
            wanted: Wanted | None) -> str:
    """A 404's line: the API's ``message`` (``code`` its errorCode) about
    what ``wanted`` names."""
    m = _REFERENCE.fullmatch(message)
    if m is not None and code in (None, "REFERENCE_NOT_FOUND"):
        return missing_reference(client, m["name"])
    if wanted is None or message.startswith(_NOT_A_KEY):
        return message
    return missing_key(client, wanted, message)


def missing_reference(client: CatalogClient, name: str) -> str:
    said = f"reference '{name}' does not exist"
    if _HEX.fullmatch(name):  # a bare hash: the grammar names a commit @HASH
        return f"{said} (a commit is named @{name}, or NAME@{name})"
    names = [r["name"] for r in _listed(client, "/api/v2/trees", "references")]
    return said + _did_you_mean(name, names)


def missing_key(client: CatalogClient, wanted: Wanted, message: str) -> str:
    """``wanted.kind`` KEY does not exist at REF, or is of another kind."""
    key = ContentKey.parse(wanted.key)
    path = f"/api/v2/trees/{ref_path(wanted.ref)}/contents/{quote(key.to_path_string(), safe='')}"
    r = client.send("GET", path)
    types = _TYPES.get(wanted.kind)
    if r.status_code == 200:
        kind = r.json()["content"]["type"]
        if types is not None and kind not in types:
            return (f"{key} at '{wanted.ref}' is {_WORDS.get(kind, kind)}, "
                    f"not {_article(wanted.kind)}")
        return message  # there, of the kind asked: the API's own reason
    if r.status_code != 404:
        return message
    # The reference itself may be what is missing (the view routes say "view").
    body = r.json() if r.content else {}
    if body.get("errorCode") == "REFERENCE_NOT_FOUND":
        return explain(client, "REFERENCE_NOT_FOUND", str(body.get("message", "")), None)
    said = f"{wanted.kind} '{key}' does not exist at '{wanted.ref}'"
    near = _keys_near(client, wanted.ref, key, types)
    # Beside it, names are compared by their last part (a long namespace
    # would make every sibling look alike); elsewhere, whole.
    ns = key.elements[:-1]
    siblings = {n.elements[-1]: str(n) for n in near if n.elements[:-1] == ns}
    close = _did_you_mean(key.name, list(siblings), siblings) if siblings else ""
    return said + (close or _did_you_mean(str(key), [str(n) for n in near]))


def _keys_near(client: CatalogClient, ref: str, key: ContentKey,
               types: set[str] | None) -> list[ContentKey]:
    """The keys beside ``key`` (its namespace's children), else the keys as
    deep as it (a mistyped namespace), of the types asked for."""
    path = f"/api/v2/trees/{ref_path(ref)}/entries"
    ns = key.namespace
    asks: list[dict[str, Any]] = [{"depth": len(key.elements)}]
    if ns is not None:
        asks.insert(0, {"prefixKey": ns.to_path_string(), "depth": 1})
    for params in asks:
        r = client.send("GET", path, params={**params, "maxRecords": _PAGE})
        if r.status_code != 200:
            return []
        found = [ContentKey(e["name"]["elements"]) for e in r.json()["entries"]
                 if e["type"] != "NAMESPACE" and (types is None or e["type"] in types)]
        if found:
            return found
    return []


def _listed(client: CatalogClient, path: str, items: str) -> list[dict[str, Any]]:
    r = client.send("GET", path, params={"maxRecords": _PAGE})
    return list(r.json()[items]) if r.status_code == 200 else []


def _did_you_mean(name: str, names: list[str], said: dict[str, str] | None = None) -> str:
    """`` (did you mean 'x'?)`` for the names closest to ``name`` (each said
    as ``said`` has it, if given), or nothing."""
    close = get_close_matches(name, [n for n in names if n != name], n=3, cutoff=0.6)
    if not close:
        return ""
    names = [f"'{(said or {}).get(c, c)}'" for c in close]
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
    return f" (did you mean {listed}?)"


def _article(kind: str) -> str:
    return f"an {kind}" if kind[0] in "aeiou" else f"a {kind}"
