"""Retention policies as the catalog's users manage and see them: the list
(read, replaced whole) and what each reference retains now. The rules are
core.retention's, the list and the cutoffs store.retention's; this is what
the API, the CLI (over HTTP) and the UI show of them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from core.commits import Reference, RefType
from core.instants import from_micros
from core.retention import MAX_US, MIN_US, Policy, policies, policy
from store import Store
from store.retention import Cutoff, Head


class Retains(StrEnum):
    ALL = "all"  # its whole history (no policy, or a count longer than its chain)
    HEAD = "head"  # its head only (a tag, or a policy with neither keep nor a count)
    SINCE = "since"  # the commits of its chain made at or after the cutoff


@dataclass(frozen=True, slots=True)
class RefRetention:
    """What one reference retains now: its policy (None: it matches none,
    or it is a tag), and from when its history is kept."""

    name: str
    type: RefType
    policy: Policy | None
    retains: Retains
    cutoff: datetime | None  # set when ``retains`` is SINCE


def get(store: Store) -> list[Policy]:
    """The policies, in the order they are matched."""
    return store.retention.policies()


def replace(store: Store, items: Iterable[Policy]) -> list[Policy]:
    """Replace the whole list with ``items`` (in matching order), each checked
    (InvalidInputError naming a bad glob, duration or count, or a glob listed
    twice: then nothing changes). Returns the list now kept."""
    checked = policies([policy(p.refs, p.keep, p.keep_commits) for p in items])
    store.retention.replace(checked)
    return checked


def cutoffs(store: Store, refs: Iterable[Reference]) -> list[RefRetention]:
    """What each of ``refs`` retains now (at their heads as given), in their
    order; the policies are read once."""
    heads = [Head(r.name, r.type, r.hash) for r in refs]
    if not heads:
        return []
    return [_shown(c) for c in store.retention.cutoffs(heads=heads)]


def _shown(cut: Cutoff) -> RefRetention:
    ref = cut.ref
    if ref.type is RefType.TAG:
        return RefRetention(ref.name, ref.type, None, Retains.HEAD, None)
    if cut.policy is None or cut.at_us is None or cut.at_us <= MIN_US:
        return RefRetention(ref.name, ref.type, cut.policy, Retains.ALL, None)
    if cut.at_us >= MAX_US:
        return RefRetention(ref.name, ref.type, cut.policy, Retains.HEAD, None)
    return RefRetention(ref.name, ref.type, cut.policy, Retains.SINCE, from_micros(cut.at_us))
