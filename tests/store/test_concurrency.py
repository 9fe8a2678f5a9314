"""8 writers x 200 commits on one branch, on both backends."""

import threading
from collections.abc import Callable

import pytest

from core.commits import CommitMeta, Put
from core.conflicts import CommitConflictError
from store import Store
from store.fsck import fsck
from tests.store.helpers import K, table, with_ns

WRITERS = 8
COMMITS = 200


def _run_writers(work: Callable[[int], None]) -> list[BaseException]:
    errors: list[BaseException] = []
    start = threading.Barrier(WRITERS)

    def run(w: int) -> None:
        start.wait()
        try:
            work(w)
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=run, args=(w,)) for w in range(WRITERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    return errors


def _all_commits(store: Store) -> list:
    out, token = [], None
    while True:
        page = store.log("main", page_token=token, page_size=500)
        out += page.items
        if not (token := page.next_token):
            return out


@pytest.mark.slow
def test_disjoint_keys_lose_no_commit(store: Store):
    with_ns(store, "main", "ns")
    per_writer = 4
    written: dict[int, list[str]] = {}

    def work(w: int) -> None:
        hashes = []
        for j in range(COMMITS):
            key = K(f"ns.w{w}_{j % per_writer}")
            loc = f"w{w}-{j}"
            if j < per_writer:
                op = Put(key, table(loc))
            else:
                cur = store.content("main", key)
                op = Put(key, cur.model_copy(update={"metadata_location": loc}), expected=cur)
            hashes.append(store.commit("main", [op], CommitMeta(loc, author=f"w{w}")).hash)
        written[w] = hashes

    assert _run_writers(work) == []
    log = _all_commits(store)
    assert len(log) == 1 + WRITERS * COMMITS
    in_log = {c.hash for c in log}
    assert all(h in in_log for hs in written.values() for h in hs)
    # Each writer's own commits appear in the order it made them.
    for w in range(WRITERS):
        mine = [c.message for c in reversed(log) if c.author == f"w{w}"]
        assert mine == [f"w{w}-{j}" for j in range(COMMITS)]
    values = store.contents("main", [K(f"ns.w{w}_{i}") for w in range(WRITERS)
                                     for i in range(per_writer)])
    for w in range(WRITERS):
        for i in range(per_writer):
            last = max(j for j in range(COMMITS) if j % per_writer == i)
            assert values[K(f"ns.w{w}_{i}")].metadata_location == f"w{w}-{last}"
    report = fsck(store)  # nothing half-written, every object where it should be
    assert report.problems == [] and report.unreachable_commits == 0


@pytest.mark.slow
def test_overlapping_keys_every_rejection_is_a_conflict(store: Store):
    with_ns(store, "main", "ns")
    shared = [K(f"ns.shared{i}") for i in range(4)]
    store.commit("main", [Put(k, table("init")) for k in shared], CommitMeta("seed"))
    accepted: dict[str, tuple[str, str]] = {}
    rejected: list[CommitConflictError] = []
    lock = threading.Lock()

    def work(w: int) -> None:
        for j in range(COMMITS):
            key = shared[(w + j) % len(shared)]
            cur = store.content("main", key)
            loc = f"w{w}-{j}"
            try:
                res = store.commit("main", [Put(key, cur.model_copy(
                    update={"metadata_location": loc}), expected=cur)], CommitMeta(loc))
            except CommitConflictError as e:
                with lock:
                    rejected.append(e)
                continue
            with lock:
                accepted[res.hash] = (str(key), loc)

    assert _run_writers(work) == []  # nothing but conflicts may go wrong
    assert len(accepted) + len(rejected) == WRITERS * COMMITS
    assert accepted, "no write got through"
    for e in rejected:
        assert [str(c.type) for c in e.conflicts] == ["VALUE_DIFFERS"]
    log = _all_commits(store)
    assert len(log) == 2 + len(accepted)  # namespaces + seed + every accepted write
    last: dict[str, str] = {}
    for c in reversed(log):
        if c.hash in accepted:
            key, loc = accepted[c.hash]
            assert [str(op.key) for op in c.operations] == [key]
            last[key] = loc
    assert set(accepted) <= {c.hash for c in log}
    final = store.contents("main", shared)
    assert {str(k): v.metadata_location for k, v in final.items()} == last
    report = fsck(store)
    assert report.problems == [] and report.unreachable_commits == 0
