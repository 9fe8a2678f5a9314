"""The versioning API's ``filter`` (Nessie's CEL expression, core.cel_filter)
on the commit log and on entries: the store's pages walked from the
request's cursor, each item tested, until a page of matches is full, the
listing ends, or the request's evaluation budget is spent (then the page
is shorter, maybe empty, with ``hasMore`` and a token past what was looked
at). Runs where the route's store work runs (both routes are plain
functions: FastAPI's thread pool), never on the event loop.

What the caller may not see is never shown to a filter nor counted: the
entries' store walk skips such keys before anything is tested (its
``visible``), and the log is answered only to readers of the whole
reference. A log's walk stops at its reference's retention cutoff: nothing
past it is looked at. The cursors are the store's (the route seals them).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from fastapi import Query

from core.cel_filter import CompiledFilter, Evaluation, compile_filter, fill
from core.commits import Commit, Entry, Page
from core.instants import to_micros
from core.pages import clamp_page_size, encode_token

# The parameter, as Nessie names it (org.projectnessie.api.v2.params).
NessieFilter = Annotated[str | None, Query(alias="filter")]


def log_filter(text: str | None) -> CompiledFilter | None:
    """The log's filter compiled (a 400 naming what is wrong), or None."""
    return compile_filter(text, "history") if text is not None else None


def entries_filter(text: str | None) -> CompiledFilter | None:
    return compile_filter(text, "entries") if text is not None else None


def filtered_log(log: Callable[..., Page[Commit]], compiled: CompiledFilter,
                 cursor: str | None, size: int | None, operations: bool,
                 cutoff_us: int | None) -> Page[Commit]:
    """A page of the commits ``compiled`` accepts; ``log(cursor, n,
    operations=…)`` is the store's log with the route's other filters.
    A filter that reads ``operations`` gets them whatever ``fetch`` says."""
    ev = Evaluation(compiled)
    with_ops = operations or "operations" in compiled.needs.variables

    def fetch(at: str | None, n: int) -> Page[Commit]:
        return log(at, n, operations=with_ops)

    def past(c: Commit) -> bool:
        return cutoff_us is not None and to_micros(c.created_at) < cutoff_us

    items, token = fill(fetch, cursor, clamp_page_size(size), ev.commit,
                        lambda c: encode_token(c.hash), lambda: ev.spent, past)
    return Page(items, token)


def filtered_entries(entries: Callable[..., Page[Entry]], compiled: CompiledFilter,
                     cursor: str | None, size: int | None, with_content: bool,
                     contents: Callable[[list[Any]], dict[Any, Any]]) -> Page[Entry]:
    """A page of the entries ``compiled`` accepts; ``entries(page_token=,
    page_size=, with_content=)`` is the store's listing (keys the caller may
    not see already skipped), ``contents(keys)`` the values of the kept ones
    when ``content=true`` (loaded for those only, not for every key tested)."""
    ev = Evaluation(compiled)

    def fetch(at: str | None, n: int) -> Page[Entry]:
        return entries(page_token=at, page_size=n, with_content=False)

    items, token = fill(fetch, cursor, clamp_page_size(size), ev.entry,
                        lambda e: encode_token(e.key.internal), lambda: ev.spent)
    if with_content and items:
        values = contents([e.key for e in items])
        items = [Entry(e.key, e.type, e.content_id, values.get(e.key)) for e in items]
    return Page(items, token)
