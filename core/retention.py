"""Retention policies: how much of a branch's history the catalog keeps.

A policy names branches by a glob (``main``, ``etl/*``, ``*``) and says what
a matching branch retains of its history — its first-parent chain, what
``sapwood log`` shows: the commits younger than ``keep`` (an ISO-8601
duration) and its newest ``keep_commits`` commits, whichever reaches further
back, and always its head. The first policy whose glob matches a branch is
its policy; a branch matching none retains all of its history. A tag
retains its own commit. A commit retained by any reference is retained.
Pure rules: the store keeps the list (store.retention) and applies them."""

from __future__ import annotations

import fnmatch
import math
import re
from dataclasses import dataclass

from core.errors import InvalidInputError

# PnW, PnDTnHnMnS (fractions on the last field; no years or months, whose
# length depends on the calendar). ASCII digits only: Python's \d and
# float() also take other scripts' digits ("P٣D"), which ISO 8601 does not,
# and ``$`` would match before a final newline, so the end is ``\Z``.
_DURATION = re.compile(
    r"^P(?:(?P<w>\d+)W|(?:(?P<d>\d+)D)?(?:T(?:(?P<h>\d+)H)?(?:(?P<m>\d+)M)?"
    r"(?:(?P<s>\d+(?:\.\d+)?)S)?)?)\Z", re.ASCII)
# A hundred years: beyond it, keep everything (and arithmetic stays exact).
MAX_KEEP_S = 100 * 365 * 86_400
MAX_KEEP_COMMITS = 2**31 - 1
MAX_POLICIES = 1000
# How long gc keeps what a deleted or reset branch held (its reflog entries
# name it), so the branch can be made again: a week; at most a century.
DEFAULT_GRACE_S = 7 * 24 * 3600
MAX_GRACE_S = 100 * 365 * 24 * 3600
# The cutoff of a policy that keeps only the head, and of a count the chain
# is shorter than: later and earlier than any commit.
MAX_US = 2**63 - 1
MIN_US = -(2**63)


def parse_duration(text: str) -> float:
    """Seconds in an ISO-8601 duration such as ``P30D``, ``PT12H``, ``P1DT2H``
    or ``P2W``; InvalidInputError naming it otherwise."""
    m = _DURATION.match(text) if isinstance(text, str) else None
    if m is None or text in ("P", "PT") or text.endswith("T"):
        raise InvalidInputError(
            f"Invalid duration {text!r}: expected ISO-8601 such as P30D, PT12H, P1DT2H or "
            "P2W (days, hours, minutes, seconds; no years or months)")
    parts = {k: float(v) for k, v in m.groupdict().items() if v is not None}
    seconds = (parts.get("w", 0) * 7 * 86_400 + parts.get("d", 0) * 86_400
               + parts.get("h", 0) * 3600 + parts.get("m", 0) * 60 + parts.get("s", 0))
    if not math.isfinite(seconds) or seconds > MAX_KEEP_S:
        raise InvalidInputError(f"Invalid duration {text!r}: at most a hundred years")
    return seconds


def check_glob(glob: str) -> str:
    """A glob of reference names: ``*`` any characters (``/`` included), ``?``
    one, ``[...]`` a set; InvalidInputError naming a bad one."""
    if not isinstance(glob, str) or not glob or len(glob) > 255:
        raise InvalidInputError(f"Invalid refs glob {glob!r}: expected 1 to 255 characters")
    if any(c.isspace() or ord(c) < 32 for c in glob):
        raise InvalidInputError(f"Invalid refs glob {glob!r}: no spaces or control characters")
    depth = 0
    for c in glob:
        if c == "[":
            if depth:
                raise InvalidInputError(f"Invalid refs glob {glob!r}: '[' inside a set")
            depth = 1
        elif c == "]" and depth:
            depth = 0
    if depth:
        raise InvalidInputError(f"Invalid refs glob {glob!r}: a '[' set is not closed")
    return glob


@dataclass(frozen=True)
class Policy:
    refs: str
    keep: str | None = None  # the duration as given (shown back as given)
    keep_commits: int | None = None

    @property
    def keep_s(self) -> float | None:
        return parse_duration(self.keep) if self.keep is not None else None

    def matches(self, name: str) -> bool:
        return fnmatch.fnmatchcase(name, self.refs)

    def describe(self) -> str:
        what = [f"keep {self.keep}" if self.keep is not None else "",
                f"keep the newest {self.keep_commits} commits"
                if self.keep_commits is not None else ""]
        said = " and ".join(w for w in what if w) or "keep only the head"
        return f"policy '{self.refs}' ({said})"

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"refs": self.refs}
        if self.keep is not None:
            out["keep"] = self.keep
        if self.keep_commits is not None:
            out["keepCommits"] = self.keep_commits
        return out


def policy(refs: str, keep: str | None = None, keep_commits: int | None = None) -> Policy:
    """A checked policy: InvalidInputError naming a bad glob, duration or count."""
    check_glob(refs)
    if keep is not None:
        parse_duration(keep)
    if keep_commits is not None and (isinstance(keep_commits, bool) or not isinstance(
            keep_commits, int) or not 1 <= keep_commits <= MAX_KEEP_COMMITS):
        raise InvalidInputError(f"Invalid keepCommits {keep_commits!r} for '{refs}': "
                                f"expected a whole number from 1 to {MAX_KEEP_COMMITS}")
    return Policy(refs, keep, keep_commits)


def policies(items: list[Policy]) -> list[Policy]:
    """A whole list: at most MAX_POLICIES, each glob once."""
    if len(items) > MAX_POLICIES:
        raise InvalidInputError(f"Too many retention policies: at most {MAX_POLICIES}")
    seen: set[str] = set()
    for p in items:
        if p.refs in seen:
            raise InvalidInputError(f"Retention policy '{p.refs}' is listed twice")
        seen.add(p.refs)
    return items


def policy_of(items: list[Policy], name: str) -> Policy | None:
    """The first policy whose glob matches branch ``name``; None: it keeps all."""
    return next((p for p in items if p.matches(name)), None)


def cutoff_us(p: Policy, now_us: int, nth_created_us: int | None) -> int:
    """The oldest commit time a branch under ``p`` retains: the later of
    ``now - keep`` and the time of its ``keep_commits``-th newest commit is
    *less* far back, so the earlier of the two reaches further and wins.
    ``nth_created_us``: that commit's time (None: the chain is shorter, so
    the count keeps it all). A policy with neither keeps only the head."""
    bounds: list[int] = []
    if p.keep is not None:
        bounds.append(now_us - int(parse_duration(p.keep) * 1_000_000))
    if p.keep_commits is not None:
        bounds.append(nth_created_us if nth_created_us is not None else MIN_US)
    return min(bounds) if bounds else MAX_US
