"""What every catalog operation shares: reading at a ref, checking the
namespace, and landing one commit with a retry when the branch moved.

A write reads the branch head, plans against it and commits with that head
as the expected hash. If another writer changed one of the same keys in
between, the store refuses with VALUE_DIFFERS; the operation is then planned
again from the new head (re-checking its requirements), so concurrent
writers on different keys never fail and writers on the same key fail only
when their requirements no longer hold.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Generic, Protocol, TypeVar

from catalog.commands import Registration
from catalog.metadata.claims import claims
from catalog.metadata.files import Locations, MetadataFiles, next_metadata_location
from catalog.metadata.locations import spelled
from catalog.targets import Target, dotted, target
from core.commits import CommitMeta, Operation, RefType, ResolvedRef
from core.conflicts import CommitConflictError, ConflictType
from core.content import Content, ContentType
from core.errors import (
    AlreadyExistsError,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
    RequirementFailedError,
    SapwoodError,
    already_exists,
    bad_request,
    commit_failed,
    no_such_namespace,
)
from core.keys import ContentKey
from core.refs import RefSpec, branch_to_write
from store import Store
from store.idempotency import Answer as Answer
from store.idempotency import KeyTakenError as KeyTakenError
from store.idempotency import Once as Once
from store.idempotency import Recorded as Recorded
from store.locations import Claim

T = TypeVar("T")
# Writers racing on one key each re-plan after losing; a jittered, growing
# pause keeps them from colliding again in lockstep.
ATTEMPTS = 12
BACKOFF_S = 0.002
_RETRYABLE = {ConflictType.VALUE_DIFFERS, ConflictType.UNEXPECTED_HASH}


@dataclass(frozen=True, slots=True)
class Who:
    """The caller, and what the commit should say (headers may override both)."""

    principal: str = "anonymous"
    message: str | None = None
    author: str | None = None
    # The request's Idempotency-Key, its answer made from what the write
    # returns: recorded in the commit's transaction (store.idempotency).
    once: Once | None = None
    # Whether the caller may read a key on a ref, by its grants (None:
    # authentication is off). A definer view records its writer as definer
    # only with it (catalog.views.definers).
    reads: Callable[[RefSpec, tuple[str, ...]], bool] | None = None

    def through(self, pick: Callable[[Any], Any]) -> Who:
        """For a write whose value the caller turns into its own with
        ``pick``: the recorded answer is made of what the caller returns."""
        once = self.once
        if once is None or once.answer is None:
            return self
        answer = once.answer
        return replace(self, once=once.bind(lambda value: answer(pick(value))))

    def landing(self, value: object) -> Once | None:
        """The key for a commit whose write returns ``value`` (whatever the
        store returns for it)."""
        once = self.through(lambda _result: value).once
        return once if once is not None and once.answer is not None else None

    def landing_with(self, finish: Callable[[Any], Any]) -> Once | None:
        """The key for a commit whose answer is made of the store's result."""
        once = self.through(finish).once
        return once if once is not None and once.answer is not None else None

    def meta(self, default_message: str) -> CommitMeta:
        return CommitMeta(message=self.message or default_message,
                          author=self.author or self.principal)


@dataclass(slots=True)
class Change(Generic[T]):
    """One planned commit: its operations, the metadata files written for it
    (removed again if it does not land) and what the caller gets back."""

    operations: Sequence[Operation]
    message: str
    result: T
    files: list[str] = field(default_factory=list)
    # Locations the change gives its objects (catalog.metadata.claims).
    claims: list[Claim] = field(default_factory=list)
    # The commit's properties (where a restore came from ...).
    properties: dict[str, str] = field(default_factory=dict)
    # For a result that names the commit: made from the store's CommitResult
    # (in the commit's transaction too, for an Idempotency-Key's answer).
    finish: Callable[[Any], T] | None = None


class Catalog:
    def __init__(self, store: Store, files: MetadataFiles, locations: Locations) -> None:
        self.store = store
        self.files = files
        self.locations = locations

    def metadata_file(self, location: str, properties: dict[str, str],
                      previous: str | None) -> str:
        """Where the next metadata file goes; under the warehouse unless the
        server allows otherwise (``write.metadata.path`` included)."""
        wanted = next_metadata_location(location, properties, previous)
        return spelled(self.locations.check(wanted), wanted)  # as the caller spells it

    def _landed(self, ref: RefSpec, keys: Sequence[ContentKey], files: list[str]) -> bool:
        _, now = self.store.lookup(ref, keys)
        return any(getattr(c, "metadata_location", None) in files for c in now.values())

    def seeing(self, sees: Callable[[str], bool]) -> Catalog:
        """The catalog as one caller reaches it: a hash prefix anything of it
        resolves names only the commits ``sees`` accepts (store.reads);
        files, caches and connections are shared."""
        return Catalog(self.store.seeing(sees), self.files, self.locations)

    @property
    def local_reads(self) -> bool:
        """Whether a read at a head is local file access (SQLite), not a
        round trip to a database server: a caller may run it inline."""
        return self.store.db.dialect == "sqlite"

    # -- reads -------------------------------------------------------------------
    def resolve(self, ref: RefSpec | str) -> ResolvedRef:
        """The commit ``ref`` names (and whether a write may go there)."""
        return self.store.resolve(ref)

    def read(self, ref: RefSpec | str, keys: Sequence[ContentKey],
             ) -> tuple[ResolvedRef, dict[ContentKey, Content]]:
        return self.store.lookup(ref, keys)

    def get(self, ref: RefSpec | str, key: ContentKey) -> Content | None:
        return self.store.lookup(ref, [key])[1].get(key)

    # -- requests that take effect once (store.idempotency) ----------------------
    def kept(self, principal: str, key: str, now_us: int) -> Recorded | None:
        """The answer kept for a principal's Idempotency-Key (None: none, or
        it expired)."""
        return self.store.keys.find(principal, key, now_us)

    def keep(self, once: Once, answer: Answer, now_us: int) -> Recorded | None:
        """Keep the answer of a request that made no commit; what is kept
        instead when another request with the key got there first."""
        return self.store.keys.record(once, answer, now_us)

    # -- writes ------------------------------------------------------------------
    def write(self, ref: RefSpec, keys: Sequence[ContentKey], who: Who,
              plan: Callable[[dict[ContentKey, Content]], Change[T]]) -> T:
        """Read ``keys`` at the head of branch ``ref``, plan, commit; plan again
        if the keys moved meanwhile. A plan without operations writes nothing."""
        return self.write_at(ref, keys, who, lambda _head, found: plan(found))

    def write_at(self, ref: RefSpec, keys: Sequence[ContentKey], who: Who,
                 plan: Callable[[ResolvedRef, dict[ContentKey, Content]], Change[T]],
                 ) -> T:
        """``write`` for a plan that also reads beyond ``keys``: it is given
        the head it plans against, so all it reads is one snapshot."""
        last: CommitConflictError | None = None
        for attempt in range(ATTEMPTS):
            if attempt:
                time.sleep(random.uniform(0, BACKOFF_S * 2 ** min(attempt, 6)))
            resolved, found = self.store.lookup(ref, keys)
            writable(ref, resolved)
            change = plan(resolved, found)
            if not change.operations:
                return change.result  # nothing to change: no empty commit
            meta = who.meta(change.message)
            if change.properties:
                meta = replace(meta, properties={**meta.properties, **change.properties})
            finish = change.finish
            try:
                committed = self.store.commit(
                    ref, change.operations, meta, expected_hash=resolved.hash,
                    principal=who.principal, claims=change.claims,
                    once=who.landing(change.result) if finish is None
                    else who.landing_with(finish))
                return change.result if finish is None else finish(committed)
            except CommitConflictError as e:
                # The store re-plans a write whose connection was lost; if that
                # first try did land, the re-plan is refused as a conflict. The
                # files are uniquely named, so finding one of them at the head
                # means this change is in: answer as such, and keep the files.
                if change.files and self._landed(ref, keys, change.files):
                    return change.result
                for f in change.files:
                    self.files.discard(f)
                if not {c.type for c in e.conflicts} <= _RETRYABLE:
                    raise _refused(e) from None
                last = e
            except SapwoodError:  # KeyTakenError too
                for f in change.files:  # refused before anything was written
                    self.files.discard(f)
                raise
            # Anything else (the database failed): the commit may or may not
            # have landed, so its files stay; unreferenced ones are garbage.
        raise commit_failed(f"Commit failed after {ATTEMPTS} attempts, the branch kept "
                            f"changing: {last.message if last else ''}")


def writable(ref: RefSpec, resolved: ResolvedRef) -> None:
    """Checked before planning, so nothing is written for a refused write."""
    if not resolved.writable:
        branch_to_write(ref, resolved.type is RefType.TAG)


def require_namespace(found: dict[ContentKey, Content], ns: ContentKey) -> None:
    c = found.get(ns)
    if c is None or c.type != ContentType.NAMESPACE:
        raise no_such_namespace(dotted(ns))


def refuse_clash(found: dict[ContentKey, Content], key: ContentKey,
                 creating: ContentType) -> None:
    """409 when the name is taken, in the spec's words for what holds it."""
    c = found.get(key)
    if c is None:
        return
    name = dotted(key)
    kind = KIND[c.type]
    if kind == KIND[creating]:
        raise already_exists(f"{kind} already exists: {name}")
    raise already_exists(f"{kind} with same name already exists: {name}")


class Placed(Protocol):
    """Table or view metadata: where the object lives, and its properties."""

    @property
    def location(self) -> str: ...

    @property
    def properties(self) -> dict[str, str]: ...


M = TypeVar("M", bound=Placed)


def adopted(catalog: Catalog, ref: RefSpec, ns: ContentKey, req: Registration, kind: str,
            read: Callable[[str], tuple[M, bytes]],
            ) -> tuple[Target, str, tuple[M, bytes], list[Claim]]:
    """What registering a table or view starts with: its name (which may
    carry its own branch, as for reads), the metadata file checked and read
    (a missing or unreadable one is the request's fault), and the locations
    it takes. Register adopts only objects from outside this catalog: a
    location that overlaps any object's (the one overwritten too, on any
    reference) is refused, so no one reads another branch's metadata
    through it."""
    t = target(ref, ns, req.name)
    try:
        # Checked before anything is opened (the reader checks it again).
        location = catalog.locations.check(req.metadata_location)
        found = read(location)
        # Where the object lives, as its own file says: the next commit writes there.
        catalog.locations.check_placed(found[0].location, found[0].properties)
    except SapwoodError as e:
        raise bad_request(f"Cannot register {kind} {t.name}: {e.message}") from None
    taken = claims(t.key, found[0].location, found[0].properties, exclusive=True)
    return t, location, found, taken


KIND: dict[str, str] = {ContentType.ICEBERG_TABLE: "Table", ContentType.ICEBERG_VIEW: "View",
         ContentType.MATERIALIZED_VIEW: "View", ContentType.NAMESPACE: "Namespace"}
_BY_CONFLICT: dict[ConflictType, type[SapwoodError]] = {
    ConflictType.KEY_EXISTS: AlreadyExistsError,
    ConflictType.NAMESPACE_ABSENT: NoSuchNamespaceError,
    ConflictType.NAMESPACE_NOT_EMPTY: NamespaceNotEmptyError,
}


def _refused(e: CommitConflictError) -> SapwoodError:
    """A commit the store refused for a reason the plan did not foresee (a
    race): the error its first conflict's kind says, else a failed commit."""
    kind = _BY_CONFLICT.get(e.conflicts[0].type) if e.conflicts else None
    return (kind or RequirementFailedError)(e.message)
