"""Merges and transplants as the versioning API runs them: the store's
three-way merge, with the keys both sides changed combined by content
(catalog.merge.content) and the views the merge would break or make read
themselves found first.

The store does not read metadata files, so a merge is worked out here: a
dry run, the combinations of the keys both sides changed (written as new
metadata files) at the dry run's target head, a check for view
read-cycles, then the merge itself with those combinations. The dry run and
the landing share one plan (store.merging.MergePlan): the source's name is
resolved once, and while the target stays at the dry run's head the
landing takes the merge base, the changed keys and (with nothing combined)
each key's decision from it instead of working them out again. The store takes
a combination only while the target still holds what it was worked out
from; a conflict marked ``retryable`` says the target moved (the store's,
or one the dry run did not show), and the merge is worked out again, up to
ATTEMPTS times. After that it is answered as abandoned, each key saying so.
Files of a merge that did not land are removed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from difflib import get_close_matches

from catalog.kernel import Catalog
from catalog.merge.content.combine import Combined, combine, combiner, discard, report
from catalog.merge.impact import InvalidatedView, invalidated_views, merge_cycle
from core.commits import (
    CommitMeta,
    KeyMergeDetail,
    KeyOutcome,
    MergeBehavior,
    MergeResult,
    Resolution,
)
from core.conflicts import CommitConflictError, Conflict, ConflictType
from core.errors import bad_request
from core.keys import ContentKey
from core.refs import normalize_hash
from store.idempotency import Once
from store.merging import MergePlan

# A combination is worked out at the target's head; if that moves before the
# merge lands, it is worked out again, this many times at most.
ATTEMPTS = 3


@dataclass(frozen=True, slots=True)
class MergeRequest:
    source: str                      # a ref spec: name, name@hash ...
    into: str                        # the branch
    expected_hash: str | None = None  # the target as the caller saw it
    default_mode: MergeBehavior = MergeBehavior.NORMAL
    modes: dict[ContentKey, MergeBehavior] = field(default_factory=dict)
    dry_run: bool = False
    content_merge: bool = True
    meta: CommitMeta = field(default_factory=CommitMeta)
    principal: str | None = None
    # The request's Idempotency-Key: recorded with the merge commit, its
    # answer made of the MergeOutcome the merge returns.
    once: Once | None = None


@dataclass(frozen=True, slots=True)
class MergeOutcome:
    result: MergeResult
    # How many times the merge was worked out (1 when nothing moved).
    attempts: int = 1
    # The target's views the merge breaks (or would: a dry run, conflicts),
    # worked out on the head it lands on; None when it was not (abandoned).
    invalidated: list[InvalidatedView] | None = None


# Called after a merge was worked out and before it lands (a test moves the
# target there, to see the merge worked out again).
BeforeLanding = Callable[[MergeResult], None]


def merge(catalog: Catalog, req: MergeRequest,
          before_landing: BeforeLanding | None = None) -> MergeOutcome:
    """The merge's outcome, conflicts included (the caller decides whether
    they are an error). A merge that would make views read themselves is
    refused (CommitConflictError)."""
    result: MergeResult | None = None
    plan = MergePlan()
    for attempt in range(1, ATTEMPTS + 1):
        preview = _run(catalog, req, plan, dry_run=True, expected=req.expected_hash)
        refuse_unknown_modes(req.modes, [d.key for d in preview.details], "merge")
        combined = combine(catalog, preview, write=not req.dry_run) if req.content_merge \
            else Combined()
        shown = report(preview, combined)
        _refuse_cycle(catalog, shown, combined)
        if req.dry_run or shown.conflicts:
            discard(catalog, combined)  # a refused merge keeps none of its files
            # What would break on the target: a publisher sees it before merging.
            return MergeOutcome(shown, attempt, invalidated_views(
                catalog, shown.expected_target_hash, shown))
        # What it breaks, worked out at the head it lands on (the landing
        # expects that head), so the answer can warn of it.
        breaks = invalidated_views(catalog, shown.expected_target_hash, shown)
        if before_landing is not None:
            before_landing(shown)
        result = _land(catalog, replace(req, once=_answered(req.once, attempt, breaks)),
                       plan, shown, combined)
        if not (result.conflicts and all(c.retryable for c in result.conflicts)):
            return MergeOutcome(result, attempt, breaks if result.applied else None)
    # Abandoned: the target kept moving. Each key says so, marked retryable
    # (a client tells it from "cannot be merged").
    assert result is not None
    return MergeOutcome(replace(result, details=[_abandoned(d) for d in result.details]),
                        ATTEMPTS)


def _answered(once: Once | None, attempt: int,
              breaks: list[InvalidatedView]) -> Once | None:
    """The key as the merge's commit records it: the answer is made of the
    outcome the caller gets (the views it breaks with it), not of the
    store's result alone, so a replay is the first answer."""
    if once is None or once.answer is None:
        return once
    answer = once.answer
    return once.bind(lambda result: answer(MergeOutcome(result, attempt, breaks)))


def refuse_unknown_modes(modes: Iterable[ContentKey], changed: Sequence[ContentKey],
                         what: str) -> None:
    """A per-key mode for a key the merge (transplant, revert) does not
    change is refused, 400 naming it: a mistyped key would otherwise be
    ignored, and the key meant merged by the default rule."""
    unknown = sorted(set(modes) - set(changed))
    if not unknown:
        return
    names = [str(k) for k in changed]
    said = []
    for k in unknown:
        close = get_close_matches(str(k), names, n=1)
        said.append(f"'{k}'" + (f" (did you mean '{close[0]}'?)" if close else ""))
    raise bad_request(
        f"keyMergeModes names {'a key' if len(unknown) == 1 else 'keys'} this {what} does "
        f"not change: {', '.join(said)}; it changes "
        + (f"{len(names)} key{'' if len(names) == 1 else 's'}" if names else "no key"))


def _run(catalog: Catalog, req: MergeRequest, plan: MergePlan, *, dry_run: bool,
         expected: str | None,
         resolutions: dict[ContentKey, Resolution] | None = None) -> MergeResult:
    return catalog.store.merge(
        req.source, req.into, expected_hash=expected, default_mode=req.default_mode,
        key_modes=req.modes, dry_run=dry_run, meta=req.meta, principal=req.principal,
        raise_on_conflict=False, resolutions=resolutions,
        once=None if dry_run else req.once, plan=plan)


def _refuse_cycle(catalog: Catalog, shown: MergeResult, combined: Combined) -> None:
    """Each branch may hold half of a view read-cycle: refused before landing."""
    cycle = merge_cycle(catalog, shown.expected_target_hash, shown) \
        if not shown.conflicts else None
    if cycle:
        discard(catalog, combined)
        raise CommitConflictError([Conflict(
            ConflictType.VALUE_DIFFERS, cycle[0],
            "the merge would make views read themselves: "
            + " → ".join(str(k) for k in cycle))])


def _land(catalog: Catalog, req: MergeRequest, plan: MergePlan, shown: MergeResult,
          combined: Combined) -> MergeResult:
    """The merge, against the head the combinations were worked out at."""
    try:
        result = _run(catalog, req, plan, dry_run=False,
                      expected=shown.expected_target_hash, resolutions=combined.resolutions)
    except BaseException:
        discard(catalog, combined)
        raise
    if not result.applied:
        discard(catalog, combined)
    return _moved(result, shown)


def _moved(result: MergeResult, preview: MergeResult) -> MergeResult:
    """Conflicts the merge met that its dry run did not: the target changed
    those keys in between, so the merge was worked out without them (no
    combination was tried); sending it again works them out."""
    seen = {c.key for c in preview.conflicts}
    details = []
    for d in result.details:
        c = d.conflict
        if c is not None and d.outcome is KeyOutcome.CONFLICT and not c.retryable and \
                c.key not in seen and c.type is ConflictType.VALUE_DIFFERS:
            d = replace(d, conflict=replace(
                c, retryable=True, message=f"{c.message} (the target changed it after the "
                                           "merge was worked out)"))
        details.append(d)
    return replace(result, details=details)


def _abandoned(d: KeyMergeDetail) -> KeyMergeDetail:
    if d.conflict is None or not d.conflict.retryable:
        return d
    why = (f"the target changed under the combination of key '{d.key}' on each of "
           f"{ATTEMPTS} attempts: the merge was abandoned; send it again")
    return replace(d, conflict=replace(d.conflict, message=why),
                   conflict_details={**(d.conflict_details or {}), "combination": "abandoned",
                                     "reason": "target-moved", "attempts": ATTEMPTS})


@dataclass(frozen=True, slots=True)
class TransplantRequest:
    hashes: list[str]
    onto: str
    expected_hash: str | None = None
    default_mode: MergeBehavior = MergeBehavior.NORMAL
    modes: dict[ContentKey, MergeBehavior] = field(default_factory=dict)
    dry_run: bool = False
    content_merge: bool = True
    principal: str | None = None
    once: Once | None = None


def transplant(catalog: Catalog, req: TransplantRequest) -> MergeResult:
    """Replay commits onto a branch; keys a transplanted commit and the target
    both changed are combined by the merge's rules, commit by commit."""
    if req.modes:  # the keys the transplanted commits change
        store = catalog.store
        refuse_unknown_modes(req.modes, sorted({
            op.key for h in req.hashes
            for op in store.reader.commit(store.full_hash(normalize_hash(h))).operations}),
            "transplant")
    written: list[str] = []
    combine_one = combiner(catalog, not req.dry_run, written) if req.content_merge else None
    try:
        result = catalog.store.transplant(
            req.hashes, req.onto, expected_hash=req.expected_hash,
            default_mode=req.default_mode, key_modes=req.modes, dry_run=req.dry_run,
            principal=req.principal, raise_on_conflict=False, combiner=combine_one,
            once=req.once)
    except BaseException:
        discard(catalog, Combined(files=written))
        raise
    if not result.applied:
        discard(catalog, Combined(files=written))
    return result
