"""``sapwood fsck --memory-mb``: the peak memory of its processes on a store
of some size, measured from each one's own peak (tests/peak_memory.py), on
both backends."""

from core.commits import CommitMeta, MergeBehavior, Put
from core.content import IcebergTable, Namespace
from core.keys import ContentKey
from store import Store
from tests.peak_memory import run_measured
from tests.server import sapwood_command

_KEYS = 20_000
_PER_COMMIT = 5_000


def _sized_store(store: Store) -> None:
    """20,000 tables in bulk commits on a branch merged into main, and small
    commits on main in between (the change index's merge path included)."""
    store.commit("main", [Put(ContentKey.of(f"ns{i}"), Namespace()) for i in range(20)],
                 CommitMeta("namespaces"))
    store.create_reference("load")
    for at in range(0, _KEYS, _PER_COMMIT):
        store.commit("load", [Put(ContentKey.of(f"ns{i % 20}", f"t{i:05}"), IcebergTable(
            metadata_location=f"s3://w/t{i}/m.json")) for i in range(at, at + _PER_COMMIT)],
            CommitMeta("bulk load"))
        store.commit("main", [Put(ContentKey.of("ns0", f"small{at}"), IcebergTable(
            metadata_location=f"s3://w/small{at}.json"))], CommitMeta("small change"))
    store.merge("load", "main", default_mode=MergeBehavior.NORMAL)


def test_fsck_peaks_within_its_budget_and_a_batch(store: Store, store_url: str):
    _sized_store(store)
    fsck = [*sapwood_command(), "fsck", "--database", store_url, "--memory-mb", "64"]
    serial = run_measured(fsck)
    assert serial.returncode == 0, serial.output
    assert serial.output.splitlines()[-1] == "ok"
    assert len(serial.peaks) == 1
    parallel = run_measured([*fsck, "--parallel"])
    assert parallel.returncode == 0, parallel.output
    assert parallel.output.splitlines()[0] == serial.output.splitlines()[0]
    assert len(parallel.peaks) >= 2  # the change-index worker was measured too
    # The interpreter (about 70 MB), the budget, and a batch of commits being
    # checked (25 at a time); --parallel: two interpreters, half the budget each.
    assert serial.own_mb < 64 + 150, serial.peaks
    assert parallel.total_mb < 64 + 300, parallel.peaks
