from __future__ import annotations

from core.commits import CommitMeta, CommitResult, Put
from core.content import IcebergTable, IcebergView, Namespace
from core.keys import ContentKey
from store import Store

MINUTE = 60_000_000  # µs


class Clock:
    """The store's clock, in µs, moved by hand: retention's cutoffs are
    tested at exact instants. ``step`` moves it on every reading too (never
    two commits at one instant)."""

    def __init__(self, step: int = 0) -> None:
        self.now = 1_800_000_000_000_000  # 2027-01-15T08:00:00Z
        self.step = step

    def __call__(self) -> int:
        self.now += self.step
        return self.now

    def tick(self, us: int = MINUTE) -> None:
        self.now += us


def K(path: str) -> ContentKey:
    return ContentKey(path.split("."))


def table(loc: str, snapshot: int = -1) -> IcebergTable:
    return IcebergTable(metadata_location=loc, snapshot_id=snapshot)


def view(loc: str, version: int = 1) -> IcebergView:
    return IcebergView(metadata_location=loc, version_id=version)


def put_new(store: Store, branch: str, *pairs: tuple[str, object], msg: str = "put",
            author: str | None = None) -> CommitResult:
    return store.commit(branch, [Put(K(k), v) for k, v in pairs],  # type: ignore[arg-type]
                        CommitMeta(msg, author=author))


def update(store: Store, branch: str, key: str, **changes: object) -> CommitResult:
    cur = store.content(branch, K(key))
    return store.commit(branch, [Put(K(key), cur.model_copy(update=changes), expected=cur)],
                        CommitMeta(f"update {key}"))


def with_ns(store: Store, branch: str = "main", *names: str) -> None:
    put_new(store, branch, *[(n, Namespace()) for n in names], msg="namespaces")
