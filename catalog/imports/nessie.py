"""``sapwood import --from-nessie URL``: a Nessie repository's references and
whole history, brought into this catalog.

In order, each step changing nothing until the ones before it passed:

1. **The target.** A catalog holding commits no import made is refused
   (unless ``into_nonempty``); so is a Nessie reference whose name this
   catalog has for something else (another type, or a head no import from
   Nessie made). A new catalog's empty ``main`` is Nessie's ``main``.
2. **Reading.** From each reference's head down its log (``fetch=ALL``:
   operations and parents), and from each merge's other parents, until a
   commit already read or already imported (``imported_commits``: what an
   earlier or interrupted run landed). Each entry is converted
   (catalog.imports.nessie_values) and each table and view value checked
   (catalog.imports.checks) as it is read. Any problem refuses the whole
   import, listing every one: nothing is written.
3. **Commits**, parents first, in batches of ``batch_size``, each batch one
   transaction with the Nessie → Sapwood rows (store.imports): merges stay
   merges (every parent Nessie recorded), times are Nessie's (rounded up to
   the microsecond; one at or before its first parent's moves to it plus
   1 µs, and the report lists it). A view value is analysed where it lands,
   against its first parent with the commit's other changes, as a view
   committed through the versioning API is.
4. **References**, each in one transaction: created, or moved forward from
   where an earlier import left it, through its first-parent chain, one
   reflog row per commit at that commit's time, so ``ref*T`` here gives
   Nessie's ``ref*T``; a new reference's first row is its creation at the
   repository's creation time, at the empty commit (as Nessie answers
   before a branch's first commit). A reference Nessie moved to a commit
   not after the one imported before gets one row, now (``reassigned``).

A second import reads a page of each reference's log, finds every commit
imported, and moves nothing. An import killed at any point leaves whole
batches and whole references; run again, it continues.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx

from catalog.imports.checks import FileChecks
from catalog.imports.nessie_api import NessieConfig, NessieRef, NessieSource
from catalog.imports.nessie_values import Refused, SourceCommit, micros, source_commit
from catalog.imports.report import Clamped, ImportRefused, ImportReport, Problem, RefOutcome
from catalog.kernel import Catalog
from catalog.views.analysis import analyse_version
from catalog.views.views import view_content
from core.commits import NO_ANCESTOR, Reference, RefType
from core.content import Content, IcebergView
from core.errors import ReferenceNotFoundError, SapwoodError
from core.keys import ContentKey
from core.refs import validate_ref_name
from core.sql.stored import DialectAnalysis
from store.imports import GivenCommit, HistoryImport, Move

# Problems listed in a refusal; past that, only counted.
MAX_PROBLEMS = 1000
DEFAULT_BATCH = 500
Progress = Callable[[str, int], None]


def import_from_nessie(catalog: Catalog, url: str, *, into_nonempty: bool = False,
                       batch_size: int = DEFAULT_BATCH, progress: Progress | None = None,
                       client: httpx.Client | None = None) -> ImportReport:
    """Import the repository whose v2 API is at ``url``; the report, or
    ImportRefused (with it) when nothing could be written."""
    if batch_size < 1:
        raise ValueError("batch_size must be at least 1")
    source = NessieSource(url, client)
    try:
        return _Run(catalog, source, into_nonempty, batch_size, progress).run()
    finally:
        source.close()


class _Run:
    def __init__(self, catalog: Catalog, source: NessieSource, into_nonempty: bool,
                 batch_size: int, progress: Progress | None) -> None:
        self.catalog = catalog
        self.store = catalog.store
        self.source = source
        self.into_nonempty = into_nonempty
        self.batch_size = batch_size
        self.progress = progress or (lambda _stage, _n: None)
        self.writer = HistoryImport(catalog.store)
        self.checks = FileChecks(catalog)
        self.report = ImportReport(source.base, self.store.clock())
        self.problem_count = 0

    def run(self) -> ImportReport:
        config = self.source.config()
        refs = sorted(self.source.references(), key=lambda r: (r.name != config.default_branch,
                                                               r.name))
        mapped = self.writer.mapped()
        self._target(refs, mapped)
        commits = self._read(refs, mapped, config)
        self._refuse_if_problems()
        self.report.found = len(mapped)
        here = dict(mapped)
        here[config.no_ancestor] = NO_ANCESTOR
        try:
            self._write(commits, here)
        except BaseException:
            self.writer.discard()
            raise
        self._references(refs, here, config)
        self.report.commits = self.writer.mapped()
        self.report.finished_us = self.store.clock()
        return self.report

    # -- problems ---------------------------------------------------------------------
    def _problem(self, commit: str | None, key: ContentKey | None, problem: str) -> None:
        self.problem_count += 1
        if len(self.report.problems) < MAX_PROBLEMS:
            self.report.problems.append(Problem(commit, str(key) if key else None, problem))

    def _refuse_if_problems(self) -> None:
        if self.problem_count:
            if self.problem_count > len(self.report.problems):
                self.report.problems.append(Problem(None, None, (
                    f"{self.problem_count - len(self.report.problems)} more problems "
                    "not listed")))
            raise ImportRefused(self.report)

    # -- 1. the target ----------------------------------------------------------------
    def _target(self, refs: list[NessieRef], mapped: dict[str, str]) -> None:
        foreign = self.writer.foreign_commits()
        if foreign and not self.into_nonempty:
            self._problem(None, None, (
                f"this catalog holds {foreign} commits no import made: import into a new "
                "catalog, or say --into-nonempty to add Nessie's references beside them"))
        ours = set(mapped.values())
        for r in refs:
            try:
                validate_ref_name(r.name)
            except SapwoodError as e:
                self._problem(None, None, f"Nessie's reference {r.name!r}: {e.message}")
                continue
            here = _reference(self.catalog, r.name)
            if here is None:
                continue
            if here.type.value != r.type:
                self._problem(None, None, f"reference '{r.name}' is a {here.type.lower()} "
                                          f"here and a {r.type.lower()} in Nessie")
            elif here.hash != NO_ANCESTOR and here.hash not in ours:
                self._problem(None, None, (
                    f"reference '{r.name}' exists in this catalog at {here.hash[:12]}, a "
                    "commit no import from Nessie made: rename or delete it first"))
        self._refuse_if_problems()

    # -- 2. reading -------------------------------------------------------------------
    def _read(self, refs: list[NessieRef], mapped: dict[str, str],
              config: NessieConfig) -> dict[str, SourceCommit]:
        out: dict[str, SourceCommit] = {}
        parents_of: dict[str, tuple[str, ...]] = {}
        todo = [r.hash for r in reversed(refs)]
        while todo:
            start = todo.pop()
            if start in parents_of or start in mapped or start == config.no_ancestor:
                continue
            for entry in self.source.log(start):
                h = entry["commitMeta"].get("hash")
                if not isinstance(h, str) or h in parents_of or h in mapped:
                    break
                commit = self._convert(h, entry)
                parents = tuple(entry["commitMeta"].get("parentCommitHashes")
                                or [entry.get("parentCommitHash")])
                parents_of[h] = parents
                if commit is not None:
                    out[h] = commit
                todo += [p for p in parents[1:] if isinstance(p, str)]
                self.progress("reading Nessie's history", len(parents_of))
        return out

    def _convert(self, h: str, entry: dict[str, Any]) -> SourceCommit | None:
        try:
            commit = source_commit(entry)
        except Refused as e:
            self._problem(h, None, e.message)
            return None
        for key, value in commit.changes:
            if value is None:
                continue
            wrong = self.checks.problem(key, value)
            if wrong is not None:
                self._problem(h, key, wrong)
        return commit

    # -- 3. commits -------------------------------------------------------------------
    def _write(self, commits: dict[str, SourceCommit], here: dict[str, str]) -> None:
        writer = self.writer
        for h in _parents_first(commits):
            c = commits.pop(h)
            parents = tuple(here[p] for p in c.parents)
            first = writer.commit(parents[0])
            if c.at_us <= first.created_us:
                self.report.clamped.append(Clamped(c.hash, c.time, first.created_us + 1))
            changes = self._analysed(parents[0], c)
            claims = tuple(cl for k, v in changes if v is not None
                           for cl in self.checks.claims(k, v))
            rec = writer.add(GivenCommit(c.hash, parents, c.meta, c.at_us, tuple(changes),
                                         claims))
            here[c.hash] = rec.hash
            self.report.imported += 1
            if len(writer.batch) >= self.batch_size:
                writer.flush()
            self.progress("writing commits", self.report.imported)
        writer.flush()

    def _analysed(self, parent: str, c: SourceCommit) -> list[tuple[ContentKey, Content | None]]:
        """The commit's changes, each view analysed against the parent with
        the commit's other changes (what it reads, as a versioning-API view
        commit is analysed)."""
        if not any(isinstance(v, IcebergView) for _, v in c.changes):
            return c.changes
        if parent in self.writer.records:  # the analysis reads it from the store
            self.writer.flush()
        out: list[tuple[ContentKey, Content | None]] = []
        for key, value in c.changes:
            if isinstance(value, IcebergView):
                meta = self.catalog.files.view(value.metadata_location)[0]
                overlay = {k: v for k, v in c.changes if k != key}
                try:
                    found = analyse_version(self.catalog, f"@{parent}", meta, overlay=overlay)
                except SapwoodError as e:  # left unanalysed, saying why
                    found = ([DialectAnalysis(dialect="", status="unanalysed",
                                              reasons=[f"not analysed on import: {e.message}"])],
                             {})
                value = view_content(meta, value.metadata_location, value.id, found)
            out.append((key, value))
        return out

    # -- 4. references ----------------------------------------------------------------
    def _references(self, refs: list[NessieRef], here: dict[str, str],
                    config: NessieConfig) -> None:
        created_us = micros(config.created) if config.created else None
        names = {r.name for r in refs}
        for i, r in enumerate(refs):
            self.report.references.append(self._reference(r, here[r.hash], created_us))
            self.progress("moving references", i + 1)
        ours = set(here.values()) - {NO_ANCESTOR}
        token = None
        while True:
            page = self.store.list_references(token)
            self.report.gone_from_source += [ref.name for ref in page.items
                                             if ref.name not in names and ref.hash in ours]
            token = page.next_token
            if not token:
                break

    def _reference(self, r: NessieRef, target: str, created_us: int | None) -> RefOutcome:
        ref_type = RefType(r.type)
        here = _reference(self.catalog, r.name)
        depth = self.store.changes.ancestry([target])[target].depth
        if here is not None and here.hash == target:
            return RefOutcome(r.name, r.type, r.hash, target, depth, "unchanged")
        now = self.store.clock()
        chain = self._chain(target, here.hash if here is not None else NO_ANCESTOR)
        first_at = min(x for x in (created_us, chain[0][1] if chain else None, now)
                       if x is not None)
        if here is None:
            moves = [Move(None, NO_ANCESTOR, first_at, "create"), *_moves(NO_ANCESTOR, chain)]
            action = "created"
        elif chain is not None:
            if here.hash == NO_ANCESTOR:  # a new catalog's main: Nessie's, from its start
                self.writer.backdate_creation(r.name, first_at)
            moves, action = _moves(here.hash, chain), "moved"
        else:
            moves, action = [Move(here.hash, target, now, "assign")], "reassigned"
        self.writer.move(r.name, ref_type, here.hash if here is not None else None, moves, now)
        return RefOutcome(r.name, r.type, r.hash, target, depth, action)

    def _chain(self, target: str, stop: str) -> list[tuple[str, int, str]] | None:
        """(hash, time, reason) of the commits on ``target``'s first-parent
        chain after ``stop``, oldest first; None when ``stop`` is not on it."""
        changes = self.store.changes
        anc = changes.ancestry([target, stop])
        if not changes.on_chain(anc[stop], anc[target]):
            return None
        return [(h, at_us, "merge" if merge else "commit") for h, at_us, merge
                in self.writer.chain(target, anc[target].depth - anc[stop].depth)]


def _moves(start: str, chain: list[tuple[str, int, str]] | None) -> list[Move]:
    out = []
    prev = start
    for h, at_us, reason in chain or []:
        out.append(Move(prev, h, at_us, reason))
        prev = h
    return out


def _reference(catalog: Catalog, name: str) -> Reference | None:
    try:
        return catalog.store.get_reference(name)
    except ReferenceNotFoundError:
        return None


def _parents_first(commits: dict[str, SourceCommit]) -> list[str]:
    """The commits, each after its parents among them (older first where free)."""
    out: list[str] = []
    done: set[str] = set()
    for start in sorted(commits, key=lambda h: commits[h].at_us):
        if start in done:
            continue
        stack: list[tuple[str, int]] = [(start, 0)]
        while stack:
            h, i = stack.pop()
            if h in done:
                continue
            parents = [p for p in commits[h].parents if p in commits]
            if i < len(parents):
                stack.append((h, i + 1))
                if parents[i] not in done:
                    stack.append((parents[i], 0))
                continue
            done.add(h)
            out.append(h)
    return out
