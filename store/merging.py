"""Planning merges and transplants: per-key three-way decisions (core.merge)
fed with what the key index says at the base, the source and the target."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from core.commits import (
    Combiner,
    CommitMeta,
    IndexEntry,
    KeyMergeDetail,
    KeyOutcome,
    MergeBehavior,
    MergeConflictError,
    MergeResult,
    Put,
    Reference,
    Resolution,
)
from core.conflicts import Conflict, ConflictType
from core.content import Content
from core.errors import InvalidOperationError
from core.keys import ContentKey
from core.merge import decide, namespace_conflicts, three_way
from store.changes import put_ids
from store.committing import has_children
from store.edges import edges_of
from store.history import History
from store.index import KeyIndex
from store.nodes import Node, StoredRef
from store.objects import ObjectReader
from store.state import IndexState, StateIndex
from store.writes import NewCommit, WriteSet, seal

_TAKES_SOURCE = (KeyOutcome.APPLIED, KeyOutcome.FORCED)
# A key the source side changed: (internal key, at the base, at the source).
Changed = tuple[str, IndexEntry | None, IndexEntry | None]


@dataclass
class MergePlan:
    """What one merge worked out, kept between its dry run and its landing
    (catalog.merge.merging): the source commit its name resolved to (once:
    the landing merges what the dry run showed, even if the source moved),
    and at one target head the merge base, the keys the source side changed
    and, when no combined values were given, each key's decision. A landing
    at that head takes them instead of working the merge out again;
    ``reused`` counts the times one did."""
    source_hash: str | None = None
    head_hash: str | None = None
    base_hash: str | None = None
    changed: list[Changed] = field(default_factory=list)
    decided: tuple[list[KeyMergeDetail], dict[str, IndexEntry | None]] | None = None
    reused: int = 0


class _Pending:
    """Node source that also sees nodes hashed in this plan but not yet stored."""

    def __init__(self, reader: ObjectReader) -> None:
        self.reader = reader
        self.nodes: dict[str, Node] = {}

    def load_node(self, ref: StoredRef) -> Node:
        return self.nodes.get(ref[0]) or self.reader.load_node(ref)

    def prefetch_nodes(self, refs: Iterable[StoredRef]) -> None:
        self.reader.prefetch_nodes(r for r in refs if r[0] not in self.nodes)


class MergePlanner:
    def __init__(self, reader: ObjectReader, index: StateIndex, history: History) -> None:
        self.reader = reader
        self.index = index
        self.history = history

    def plan_merge(self, head: Reference, source_hash: str, source_name: str | None,
                   default: MergeBehavior, modes: dict[ContentKey, MergeBehavior],
                   dry_run: bool, meta: CommitMeta | None, principal: str | None,
                   now_us: int, raise_on_conflict: bool = True,
                   resolutions: dict[ContentKey, Resolution] | None = None,
                   plan: MergePlan | None = None) -> WriteSet[MergeResult]:
        """``plan``: what a dry run of this merge worked out, taken when the
        target is still at the head it was worked out at (and filled when not)."""
        target = self.reader.commit(head.hash)
        source = self.reader.commit(source_hash)
        st = self.reader.state
        shared = plan is not None and plan.head_hash == head.hash
        if plan is not None and shared:
            base_hash, changed = plan.base_hash, plan.changed
            plan.reused += not dry_run
        else:
            base_hash = self.history.merge_base(head.hash, source_hash)
            changed = []
            if base_hash != source_hash:
                base = self.reader.commit(base_hash) if base_hash else None
                changed = self.index.diff(st(base) if base else IndexState(), st(source))
            if plan is not None:
                plan.head_hash, plan.base_hash, plan.changed = head.hash, base_hash, changed
                plan.decided = None
        if base_hash == source_hash:  # already contained in the target
            return WriteSet(MergeResult(head.name, source_hash, head.hash, base_hash, [],
                                        dry_run))
        contents: dict[str, bytes] = {}
        if plan is not None and shared and plan.decided is not None and not resolutions:
            details, changes = plan.decided[0], dict(plan.decided[1])
        else:
            details, changes = self._decide(st(target), changed, default, modes,
                                            resolutions=resolutions, contents=contents)
            if plan is not None and not resolutions:
                plan.decided = (details, dict(changes))
        result = MergeResult(head.name, source_hash, head.hash, base_hash, details, dry_run)
        if result.conflicts or dry_run:
            return _unwritten(result, raise_on_conflict)
        label = source_name or source_hash[:12]
        meta = meta or CommitMeta(message=f"merge {label} into {head.name}")
        if not meta.message:
            meta = CommitMeta(f"merge {label} into {head.name}", meta.author, meta.committer,
                              meta.properties)
        state, nodes, depth = self.index.apply(st(target), changes, target.depth)
        new = seal([target, source], state, depth, nodes, contents, meta, changes, now_us,
                   principal)
        result = MergeResult(head.name, source_hash, head.hash, base_hash, details, False,
                             new.record.hash, [new.record.hash])
        # What the source side put, for the change index's audits over merges.
        brought = put_ids(self.history.only_in(source_hash, head.hash))
        return WriteSet(result, [new], "merge", carried={new.record.hash: brought})

    def plan_transplant(self, head: Reference, hashes: Sequence[str],
                        default: MergeBehavior, modes: dict[ContentKey, MergeBehavior],
                        dry_run: bool, principal: str | None, now_us: int,
                        raise_on_conflict: bool = True, combiner: Combiner | None = None,
                        ) -> WriteSet[MergeResult]:
        if not hashes:
            raise InvalidOperationError("transplant needs at least one commit hash")
        pending = _Pending(self.reader)
        index = StateIndex(KeyIndex(pending))
        parent = self.reader.commit(head.hash)
        state = self.reader.state(parent)
        details: list[KeyMergeDetail] = []
        sealed: list[NewCommit] = []
        made: dict[str, Content] = {}  # values combined by this plan, not stored yet
        for h in hashes:
            src = self.reader.commit(h)
            if not src.parents:
                raise InvalidOperationError(f"commit {h} has no parent and cannot be transplanted")
            before = self.reader.commit(src.parents[0])
            keys = [op.key.internal for op in src.operations]
            base_vals = index.get_many(self.reader.state(before), keys)
            changed = [(op.key.internal, base_vals[op.key.internal], op.entry)
                       for op in src.operations]
            contents: dict[str, bytes] = {}
            d, changes = self._decide(state, changed, default, modes, index,
                                      contents=contents, combiner=combiner, pending=made)
            details += d
            if any(x.outcome is KeyOutcome.CONFLICT for x in details):
                continue  # keep going only to report every conflict
            state, nodes, depth = index.apply(state, changes, parent.depth)
            meta = CommitMeta(src.message, src.author, None, src.properties)
            new = seal([parent], state, depth, nodes, contents, meta, changes, now_us,
                       principal)
            for node in nodes:
                pending.nodes[node.hash] = node  # type: ignore[index]
            sealed.append(new)
            parent = new.record
            state = parent.state  # type: ignore[assignment]  # with the objects' new locations
        result = MergeResult(head.name, hashes[-1], head.hash, None, details, dry_run)
        if result.conflicts or dry_run:
            return _unwritten(result, raise_on_conflict)
        created = [c.record.hash for c in sealed]
        result = MergeResult(head.name, hashes[-1], head.hash, None, details, False,
                             created[-1], created)
        # Combined view values are new values: index what they read.
        edges = edges_of([Put(op.key, made[op.entry.value_hash]) for c in sealed
                          for op in c.record.operations
                          if op.entry is not None and op.entry.value_hash in made])
        return WriteSet(result, sealed, "transplant", edges=edges)

    def _decide(self, target: IndexState, changed: list[Changed],
                default: MergeBehavior, modes: dict[ContentKey, MergeBehavior],
                index: StateIndex | None = None,
                resolutions: dict[ContentKey, Resolution] | None = None,
                contents: dict[str, bytes] | None = None,
                combiner: Combiner | None = None,
                pending: dict[str, Content] | None = None,
                ) -> tuple[list[KeyMergeDetail], dict[str, IndexEntry | None]]:
        """Each changed key's outcome; ``resolutions`` give combined values
        for keys changed on both sides (their bytes go into ``contents``)."""
        index = index or self.index
        tvals = index.get_many(target, [k for k, _, _ in changed])
        details: dict[str, KeyMergeDetail] = {}
        changes: dict[str, IndexEntry | None] = {}
        for k, base, src in changed:
            key = ContentKey.from_internal(k)
            behavior = modes.get(key, default)
            conflict = three_way(key, base, src, tvals[k])
            outcome = decide(behavior, src, tvals[k], conflict)
            res = (resolutions or {}).get(key)
            if (outcome is KeyOutcome.CONFLICT and combiner is not None and contents is not None
                    and conflict is not None and conflict.type is ConflictType.VALUE_DIFFERS
                    and base is not None and src is not None and tvals[k] is not None):
                res, conflict = self._combined(key, combiner, base, src, tvals[k],  # type: ignore[arg-type]
                                               conflict, pending or {})
            if outcome is KeyOutcome.CONFLICT and res is not None and contents is not None:
                entry, conflict = _resolved(key, res, tvals[k], conflict)
                if entry is not None:
                    changes[k] = entry
                    contents[entry.value_hash] = res.content.hashed()[1]
                    if pending is not None:
                        pending[entry.value_hash] = res.content
                    details[k] = KeyMergeDetail(key, behavior, KeyOutcome.MERGED,
                                                combined=res.combined)
                    continue
            if outcome in _TAKES_SOURCE:
                changes[k] = src
            shown = conflict if outcome in (KeyOutcome.CONFLICT, KeyOutcome.FORCED) else None
            details[k] = KeyMergeDetail(key, behavior, outcome, shown)
        # Namespace rules hold on the merged state; they cannot be forced.
        ns = namespace_conflicts(
            changes, lambda k: changes[k] if k in changes else index.get(target, k),
            lambda k: has_children(index, target, changes, k))
        for c in ns:
            k = c.key.internal  # type: ignore[union-attr]
            changes.pop(k, None)
            details[k] = KeyMergeDetail(c.key, details[k].behavior,  # type: ignore[arg-type]
                                        KeyOutcome.CONFLICT, c)
        return [details[k] for k in sorted(details)], changes

    def _combined(self, key: ContentKey, combiner: Combiner, base: IndexEntry,
                  src: IndexEntry, target: IndexEntry, conflict: Conflict,
                  pending: dict[str, Content]) -> tuple[Resolution | None, Conflict]:
        """Ask the combiner for a value of a key changed on both sides."""
        known = self.reader.load_contents(e for e in (base, src, target)
                                          if e.value_hash not in pending)
        b, s, t = ((pending.get(e.value_hash) or known[e.value_hash])
                   for e in (base, src, target))
        answer = combiner(key, b, s, t)
        if isinstance(answer, str):
            return None, Conflict(conflict.type, conflict.key, f"{conflict.message}: {answer}")
        if answer is None:
            return None, conflict
        return Resolution(t, answer[0], answer[1]), conflict


def _resolved(key: ContentKey, res: Resolution, target: IndexEntry | None,
              conflict: Conflict | None) -> tuple[IndexEntry | None, Conflict | None]:
    """The entry of a combined value, if it still applies: the key's conflict
    is a value changed on both sides of one object, and the target holds
    what the combination was worked out from."""
    if conflict is None or conflict.type is not ConflictType.VALUE_DIFFERS or target is None:
        return None, conflict
    if res.expected.hashed()[0] != target.value_hash or res.content.id != target.content_id:
        return None, Conflict(ConflictType.VALUE_DIFFERS, key,
                              f"key '{key}' changed on the target while its merge was worked "
                              "out; try again", retryable=True)
    vh = res.content.hashed()[0]
    return IndexEntry(target.type, target.content_id, vh), None


def _unwritten(result: MergeResult, raise_on_conflict: bool) -> WriteSet[MergeResult]:
    """A dry run, or a refusal: reported, nothing written."""
    if result.conflicts and raise_on_conflict:
        raise MergeConflictError(result)
    return WriteSet(result)
