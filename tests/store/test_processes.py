"""Two Store objects on one database behave like two API processes."""

from core.commits import CommitMeta, Put
from store import Store
from store.state import DELTA_LIMIT
from tests.fixtures import database_url
from tests.store.helpers import K, put_new, table, with_ns


def test_a_stale_head_guess_never_loses_or_refuses_a_good_commit(store_url: str):
    a, b = Store(store_url), Store(store_url)
    try:
        with_ns(a, "main", "ns")
        put_new(a, "main", ("ns.t", table("v1")))  # a now guesses main's head
        # b moves main twice behind a's back, changing ns.t
        t = b.content("main", K("ns.t"))
        b.commit("main", [Put(K("ns.t"), t.model_copy(update={"metadata_location": "v2"}),
                              expected=t)], CommitMeta("update"))
        put_new(b, "main", ("ns.u", table("u")))
        # a reads the current value and updates it: planned first against its
        # stale guess (where the expected content looks wrong), it must still land.
        t2 = a.content("main", K("ns.t"))
        assert t2.metadata_location == "v2"
        a.commit("main", [Put(K("ns.t"), t2.model_copy(update={"metadata_location": "v3"}),
                              expected=t2)], CommitMeta("from a"))
        put_new(a, "main", ("ns.w", table("w")))
        log = [c.message for c in b.log("main").items]
        assert log == ["put", "from a", "put", "update", "put", "namespaces"]
        assert b.content("main", K("ns.t")).metadata_location == "v3"
        assert {str(k) for k in b.contents("main", [K("ns.u"), K("ns.w")])} == {"ns.u", "ns.w"}
    finally:
        a.close()
        b.close()


def test_transplant_spilling_the_delta_midway(store: Store):
    with_ns(store, "main", "ns")
    store.create_reference("dev")
    hashes = [put_new(store, "dev", (f"ns.t{i:03d}", table(str(i)))).hash
              for i in range(DELTA_LIMIT + 8)]
    res = store.transplant(hashes, onto="main")
    assert len(res.created_commits) == len(hashes)
    assert store.diff("main", "dev").items == []
    head = store.reader.commit(store.get_reference("main").hash)
    assert len(store.reader.state(head).delta) < DELTA_LIMIT  # it spilled into the tree on the way
    store.reader.clear_caches()
    got = store.contents("main", [K(f"ns.t{i:03d}") for i in range(DELTA_LIMIT + 8)])
    assert len(got) == DELTA_LIMIT + 8


def test_a_writer_connection_killed_by_the_server_is_replaced(request, tmp_path):
    """The writer keeps its own connection; when PostgreSQL drops it (restart,
    idle timeout, an operator) the next commit re-plans on a fresh one."""
    import psycopg

    url = database_url(request, "postgres", tmp_path, "killed")
    store = Store(url)
    try:
        with_ns(store, "main", "ns")
        held = store.db.writers.acquire()  # so that the commit opens a second one
        put_new(store, "main", ("ns.a", table("a")))
        store.db.writers.release(held)
        assert len(store.db.writers._idle) == 2
        dsn = url.replace("postgresql+psycopg://", "postgresql://")
        with psycopg.connect(dsn, autocommit=True) as admin:
            killed = admin.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()").fetchone()
        assert killed and killed[0] >= 1
        put_new(store, "main", ("ns.b", table("b")))
        cur = store.content("main", K("ns.a"))
        store.commit("main", [Put(K("ns.a"), cur.model_copy(
            update={"metadata_location": "a2"}), expected=cur)], CommitMeta("after"))
        assert [c.message for c in store.log("main").items][:3] == ["after", "put", "put"]
        assert store.content("main", K("ns.a")).metadata_location == "a2"
    finally:
        store.close()


def test_writer_connections_are_bounded(store: Store):
    """A server's thread pool may be larger than the writer pool: extra
    threads wait their turn instead of opening more database connections."""
    import threading

    with_ns(store, "main", "ns")
    size = store.db.writers.size
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            put_new(store, "main", (f"ns.t{i}", table(str(i))))
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(3 * size)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(store.db.writers._idle) <= size
    assert len(store.entries("main", K("ns")).items) == 3 * size
