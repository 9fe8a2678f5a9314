"""The versioning API's calls, typed: references, the log, diffs, merges
(per-key resolutions, dry runs) and transplants, restore and revert, the
view audit, a key's dependents and the change feed. Each is one request
where the API allows it (a merge or transplant names its target branch
without a hash: the server lands on the head it finds), paged listings
followed to their end."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from client.http import Http, key_path, ref_path

TREES = "/api/v2/trees"


@dataclass(frozen=True, slots=True)
class Reference:
    name: str
    type: str  # BRANCH or TAG
    hash: str


@dataclass(frozen=True, slots=True)
class Diff:
    key: str     # dotted
    change: str  # added, removed or changed
    type: str    # ICEBERG_TABLE, ICEBERG_VIEW, NAMESPACE ...


@dataclass(frozen=True, slots=True)
class KeyResult:
    key: str               # dotted
    outcome: str           # APPLIED, FORCED, DROPPED, UNCHANGED, MERGED, CONFLICT
    conflict: str | None   # the conflict's message, for a key that has one


@dataclass(frozen=True, slots=True)
class MergeResult:
    """A merge's or transplant's answer: ``applied`` when it landed (then
    ``hash`` is the target's new head), each key's outcome, and the target's
    views it breaks (or would), dotted. ``json``: the API's whole answer."""
    target: str
    applied: bool
    hash: str
    keys: list[KeyResult]
    invalidated_views: list[str]
    json: dict[str, Any] = field(repr=False)

    @property
    def conflicts(self) -> list[str]:
        return [k.key for k in self.keys if k.outcome == "CONFLICT"]


def _dotted(key: dict[str, Any]) -> str:
    return ".".join(key["elements"])


# A key: dotted (``ns.v``), or its elements (for an element holding a dot).
Key = str | Sequence[str]


def _elements(key: Key) -> dict[str, list[str]]:
    return {"elements": key.split(".") if isinstance(key, str) else list(key)}


def _merge_result(answer: dict[str, Any]) -> MergeResult:
    return MergeResult(
        answer["targetBranch"], bool(answer["wasApplied"]), answer["resultantTargetHash"],
        [KeyResult(_dotted(d["key"]), d.get("outcome", ""),
                   d["conflict"].get("message") if d.get("conflict") else None)
         for d in answer.get("details") or []],
        [".".join(v["key"]) for v in answer.get("invalidatedViews") or []], answer)


class Client(Http):
    """``Client("http://127.0.0.1:8181")``; see client.http.Http for the
    credential and the author. Refusals raise client.errors' typed errors."""

    # -- references --------------------------------------------------------------
    def references(self) -> list[Reference]:
        return [Reference(r["name"], r["type"], r["hash"])
                for page in self.pages(f"{TREES}") for r in page["references"]]

    def reference(self, ref: str) -> Reference:
        """A reference (or any ref spec: ``dev*2026-01-01T00:00:00Z``) and its hash."""
        r = self.call("GET", f"{TREES}/{ref_path(ref)}")["reference"]
        return Reference(r["name"], r["type"], r["hash"])

    def create(self, name: str, from_ref: str = "main", type: str = "BRANCH") -> Reference:
        """A new branch (or tag) at ``from_ref``'s head."""
        at = self.reference(from_ref)
        r = self.call("POST", TREES, params={"name": name, "type": type},
                      json={"type": at.type, "name": at.name, "hash": at.hash})["reference"]
        return Reference(r["name"], r["type"], r["hash"])

    def delete(self, name: str, type: str = "BRANCH") -> None:
        """Delete a branch (or tag) at the head it has now."""
        head = self.reference(name).hash
        self.call("DELETE", f"{TREES}/{ref_path(name)}@{head}", params={"type": type})

    # -- history -----------------------------------------------------------------
    def log(self, ref: str = "main", *, key: str | None = None, since: str | None = None,
            until: str | None = None, author: str | None = None) -> Iterator[dict[str, Any]]:
        """The first-parent log, newest first: each entry's ``commitMeta``
        (``hash``, ``message``, ``authors``, ``commitTime`` ...); filtered by
        a dotted ``key`` it changed, instants and author."""
        params = {k: v for k, v in (("key", key), ("since", since), ("until", until),
                                    ("author", author)) if v is not None}
        for page in self.pages(f"{TREES}/{ref_path(ref)}/history", params):
            yield from page["logEntries"]

    def diff(self, from_ref: str, to_ref: str) -> list[Diff]:
        """What changed from ``from_ref`` to ``to_ref``, key by key."""
        out = []
        for page in self.pages(f"{TREES}/{ref_path(from_ref)}/diff/{ref_path(to_ref)}"):
            for d in page["diffs"]:
                change = ("added" if d["from"] is None else "removed" if d["to"] is None
                          else "changed")
                out.append(Diff(_dotted(d["key"]), change, (d["to"] or d["from"])["type"]))
        return out

    def content(self, ref: str, key: str) -> dict[str, Any]:
        """A key's content (table, view, namespace) at a ref spec."""
        return self.call("GET", f"{TREES}/{ref_path(ref)}/contents/{key_path(key)}")

    # -- merges ------------------------------------------------------------------
    def merge(self, source: str, into: str = "main", *, dry_run: bool = False,
              force: Iterable[Key] = (), drop: Iterable[Key] = (),
              message: str | None = None, expected_hash: str | None = None,
              raise_on_conflict: bool = True) -> MergeResult:
        """Merge ``source`` (a reference or any ref spec) into branch ``into``
        in one request. ``force``: keys that take the source's change,
        ``drop``: keys that keep the target's; ``expected_hash``: refuse
        (409) unless the target is still there. Conflicting keys raise
        Conflict naming them unless ``raise_on_conflict`` is false (then
        the result lists them, nothing written): the server's 409, its
        message and keys."""
        modes = ([{"key": _elements(k), "mergeBehavior": "FORCE"} for k in force]
                 + [{"key": _elements(k), "mergeBehavior": "DROP"} for k in drop])
        meta = {**({"message": message} if message else {}),
                **({"author": self.author} if self.author else {})}
        body: dict[str, Any] = {"fromRefName": source, "dryRun": dry_run,
                                "keyMergeModes": modes,
                                "returnConflictAsResult": not raise_on_conflict,
                                **({"commitMeta": meta} if meta else {})}
        target = ref_path(into) + (f"@{expected_hash}" if expected_hash else "")
        return _merge_result(self.call("POST", f"{TREES}/{target}/history/merge", json=body))

    def transplant(self, hashes: list[str], onto: str = "main", *, dry_run: bool = False,
                   expected_hash: str | None = None,
                   raise_on_conflict: bool = True) -> MergeResult:
        """Replay commits (oldest first) onto branch ``onto``, all or nothing."""
        target = ref_path(onto) + (f"@{expected_hash}" if expected_hash else "")
        return _merge_result(self.call(
            "POST", f"{TREES}/{target}/history/transplant",
            json={"hashesToTransplant": hashes, "dryRun": dry_run,
                  "returnConflictAsResult": not raise_on_conflict}))

    # -- undo --------------------------------------------------------------------
    def restore(self, keys: Sequence[Key], source: str, branch: str = "main", *,
                dry_run: bool = False) -> dict[str, Any]:
        """Make dotted ``keys`` on ``branch`` as at ``source`` (a ref spec):
        one commit; the answer says what was done per key and the new hash."""
        head = self.reference(branch).hash
        return self.call("POST", f"{TREES}/{ref_path(branch)}@{head}/history/restore",
                         json={"source": source, "dryRun": dry_run,
                               "keys": [_elements(k) for k in keys]})

    def revert(self, commits: list[str], branch: str = "main", *, parent: int = 1,
               dry_run: bool = False) -> dict[str, Any]:
        """Undo ``commits`` on ``branch`` in one commit (409 naming keys
        changed again since)."""
        head = self.reference(branch).hash
        return self.call("POST", f"{TREES}/{ref_path(branch)}@{head}/history/revert",
                         json={"commits": commits, "parent": parent, "dryRun": dry_run})

    # -- views -------------------------------------------------------------------
    def view_history(self, key: str, ref: str = "main") -> list[dict[str, Any]]:
        """A view's versions through time (the audit), newest first."""
        return [v for page in self.pages(f"{TREES}/{ref_path(ref)}/views/{key_path(key)}"
                                         "/history") for v in page["versions"]]

    def lineage(self, key: str, ref: str = "main") -> list[dict[str, Any]]:
        """A view's columns and the table columns each reads."""
        found: list[dict[str, Any]] = self.call(
            "GET", f"{TREES}/{ref_path(ref)}/views/{key_path(key)}/lineage")["columns"]
        return found

    def dependents(self, key: str, ref: str = "main") -> list[dict[str, Any]]:
        """The views that read ``key`` (directly or through other views)."""
        found: list[dict[str, Any]] = self.call(
            "GET", f"{TREES}/{ref_path(ref)}/contents/{key_path(key)}/dependents"
        )["dependents"]
        return found

    # -- the change feed ---------------------------------------------------------
    def events(self, after: int = 0, *, ref: str | None = None, key: str | None = None,
               types: Iterable[str] = (), wait: float = 0) -> tuple[list[dict[str, Any]], int]:
        """One page of the change feed after event id ``after`` (``wait``
        seconds for new ones, long-polling) and the id to ask after next."""
        params: dict[str, Any] = {"after": after, "wait": wait,
                                  **({"ref": ref} if ref else {}),
                                  **({"key": key} if key else {}),
                                  **({"types": ",".join(types)} if types else {})}
        page = self.call("GET", "/api/v2/events", params=params)
        return page["events"], int(page.get("after", after))
