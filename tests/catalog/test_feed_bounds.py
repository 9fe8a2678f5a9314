"""A page of the change feed costs a few queries however much of the feed
the reader may not see (catalog.feed.events): references it may not read are
left out by the query, keys it may not read in growing batches, and a page
looks at a bounded stretch of stored events, answering with ``hasMore`` and
a cursor past that stretch when it stopped early. On SQLite and PostgreSQL;
the queries are counted on the store's engine."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import pytest
from sqlalchemy import event

from catalog.feed.events import Feed, FeedQuery, scan_rows
from catalog.services import open_services
from catalog.settings import CatalogSettings
from core.auth import Grant, Policy, Principal, Privilege
from core.commits import CommitMeta, Put
from core.content import Namespace
from store import Store
from tests.fixtures import BACKENDS, database_url
from tests.store.helpers import K

HIDDEN = 1500
READER = Principal("reader")
# The reader: read on namespace sales of main, nothing else.
POLICY = Policy.of([Grant("reader", Privilege.READ, "main", ("sales",))], ())


def may_read_ref(ref: str) -> bool:
    return POLICY.reaches(READER, Privilege.READ, ref)


def keys_of(ref: str) -> Callable[[tuple[str, ...]], bool] | None:
    if POLICY.allows(READER, Privilege.READ, ref, None):
        return None
    return lambda key: POLICY.readable_key(READER, ref, key)


@contextmanager
def counted(store: Store) -> Iterator[list[str]]:
    """Every statement the store's reads send, while inside."""
    sent: list[str] = []

    def count(conn: object, cursor: object, statement: str, *rest: object) -> None:
        sent.append(statement)

    event.listen(store.db.read_engine, "before_cursor_execute", count)
    try:
        yield sent
    finally:
        event.remove(store.db.read_engine, "before_cursor_execute", count)


@dataclass
class Hidden:
    store: Store
    feed: Feed
    start: int          # the cursor before the commits below
    visible: list[int]  # the ids of the events the reader may see


@pytest.fixture(scope="module", params=BACKENDS)
def hidden(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
           ) -> Iterator[Hidden]:
    """``HIDDEN`` commits the reader may not see — every other one on the
    branch ``secret``, the rest on ``main`` below ``hr`` — then one it may,
    then 600 more with one it may see in every 300."""
    base = tmp_path_factory.mktemp("feed")
    store = Store(database_url(request, request.param, base))
    warehouse = (base / "warehouse").resolve()
    warehouse.mkdir()
    services = open_services(store, CatalogSettings(store.db.url, warehouse.as_uri()))
    store.commit("main", [Put(K("sales"), Namespace()), Put(K("hr"), Namespace())],
                 CommitMeta("namespaces"))
    store.create_reference("secret")
    start = store.events.last()
    visible = []
    for i in range(HIDDEN + 600):
        if i == HIDDEN or (i > HIDDEN and i % 300 == 7):
            store.commit("main", [Put(K(f"sales.n{i}"), Namespace())], CommitMeta("sales"))
            visible.append(store.events.last())
        else:
            store.commit("secret" if i % 2 else "main", [Put(K(f"hr.n{i}"), Namespace())],
                         CommitMeta(f"hr {i}"))
    yield Hidden(store, Feed(services.catalog), start, visible)
    store.close()


def test_a_page_of_hidden_events_costs_a_few_queries_and_a_cursor(hidden: Hidden) -> None:
    store, feed, start = hidden.store, hidden.feed, hidden.start
    with counted(store) as sent:
        events, more, cursor = feed.page_to(FeedQuery(after=start, max_records=1),
                                            may_read_ref, keys_of)
    assert len(sent) <= 6, f"{len(sent)} queries for one page"
    # Nothing to show in the stretch it looked at, and it says where to go on.
    assert events == [] and more
    assert cursor == start + scan_rows(1) < hidden.visible[0]
    # Following the cursor reaches the event beyond, each page as cheap.
    pages = 1
    while not events:
        with counted(store) as sent:
            events, more, nxt = feed.page_to(FeedQuery(after=cursor, max_records=1),
                                             may_read_ref, keys_of)
        assert len(sent) <= 6, f"{len(sent)} queries for one page"
        assert nxt > cursor
        cursor, pages = nxt, pages + 1
    assert pages == -(-(hidden.visible[0] - start) // scan_rows(1))
    assert [int(e["id"]) for e in events] == [hidden.visible[0]] == [cursor] and more
    (commit,) = events[0]["data"]["commits"]
    assert commit["operations"][0]["key"] == ["sales", f"n{HIDDEN}"]
    # A reader of everything gets a full page from the same cursor.
    everything, more, at = feed.page_to(FeedQuery(after=start, max_records=3))
    assert [int(e["id"]) for e in everything] == [start + 1, start + 2, start + 3]
    assert more and at == start + 3


@pytest.mark.parametrize("size", [1, 2, 1000])
def test_the_cursor_never_skips_an_event_a_reader_may_see(hidden: Hidden, size: int) -> None:
    """Visible events among hidden ones: paging with the cursor shows each
    once, in order, whatever the page size, and then says the feed ends."""
    seen, after, more = [], hidden.start, True
    while more:
        events, more, after = hidden.feed.page_to(FeedQuery(after=after, max_records=size),
                                                  may_read_ref, keys_of)
        seen += [int(e["id"]) for e in events]
    assert seen == hidden.visible
    assert after == hidden.store.events.last()
