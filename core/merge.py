"""Per-key rules for three-way merges, transplants and commit validation.

Pure functions over index entries; the store feeds them what it looked up.
"""

from __future__ import annotations

from collections.abc import Callable

from core.commits import IndexEntry, KeyOutcome, MergeBehavior
from core.conflicts import Conflict, ConflictType
from core.content import ContentType
from core.keys import ContentKey, ancestor_internals


def three_way(key: ContentKey, base: IndexEntry | None, source: IndexEntry | None,
              target: IndexEntry | None) -> Conflict | None:
    """Decide a key the source changed since ``base``: None when the source's
    value may replace the target's, else the conflict."""
    if target in (base, source):
        return None
    if base is None:
        return Conflict(ConflictType.KEY_EXISTS, key,
                        f"key '{key}' was added on both sides with different values")
    if source is None:
        return Conflict(ConflictType.VALUE_DIFFERS, key,
                        f"key '{key}' was deleted on the source but changed on the target")
    if target is None:
        return Conflict(ConflictType.KEY_DOES_NOT_EXIST, key,
                        f"key '{key}' was changed on the source but deleted on the target")
    if source.type != target.type:
        return Conflict(ConflictType.PAYLOAD_DIFFERS, key,
                        f"key '{key}' is a {source.type} on the source but a {target.type} "
                        "on the target")
    if source.content_id != target.content_id:
        return Conflict(ConflictType.CONTENT_ID_DIFFERS, key,
                        f"key '{key}' holds content {target.content_id} on the target, not "
                        f"{source.content_id} (dropped and re-created?)")
    return Conflict(ConflictType.VALUE_DIFFERS, key,
                    f"key '{key}' was changed on both sides")


def decide(behavior: MergeBehavior, source: IndexEntry | None, target: IndexEntry | None,
           conflict: Conflict | None) -> KeyOutcome:
    if behavior is MergeBehavior.DROP:
        return KeyOutcome.DROPPED
    if source == target:
        return KeyOutcome.UNCHANGED
    if conflict is None:
        return KeyOutcome.APPLIED
    return KeyOutcome.FORCED if behavior is MergeBehavior.FORCE else KeyOutcome.CONFLICT


def namespace_conflicts(
    changes: dict[str, IndexEntry | None],
    lookup: Callable[[str], IndexEntry | None],
    has_children: Callable[[str], bool],
) -> list[Conflict]:
    """Check the namespace rules on the state after ``changes`` (keys in their
    internal form).

    ``lookup`` and ``has_children`` must already see the changed state. Every
    key's parent namespaces must exist as NAMESPACE values, and a deleted
    namespace must have nothing left below it.
    """
    out: list[Conflict] = []
    checked: dict[str, bool] = {}
    for k in sorted(changes):
        if changes[k] is None:
            # Only a namespace can have children (parents must be namespaces).
            if has_children(k):
                key = ContentKey.from_internal(k)
                out.append(Conflict(ConflictType.NAMESPACE_NOT_EMPTY, key,
                                    f"namespace '{key}' is not empty"))
            continue
        for ns in ancestor_internals(k):
            ok = checked.get(ns)
            if ok is None:
                found = lookup(ns)
                ok = checked[ns] = found is not None and found.type is ContentType.NAMESPACE
            if not ok:
                key = ContentKey.from_internal(k)
                out.append(Conflict(ConflictType.NAMESPACE_ABSENT, key,
                                    f"namespace '{ContentKey.from_internal(ns)}' must exist "
                                    f"for '{key}'"))
                break
    return out
