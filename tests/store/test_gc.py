"""Garbage collection of store objects: a deleted branch's commits and the
objects only they hold go; everything reachable reads as before (fsck clean);
the grace period keeps recently unreferenced commits; a pack that holds a
live object (a transplanted value) is kept; a dry run removes nothing; and a
commit written between the mark and the sweep that needs a doomed commit
stops the sweep."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import text

from core.commits import CommitMeta, Put
from store import Store
from store import gc as gc_mod
from store.fsck import fsck
from tests.store.helpers import K, put_new, table, update, view, with_ns


def _commits(store: Store) -> int:
    with store.db.read() as conn:
        return conn.execute(text("SELECT count(*) FROM commits")).scalar_one()


def _everything(store: Store, ref: str = "main") -> dict[str, str]:
    out = {}
    for e in store.entries(ref, None, page_size=1000, with_content=True).items:
        out[str(e.key)] = e.content.model_dump_json()  # type: ignore[union-attr]
    return out


def _scratch_branch(store: Store, name: str = "tmp", commits: int = 50) -> None:
    store.create_reference(name)
    put_new(store, name, ("ns.tmp_t", table("t0")), ("ns.tmp_v", view("v0")))
    for i in range(commits - 1):
        update(store, name, "ns.tmp_t" if i % 2 else "ns.tmp_v",
               metadata_location=f"{name}{i}")
    store.delete_reference(name, store.get_reference(name).hash)


@pytest.fixture
def busy(store: Store) -> Store:
    with_ns(store, "main", "ns")
    put_new(store, "main", *[(f"ns.t{i}", table(f"t{i}")) for i in range(30)])
    for i in range(10):
        update(store, "main", f"ns.t{i}", metadata_location=f"main{i}")
    return store


def test_a_deleted_branch_is_collected_and_main_reads_the_same(busy: Store) -> None:
    before, main_head = _everything(busy), busy.get_reference("main").hash
    _scratch_branch(busy)
    total = _commits(busy)
    dry = gc_mod.collect(busy, grace_s=0, dry_run=True)
    assert dry.removed_commits == 50 and _commits(busy) == total  # nothing removed
    report = gc_mod.collect(busy, grace_s=0)
    assert report.aborted is None and report.removed_commits == 50, report
    assert _commits(busy) == total - 50
    assert _everything(busy) == before and busy.get_reference("main").hash == main_head
    assert _everything(busy, f"@{main_head}~5") == _everything(busy, "main~5")
    assert fsck(busy).ok, fsck(busy).problems
    # Nothing left to do.
    assert gc_mod.collect(busy, grace_s=0).removed_commits == 0


def test_the_grace_period_keeps_a_recently_deleted_branch(busy: Store) -> None:
    _scratch_branch(busy, commits=5)
    total = _commits(busy)
    # The default grace (7 days): its reflog still names the deleted head, so
    # its commits are live (the branch can be recreated from the reflog).
    report = gc_mod.collect(busy)
    assert report.removed_commits == 0 and report.unreachable_commits == 0
    assert _commits(busy) == total


def test_a_pack_holding_a_live_value_is_kept(busy: Store) -> None:
    busy.create_reference("side")
    put_new(busy, "side", ("ns.picked", table("p0")))
    picked = busy.get_reference("side").hash
    put_new(busy, "side", ("ns.dropped", table("d0")))
    busy.transplant([picked], "main")  # main's entry keeps the side commit's pack
    busy.delete_reference("side", busy.get_reference("side").hash)
    report = gc_mod.collect(busy, grace_s=0)
    assert report.removed_commits == 1 and report.kept_commits == 1, report
    assert busy.content("main", K("ns.picked")).metadata_location == "p0"
    assert fsck(busy).ok, fsck(busy).problems


def test_a_commit_made_during_gc_that_needs_a_doomed_one_stops_the_sweep(
        busy: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    _scratch_branch(busy, commits=3)
    with busy.db.read() as conn:
        old = conn.execute(text("SELECT new_hash FROM reflog WHERE ref = 'tmp' "
                                "AND new_hash IS NOT NULL ORDER BY id DESC")).scalar()
    real = gc_mod._candidates

    def racing(*args, **kwargs):  # type: ignore[no-untyped-def]
        found = real(*args, **kwargs)
        # A writer, between the mark and the sweep, revives the dead branch.
        busy.create_reference("revived", source=f"@{old}")
        busy.commit("revived", [Put(K("ns.late"), table("late"))], CommitMeta("late"))
        return found

    monkeypatch.setattr(gc_mod, "_candidates", racing)
    total = _commits(busy)
    report = gc_mod.collect(busy, grace_s=0)
    assert report.aborted and "unreachable" in report.aborted, report
    assert _commits(busy) == total + 1  # nothing removed; the late commit landed
    assert busy.content("revived", K("ns.tmp_t")) is not None
    assert fsck(busy).ok, fsck(busy).problems


def test_gc_concurrent_with_writers_loses_nothing(busy: Store) -> None:
    """Four writers commit (two on main, two on their own branches that are
    also deleted and re-made) while gc runs again and again with no grace:
    every commit they made is there and whole afterwards."""
    import threading

    url = busy.db.url
    for b in ("w2", "w3"):
        busy.create_reference(b)
    errors: list[str] = []
    made: dict[str, list[str]] = {}

    def writer(i: int) -> None:
        s = Store(url)
        branch = "main" if i < 2 else f"w{i}"
        try:
            for j in range(40):
                key = f"ns.w{i}_{j}"
                s.commit(branch, [Put(K(key), table(f"w{i}/{j}"))], CommitMeta(f"w{i} {j}"))
                made.setdefault(branch, []).append(key)
                if i >= 2 and j % 10 == 9:  # a scratch branch comes and goes
                    s.create_reference(f"scratch{i}_{j}", source=branch)
                    put_new(s, f"scratch{i}_{j}", ("ns.scratch", table("s")))
                    s.delete_reference(f"scratch{i}_{j}",
                                       s.get_reference(f"scratch{i}_{j}").hash)
        except Exception as e:
            errors.append(f"writer {i}: {e!r}")
        finally:
            s.close()

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    removed = 0
    while any(t.is_alive() for t in threads):
        g = Store(url)
        try:
            removed += gc_mod.collect(g, grace_s=0).removed_commits
        finally:
            g.close()
    for t in threads:
        t.join()
    removed += gc_mod.collect(busy, grace_s=0).removed_commits
    assert not errors, errors
    assert removed > 0  # the scratch branches were collected meanwhile
    for branch, keys in made.items():
        for key in keys:
            assert busy.content(branch, K(key)) is not None, (branch, key)
    report = fsck(busy)
    assert report.ok, report.problems


def test_kill_9_during_gc_leaves_a_whole_catalog(busy: Store, tmp_path: Path) -> None:
    """Ten times: garbage made, ``sapwood gc`` started and killed with SIGKILL
    at a random moment; fsck stays clean and main reads as before."""
    import os
    import random
    import signal
    import time

    from tests.zygote_client import run as sapwood
    from tests.zygote_client import spawn

    gc = ["gc", "--database", busy.db.url, "--grace", "0", "--warehouse", "memory://nothing"]
    before = _everything(busy)
    # The verb is forked from the worker's zygote, its imports done: it
    # starts working at once, and a whole run (timed here, on garbage like
    # the runs below make, once the zygote is up) is the span a kill is
    # drawn from.
    assert sapwood(["--version"]).returncode == 0
    _scratch_branch(busy, name="timed", commits=20)
    started = time.monotonic()
    assert sapwood(gc).returncode == 0
    whole = time.monotonic() - started
    rnd = random.Random(9)
    finished = 0
    for run in range(10):
        _scratch_branch(busy, name=f"gone{run}", commits=20)
        proc = spawn(gc, dict(os.environ), tmp_path / f"gc{run}.log")
        time.sleep(rnd.uniform(0, whole))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
        else:
            finished += 1
        proc.wait()
        report = fsck(busy)
        assert report.ok, (run, report.problems)
        assert _everything(busy) == before
    assert finished < 10  # most runs were really cut short
