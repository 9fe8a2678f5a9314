"""Integrity check of the commit-log store (``sapwood fsck``).

Walks refs → commits → index nodes → content values and reports what is
missing or does not match its hash. It only reads. Commits no ref reaches (a
deleted branch's) are not problems: they are counted, so that a future
``gc`` has something to go by.

In bounded memory (``memory_budget``, default 512 MB): what it holds for
every reachable commit is a skeleton (hash, parents, time, index root and
depth; about 300 bytes each), its caches are bounded by bytes, and the sets
that keep it from checking an index node or a value twice are bounded too —
past their share of the budget they start again, which costs time (a node
or value checked twice) but never a finding. Commits are checked a batch at
a time, values as the walk finds them. Time is linear in the objects.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import queue
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import bindparam, func, select

from core.commits import NO_ANCESTOR, IndexEntry
from store.commit_records import COMMIT_COLUMNS, SKELETON_COLUMNS, CommitRecord, record_from_row
from store.db import Database
from store.fsck_changes import check_change_index
from store.nodes import StoredRef, node_identity
from store.objects import ObjectReader
from store.schema import COMMITS
from store.store import Store
from store.writes import commit_digest

_BATCH = 500
# Commits read whole (operations included) per query: a bulk load's are a
# megabyte each.
_FULL_BATCH = 25
DEFAULT_BUDGET = 512 * 1024 * 1024
_SELECT_COMMITS = select(*COMMIT_COLUMNS).where(
    COMMITS.c.hash.in_(bindparam("hashes", expanding=True)))
_SELECT_SKELETON = select(*SKELETON_COLUMNS).where(
    COMMITS.c.hash.in_(bindparam("hashes", expanding=True)))
# (stage, items done so far) → a progress line (the CLI's, on a terminal).
Progress = Callable[[str, int], None] | None
# What one entry of a "seen" set holds (a 16-byte digest in a set).
_SEEN_ENTRY = 100


@dataclass(frozen=True)
class Problem:
    kind: str  # missing-commit, bad-commit-hash, bad-depth, missing-node, bad-node-hash, ...
    where: str
    detail: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.where}: {self.detail}"


@dataclass
class FsckReport:
    refs: int = 0
    commits: int = 0
    unreachable_commits: int = 0
    nodes: int = 0
    contents: int = 0
    index_rows: int = 0  # the change index's rows checked (store.fsck_changes)
    problems: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def add(self, p: Problem) -> None:
        if p not in self.problems:  # a node or value checked twice says it once
            self.problems.append(p)


@dataclass(frozen=True, slots=True)
class _Skeleton:
    """What the commit checks need of a commit's neighbours."""

    parents: tuple[str, ...]
    created_us: int
    root: StoredRef | None
    depth: int


class _Seen:
    """A set of hashes that forgets everything past its share of the budget."""

    def __init__(self, budget: int) -> None:
        self.limit = max(budget // _SEEN_ENTRY, 1_000)
        self.items: set[bytes] = set()

    def first_time(self, hex_hash: str) -> bool:
        key = bytes.fromhex(hex_hash[:32])
        if key in self.items:
            return False
        if len(self.items) >= self.limit:
            self.items.clear()
        self.items.add(key)
        return True


def fsck(store: Store, memory_budget: int = DEFAULT_BUDGET,
         progress: Progress = None, parallel: bool = False) -> FsckReport:
    """``parallel``: the change index is checked by a second process while
    this one walks the objects (each within half the budget): both read the
    database at once, which SQLite's readers and PostgreSQL allow."""
    worker = None
    if parallel:
        memory_budget //= 2
        ctx = multiprocessing.get_context("spawn")
        results: multiprocessing.Queue[tuple[list[Problem], int]] = ctx.Queue()
        worker = ctx.Process(target=_change_index_in_worker,
                             args=(store.db.url, memory_budget // 8, results), daemon=True)
        worker.start()
    # Its own reader, its caches an eighth of the budget: everything is read
    # from the database (not from what this process wrote), and a running
    # server's caches are left alone.
    reader = ObjectReader(store.db, node_cache_size=5_000, commit_cache_size=100,
                          content_cache_size=100, content_text_cache_size=50_000,
                          max_bytes=memory_budget // 8)
    report = FsckReport()
    heads = _ref_heads(store)
    report.refs = len(heads)
    skeletons = _walk_commits(store, heads, report, progress)
    report.commits = len(skeletons)
    with store.db.read() as conn:
        total = conn.execute(select(func.count()).select_from(COMMITS)).scalar_one()
    report.unreachable_commits = total - len(skeletons)
    values = _Seen(memory_budget // 4)
    pending: list[IndexEntry] = []

    def value(entry: IndexEntry) -> None:
        if values.first_time(entry.value_hash):
            report.contents += 1
            pending.append(entry)
            if len(pending) >= _BATCH:
                _check_contents(reader, pending, report)
                pending.clear()

    hashes = sorted(skeletons)
    for at in range(0, len(hashes), _FULL_BATCH):
        with store.db.read() as conn:
            rows = list(conn.execute(_SELECT_COMMITS,
                                     {"hashes": hashes[at:at + _FULL_BATCH]}))
        while rows:
            rec = record_from_row(rows.pop())
            _check_commit(rec, skeletons, report)
            for op in rec.changes().values():
                if op is not None:
                    value(op)
        if progress is not None:
            progress("commits", min(at + _FULL_BATCH, len(hashes)))
    roots = {s.root for s in skeletons.values() if s.root is not None}
    for entry in _walk_nodes(reader, roots, report, _Seen(memory_budget // 4), progress):
        value(entry)
    _check_contents(reader, pending, report)
    if worker is None:
        report.index_rows = check_change_index(
            store.db, lambda kind, where, detail: report.add(Problem(kind, where, detail)),
            progress, memory_budget // 8)
        return report
    while True:  # the worker's answer; a worker that died answers nothing
        try:
            found, report.index_rows = results.get(timeout=1)
            break
        except queue.Empty:
            if not worker.is_alive():
                found = [Problem("change-index-check-failed", "worker",
                                 f"exited with {worker.exitcode} before answering")]
                break
    worker.join()
    for p in found:
        report.add(p)
    return report


def _change_index_in_worker(url: str, cache_bytes: int, results: Any) -> None:
    """The change-index check, in a process of its own (fsck's ``parallel``)."""
    db = Database(url)
    found: list[Problem] = []
    try:
        rows = check_change_index(db, lambda k, w, d: found.append(Problem(k, w, d)),
                                  cache_bytes=cache_bytes)
    except Exception as e:  # the parent reports it as a finding, not a hang
        found.append(Problem("change-index-check-failed", "worker", f"{type(e).__name__}: {e}"))
        rows = 0
    finally:
        db.dispose()
    results.put((found, rows))


def _ref_heads(store: Store) -> dict[str, str]:
    heads: dict[str, str] = {}
    token = None
    while True:
        page = store.list_references(token, 1_000)
        heads.update((r.name, r.hash) for r in page.items)
        token = page.next_token
        if not token:
            return heads


def _walk_commits(store: Store, heads: dict[str, str], report: FsckReport,
                  progress: Progress) -> dict[str, _Skeleton]:
    """Every commit any ref reaches, through all parents, in batched reads
    of their rows without the operations."""
    found_all: dict[str, _Skeleton] = {}
    queued = set(heads.values())
    todo: list[tuple[str, str]] = [(h, f"ref {name}") for name, h in heads.items()]
    while todo:
        batch, todo = todo[:_BATCH], todo[_BATCH:]
        with store.db.read() as conn:
            rows = conn.execute(_SELECT_SKELETON, {"hashes": [h for h, _ in batch]}).all()
        found = {row.hash: record_from_row(row) for row in rows}
        for h, via in batch:
            rec = found.get(h)
            if rec is None:
                report.add(Problem("missing-commit", via, f"commit {h} is missing"))
                continue
            found_all[h] = _Skeleton(rec.parents, rec.created_us, rec.root, rec.depth)
            for p in rec.parents:
                if p not in queued:
                    queued.add(p)
                    todo.append((p, f"commit {h[:12]}"))
        if progress is not None:
            progress("walk", len(found_all))
    queued.clear()
    return found_all


def _check_commit(rec: CommitRecord, records: dict[str, _Skeleton],
                  report: FsckReport) -> None:
    where = f"commit {rec.hash[:12]}"
    if rec.hash == NO_ANCESTOR:
        return
    ops = sorted((k, e.identity if e else None) for k, e in rec.changes().items())
    digest = commit_digest(rec.parents, rec.root[0] if rec.root else None, rec.depth,
                           rec.created_us, rec.author, rec.committer, rec.message,
                           sorted(rec.properties.items()), ops)
    if digest != rec.hash:
        report.add(Problem("bad-commit-hash", where,
                                       f"its contents hash to {digest}"))
    parent = records.get(rec.parents[0]) if rec.parents else None
    if parent is None:
        return
    if parent.created_us >= rec.created_us:
        report.add(Problem("bad-time", where, "created no later than its parent"))
    if rec.depth > 0 and (rec.root != parent.root or rec.depth != parent.depth + 1):
        report.add(Problem(
            "bad-depth", where,
            f"depth {rec.depth} does not continue its parent's (depth {parent.depth}, "
            "same index root)"))


def _walk_nodes(reader: ObjectReader, roots: Iterable[StoredRef], report: FsckReport,
                seen: _Seen, progress: Progress) -> Iterator[IndexEntry]:
    """Every index node under the roots, each once (within the budget),
    level by level."""
    frontier = [(r, "index root") for r in roots]
    while frontier:
        reader.prefetch_nodes(r for r, _ in frontier[:_BATCH])
        nxt = []
        for i, (ref, where) in enumerate(frontier):
            if i and i % _BATCH == 0:
                reader.prefetch_nodes(r for r, _ in frontier[i:i + _BATCH])
            if not seen.first_time(ref[0]):
                continue
            try:
                node = reader.load_node(ref)
            except LookupError as e:
                report.add(Problem("missing-node", where, str(e)))
                continue
            except ValueError as e:  # stored bytes that no longer decode
                report.add(Problem("bad-node", where, f"{ref[0]}: {e}"))
                continue
            report.nodes += 1
            kids = [k[0] if isinstance(k, tuple) else None for k in node.kids]
            if node_identity(node.level, node.keys, node.idents, kids) != ref[0]:
                report.add(Problem("bad-node-hash", where,
                                               f"node {ref[0]} does not match its hash"))
            yield from (node.entry(i) for i in range(len(node.keys)))
            nxt += [(k, f"node {ref[0][:12]}") for k in node.kids if isinstance(k, tuple)]
        if progress is not None:
            progress("index nodes", report.nodes)
        frontier = nxt


def _check_contents(reader: ObjectReader, entries: Iterable[IndexEntry],
                    report: FsckReport) -> None:
    """Each value is in its pack, and its stored bytes hash to its address."""
    entries = sorted(entries, key=lambda e: e.loc or "")  # a pack's values together
    for i in range(0, len(entries), _BATCH):
        chunk = entries[i:i + _BATCH]
        texts = reader.stored_texts(chunk)
        for e in chunk:
            text = texts.get(e.value_hash)
            if text is None:
                report.add(Problem(
                    "missing-content", f"pack {e.loc}",
                    f"content {e.value_hash} is missing from pack {e.loc}"))
            elif hashlib.sha256(text.encode()).hexdigest() != e.value_hash:
                report.add(Problem(
                    "bad-content-hash", f"pack {e.loc}",
                    f"content {e.value_hash} does not match its hash"))
