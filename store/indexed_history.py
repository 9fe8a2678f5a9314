"""History questions answered from the change index (store.changes): the
commits that put a content id over every parent, and the first-parent log
filtered by key, author and time. Each costs the commits the index names
for the term (times an O(log n) chain test), not the history length."""

from __future__ import annotations

from core.keys import ContentKey
from store.changes import ChangeIndex, Posting, author_term, id_term, key_term
from store.commit_records import CommitRecord
from store.history import History
from store.objects import ObjectReader


def reached_puts(changes: ChangeIndex, reader: ObjectReader, head: str, content_id: str,
                 ) -> list[CommitRecord]:
    """Every commit reachable from ``head`` (over every parent) that puts
    ``content_id``, newest first by time."""
    top = reader.commit(head)
    tips = dict(changes.ancestry([head]))
    found: list[CommitRecord] = []
    for p in changes.postings(id_term(content_id), top.generation):
        if not any(changes.on_chain(p, t) for t in tips.values()):
            continue
        rec = reader.commit(p.hash)
        if len(rec.parents) > 1:  # a merge: its other sides are reached too
            tips.update(changes.ancestry([h for h in rec.parents[1:] if h not in tips]))
        if p.kind == "P":
            found.append(rec)
    found.sort(key=lambda r: r.created_us, reverse=True)
    return found


def chain_log(changes: ChangeIndex, reader: ObjectReader, history: History, start: str,
              size: int, key: ContentKey | None, author: str | None, since_us: int | None,
              until_us: int | None, light: bool = False,
              ) -> tuple[list[CommitRecord], str | None]:
    """Up to ``size`` commits of ``start``'s first-parent chain, newest first,
    that touch ``key``, are by ``author`` and fall between the instants; and
    the hash to continue from, if there are more. ``light``: the commits
    without their operations (read only when a caller asks for them)."""
    if key is None and author is None:
        return _by_time(reader, history, changes, start, size, since_us, until_us, light)
    read = reader.commit_light if light else reader.commit
    tip = changes.ancestry([start])[start]
    term = key_term(key) if key is not None else author_term(author)  # type: ignore[arg-type]
    out: list[CommitRecord] = []
    for p in changes.postings(term, reader.commit(start).generation):
        if until_us is not None and p.created_us > until_us:
            continue
        if not changes.on_chain(p, tip):
            continue
        if since_us is not None and p.created_us < since_us:
            break  # times never decrease along a chain: nothing older matches
        rec = read(p.hash)
        if author is not None and rec.author != author:
            continue
        if len(out) == size:
            return out, p.hash
        out.append(rec)
    return out, None


def _by_time(reader: ObjectReader, history: History, changes: ChangeIndex, start: str,
             size: int, since_us: int | None, until_us: int | None, light: bool = False,
             ) -> tuple[list[CommitRecord], str | None]:
    cursor = changes.at_or_before(start, until_us) if until_us is not None else start
    out: list[CommitRecord] = []
    while cursor:
        batch = history.chain(cursor, min(size + 1, 200), light)
        cursor = None
        for rec in batch:
            if not rec.parents:  # the root: not a commit of anyone's
                return out, None
            if since_us is not None and rec.created_us < since_us:
                return out, None
            if len(out) == size:
                return out, rec.hash
            out.append(rec)
        if batch and batch[-1].parents:
            cursor = batch[-1].parents[0]
    return out, None


__all__ = ["Posting", "chain_log", "reached_puts"]
