"""Integrity check of the commit-log store (``sapwood fsck``).

Walks refs → commits → index nodes → content values, every object once, and
reports what is missing or does not match its hash. It only reads. Commits no
ref reaches (a deleted branch's) are not problems: they are counted, so that
a future ``gc`` has something to go by.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from sqlalchemy import bindparam, func, select

from core.commits import NO_ANCESTOR, IndexEntry
from store.fsck_changes import check_change_index
from store.nodes import StoredRef, node_identity
from store.objects import COMMIT_COLUMNS, CommitRecord, ObjectReader, record_from_row
from store.schema import COMMITS
from store.store import Store
from store.writes import commit_digest

_BATCH = 500
_SELECT_COMMITS = select(*COMMIT_COLUMNS).where(
    COMMITS.c.hash.in_(bindparam("hashes", expanding=True)))


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


def fsck(store: Store) -> FsckReport:
    # Its own reader: everything is read from the database (not from what this
    # process wrote), and a running server's caches are left alone.
    reader = ObjectReader(store.db)
    report = FsckReport()
    heads = _ref_heads(store)
    report.refs = len(heads)
    records = _walk_commits(store, heads, report)
    report.commits = len(records)
    with store.db.read() as conn:
        total = conn.execute(select(func.count()).select_from(COMMITS)).scalar_one()
    report.unreachable_commits = total - len(records)
    entries: dict[str, IndexEntry] = {}
    for rec in records.values():
        _check_commit(rec, records, report)
        for op in rec.changes().values():
            if op is not None:
                entries.setdefault(op.value_hash, op)
    roots = {rec.root for rec in records.values() if rec.root is not None}
    for entry in _walk_nodes(reader, roots, report):
        entries.setdefault(entry.value_hash, entry)
    _check_contents(reader, entries.values(), report)
    report.contents = len(entries)
    report.index_rows = check_change_index(
        store.db, lambda kind, where, detail: report.problems.append(Problem(kind, where, detail)))
    return report


def _ref_heads(store: Store) -> dict[str, str]:
    heads: dict[str, str] = {}
    token = None
    while True:
        page = store.list_references(token, 1_000)
        heads.update((r.name, r.hash) for r in page.items)
        token = page.next_token
        if not token:
            return heads


def _walk_commits(store: Store, heads: dict[str, str],
                  report: FsckReport) -> dict[str, CommitRecord]:
    """Every commit any ref reaches, through all parents, in batched reads."""
    records: dict[str, CommitRecord] = {}
    queued = set(heads.values())
    todo: list[tuple[str, str]] = [(h, f"ref {name}") for name, h in heads.items()]
    while todo:
        batch, todo = todo[:_BATCH], todo[_BATCH:]
        with store.db.read() as conn:
            rows = conn.execute(_SELECT_COMMITS, {"hashes": [h for h, _ in batch]}).all()
        found = {row.hash: record_from_row(row) for row in rows}
        for h, via in batch:
            rec = found.get(h)
            if rec is None:
                report.problems.append(Problem("missing-commit", via, f"commit {h} is missing"))
                continue
            records[h] = rec
            for p in rec.parents:
                if p not in queued:
                    queued.add(p)
                    todo.append((p, f"commit {h[:12]}"))
    return records


def _check_commit(rec: CommitRecord, records: dict[str, CommitRecord],
                  report: FsckReport) -> None:
    where = f"commit {rec.hash[:12]}"
    if rec.hash == NO_ANCESTOR:
        return
    ops = sorted((k, e.identity if e else None) for k, e in rec.changes().items())
    digest = commit_digest(rec.parents, rec.root[0] if rec.root else None, rec.depth,
                           rec.created_us, rec.author, rec.committer, rec.message,
                           sorted(rec.properties.items()), ops)
    if digest != rec.hash:
        report.problems.append(Problem("bad-commit-hash", where,
                                       f"its contents hash to {digest}"))
    parent = records.get(rec.parents[0]) if rec.parents else None
    if parent is None:
        return
    if parent.created_us >= rec.created_us:
        report.problems.append(Problem("bad-time", where, "created no later than its parent"))
    if rec.depth > 0 and (rec.root != parent.root or rec.depth != parent.depth + 1):
        report.problems.append(Problem(
            "bad-depth", where,
            f"depth {rec.depth} does not continue its parent's (depth {parent.depth}, "
            "same index root)"))


def _walk_nodes(reader: ObjectReader, roots: Iterable[StoredRef],
                report: FsckReport) -> Iterator[IndexEntry]:
    """Every index node under the roots, each once, level by level."""
    seen: set[str] = set()
    frontier = [(r, "index root") for r in roots]
    while frontier:
        reader.prefetch_nodes(r for r, _ in frontier)
        nxt = []
        for ref, where in frontier:
            if ref[0] in seen:
                continue
            seen.add(ref[0])
            try:
                node = reader.load_node(ref)
            except LookupError as e:
                report.problems.append(Problem("missing-node", where, str(e)))
                continue
            except ValueError as e:  # stored bytes that no longer decode
                report.problems.append(Problem("bad-node", where, f"{ref[0]}: {e}"))
                continue
            report.nodes += 1
            kids = [k[0] if isinstance(k, tuple) else None for k in node.kids]
            if node_identity(node.level, node.keys, node.idents, kids) != ref[0]:
                report.problems.append(Problem("bad-node-hash", where,
                                               f"node {ref[0]} does not match its hash"))
            yield from (node.entry(i) for i in range(len(node.keys)))
            nxt += [(k, f"node {ref[0][:12]}") for k in node.kids
                    if isinstance(k, tuple) and k[0] not in seen]
        frontier = nxt


def _check_contents(reader: ObjectReader, entries: Iterable[IndexEntry],
                    report: FsckReport) -> None:
    """Each value is in its pack, and its stored bytes hash to its address."""
    entries = list(entries)
    for i in range(0, len(entries), _BATCH):
        chunk = entries[i:i + _BATCH]
        texts = reader.stored_texts(chunk)
        for e in chunk:
            text = texts.get(e.value_hash)
            if text is None:
                report.problems.append(Problem(
                    "missing-content", f"pack {e.loc}",
                    f"content {e.value_hash} is missing from pack {e.loc}"))
            elif hashlib.sha256(text.encode()).hexdigest() != e.value_hash:
                report.problems.append(Problem(
                    "bad-content-hash", f"pack {e.loc}",
                    f"content {e.value_hash} does not match its hash"))
