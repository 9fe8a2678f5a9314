"""The versioning API's door to the store: references and their moves, the
log, entries, contents, diffs, plain commits and the views that read a
key, each typed in and out (core values: ``Reference``, ``ResolvedRef``,
``Page`` of ``Commit``, ``Entry`` or ``DiffEntry``, ``CommitResult``).

What the routes of ``/api/v2`` and the guard (which references hold a
commit) need of the store, and nothing more: the API holds no store. Built
over a ``Catalog`` (catalog.kernel); over one bound to a caller
(``Catalog.seeing``), a hash prefix names only the commits that caller may
see, as everything else built over it does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from catalog.kernel import Catalog, Once
from core.commits import (
    DEFAULT_BRANCH,
    Commit,
    CommitMeta,
    CommitResult,
    DiffEntry,
    Entry,
    Operation,
    Page,
    Reference,
    RefType,
    ResolvedRef,
)
from core.content import Content, ContentType
from core.keys import ContentKey
from core.refs import RefSpec

# What a listing's ``visible`` tells: whether the caller may see a key (by
# its elements) or a reference (by its name).
KeyFilter = Callable[[tuple[str, ...]], bool]
RefFilter = Callable[[str], bool]


class Versioning:
    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.store = catalog.store

    # -- references --------------------------------------------------------------------
    def references(self, page_token: str | None, page_size: int | None,
                   prefix: str | None = None, visible: RefFilter | None = None,
                   ) -> Page[Reference]:
        """References in name order; ``visible`` skips those the caller may
        not read before paging (the token names a visible one)."""
        return self.store.list_references(page_token, page_size, prefix, visible)

    def all_references(self) -> list[Reference]:
        """Every reference, however many (the guard weighs them all)."""
        out: list[Reference] = []
        token: str | None = None
        while True:
            page = self.store.list_references(token, 1000)
            out.extend(page.items)
            token = page.next_token
            if not token:
                return out

    def reference(self, name: str) -> Reference:
        return self.store.get_reference(name)

    def resolve(self, spec: RefSpec | str) -> ResolvedRef:
        return self.store.resolve(spec)

    def head_commits(self, hashes: Iterable[str]) -> dict[str, Commit]:
        """Those commits, without their operations (a missing one left out)."""
        return {h: r.to_commit_light() for h, r in self.store.reader.commits_light(hashes).items()}

    def hashes_with_prefix(self, prefix: str) -> list[str]:
        """The commits whose hash starts with ``prefix``, whoever may see them."""
        return self.store.hashes_with_prefix(prefix)

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        return self.store.history.is_ancestor(ancestor, descendant)

    def create_reference(self, name: str, kind: RefType = RefType.BRANCH,
                         source: str = DEFAULT_BRANCH, principal: str | None = None,
                         once: Once | None = None) -> Reference:
        return self.store.create_reference(name, kind, source, principal, once)

    def assign_reference(self, name: str, expected_hash: str, target: str,
                         principal: str | None = None, kind: RefType | None = None,
                         once: Once | None = None) -> Reference:
        return self.store.assign_reference(name, expected_hash, target, principal, kind, once)

    def delete_reference(self, name: str, expected_hash: str, principal: str | None = None,
                         kind: RefType | None = None, once: Once | None = None) -> Reference:
        return self.store.delete_reference(name, expected_hash, principal, kind, once)

    # -- history -----------------------------------------------------------------------
    def log(self, spec: RefSpec | str, page_token: str | None = None,
            page_size: int | None = None, key: ContentKey | None = None,
            author: str | None = None, since_us: int | None = None,
            until_us: int | None = None, operations: bool = True) -> Page[Commit]:
        """First-parent history, newest first (store.reads.log)."""
        return self.store.log(spec, page_token, page_size, key, author, since_us, until_us,
                              operations)

    def cutoff_of(self, name: str) -> int | None:
        """When branch ``name``'s retained history begins, in microseconds
        (None: it retains all of it, or it is no branch)."""
        return self.store.retention.cutoff_of(name)

    def commit(self, branch: str, operations: Sequence[Operation], meta: CommitMeta,
               expected_hash: str, principal: str | None = None,
               once: Once | None = None) -> CommitResult:
        """One commit of the operations a client sent, as it sent them."""
        return self.store.commit(branch, operations, meta, expected_hash=expected_hash,
                                 principal=principal, once=once)

    # -- contents ----------------------------------------------------------------------
    def entries(self, spec: RefSpec | str, namespace: ContentKey | None = None,
                depth: int | None = None, types: Iterable[ContentType] | None = None,
                page_token: str | None = None, page_size: int | None = None,
                with_content: bool = False, visible: KeyFilter | None = None,
                ) -> Page[Entry]:
        """Keys below ``namespace`` in key order (store.reads.entries)."""
        return self.store.entries(spec, namespace, depth, types, page_token, page_size,
                                  with_content, visible)

    def contents(self, spec: RefSpec | str, keys: Iterable[ContentKey],
                 ) -> dict[ContentKey, Content]:
        return self.store.contents(spec, keys)

    def diff(self, from_spec: RefSpec | str, to_spec: RefSpec | str,
             page_token: str | None = None, page_size: int | None = None,
             ) -> Page[DiffEntry]:
        return self.store.diff(from_spec, to_spec, page_token, page_size)

    def dependents(self, spec: RefSpec | str, key: ContentKey,
                   ) -> tuple[ResolvedRef, dict[ContentKey, Content]]:
        """The views that read ``key`` at the commit ``spec`` names."""
        return self.store.dependents(spec, key)
