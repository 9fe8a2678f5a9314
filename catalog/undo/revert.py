"""Revert commits: one new commit that undoes what the named commits
changed, as a restore (catalog.undo.restore) of each key they touched to how it
was just before the first of them that touched it.

A key changed again by a later commit is a conflict, named, unless the
caller asks per key (or by default) to ``FORCE`` it (reverted anyway,
the later change undone too) or ``DROP`` it (left as it is). A merge commit
is reverted against one of its parents: ``parent`` 1 (its target's side,
the default) undoes everything the merge brought.

The caller's grants are asked as soon as the keys the commits changed are
known, before anything about them (conflicts, values, messages) is worked
out or answered: an answer names only what the caller may read."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from catalog.kernel import Catalog, Who
from catalog.merge.merging import refuse_unknown_modes
from catalog.undo.restore import Restorer, RestoreResult, Source
from core.commits import MergeBehavior
from core.content import Content
from core.errors import bad_request, commit_failed
from core.keys import ContentKey
from core.refs import RefSpec, normalize_hash

_PAGE = 1000
# Checks the caller may read and write every key the commits changed (None:
# no grants to check); raises the refusal.
KeysCheck = Callable[[Sequence[ContentKey]], None] | None


@dataclass(frozen=True, slots=True)
class RevertRequest:
    commits: Sequence[str]
    parent: int = 1
    default_mode: MergeBehavior = MergeBehavior.NORMAL
    modes: Mapping[ContentKey, MergeBehavior] | None = None
    dry_run: bool = False
    # Whether the new commit's message may quote the reverted ones': only
    # for a caller that may read them, all of the branch (core.redact.commit_meta).
    quote: bool = True


class Reverter:
    def __init__(self, catalog: Catalog) -> None:
        self.store = catalog.store
        self.restorer = Restorer(catalog)

    def revert(self, branch: RefSpec, req: RevertRequest, who: Who,
               expected_hash: str | None = None, check_keys: KeysCheck = None,
               ) -> RestoreResult:
        if not req.commits:
            raise bad_request("A revert names at least one commit")
        if req.parent < 1:
            raise bad_request(f"parent must be 1 or more, not {req.parent}")
        head = self.store.resolve(branch).hash
        hashes = list(dict.fromkeys(self.store.full_hash(normalize_hash(h))
                                    for h in req.commits))
        records = [self.store.reader.commit(h) for h in hashes]
        for r in records:
            if not self.store.history.is_ancestor(r.hash, head):
                raise bad_request(f"Commit {r.hash[:12]} is not in the history of {branch}")
            if not r.parents or len(r.parents) < req.parent:
                raise bad_request(f"Commit {r.hash[:12]} has {len(r.parents)} parent(s); "
                                  f"cannot revert against parent {req.parent}")
        records.sort(key=lambda r: r.generation)  # oldest first
        sources: dict[ContentKey, Source] = {}
        after: dict[ContentKey, Content | None] = {}
        for r in records:
            parent = r.parents[req.parent - 1]
            for key, value in self._changes(parent, r.hash):
                sources.setdefault(key, Source(f"@{parent}", parent))
                after[key] = value
        if not sources:
            raise bad_request("Nothing to revert: the commits changed no key")
        if check_keys is not None:
            check_keys(list(sources))
        modes = req.modes or {}
        refuse_unknown_modes(modes, list(sources), "revert")
        now = self.store.contents(f"@{head}", list(sources))
        conflicts = []
        for key in list(sources):
            mode = modes.get(key, req.default_mode)
            if mode is MergeBehavior.DROP:  # left as it is, changed since or not
                del sources[key], after[key]
            elif _hash(now.get(key)) == _hash(after[key]):
                continue
            elif mode is MergeBehavior.FORCE:
                del after[key]  # reverted whatever it holds now
            else:
                conflicts.append(key)
        if conflicts:
            raise commit_failed(
                "Cannot revert: changed again since by later commits: "
                + ", ".join(".".join(k.elements) for k in conflicts)
                + " (FORCE reverts them anyway, DROP leaves them)")
        if not sources:
            raise bad_request("Nothing to revert: every changed key was dropped")
        first = records[0]
        said = first.message.splitlines()[0] if first.message and req.quote else ""
        message = (f"revert {first.hash[:12]}: {said}" if len(records) == 1 else
                   f"revert {len(records)} commits: " + ", ".join(r.hash[:12] for r in records))
        return self.restorer.apply(branch, sources, who, req.dry_run, message.rstrip(": "), {
            "sapwood.revert.commits": ",".join(r.hash for r in records),
            "sapwood.revert.parent": str(req.parent)}, expected=after,
            expected_hash=expected_hash)

    def _changes(self, before: str, commit: str) -> list[tuple[ContentKey, Content | None]]:
        """Every key ``commit`` changed against ``before``, with its value after."""
        out = []
        token = None
        while True:
            page = self.store.diff(f"@{before}", f"@{commit}", token, _PAGE)
            out += [(d.key, d.after) for d in page.items]
            token = page.next_token
            if token is None:
                return out


def _hash(c: Content | None) -> str | None:
    return c.value_hash() if c is not None else None
