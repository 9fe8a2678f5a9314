"""Whether history anyone retains references an object in the warehouse:
asked before the catalog signs an engine's DELETE, and a write that stores
an object (catalog.delegation, docs/security.md), so that maintenance run
on one branch deletes nothing another reference, or a commit some reference
retains, still needs — the rule gc deletes by (catalog.maintenance.gc) —
and no write puts new bytes where retained history names a file.

Whose files an object may be: the table the request names, and every
object whose claimed location holds the object (a table dropped and made
again at its old location leaves its history's files there). Which of
their versions are retained: the store's answer (store.held, as gc's mark
counts them). The files a version references are read as gc reads them,
with the same functions (catalog.maintenance.referenced): its metadata
file, statistics files, every snapshot's manifest list, every manifest and
every data and delete file a manifest lists that is not a tombstone.

**Damage** is what gc says it is: a metadata file, manifest list or
manifest a retained version references that is there but cannot be read
hides which files that table needs, so an object in that table's folders
(referenced.kept_folders, the function gc keeps them by) is neither deleted
nor written through a signature; the answer names the damaged file only to
a caller that may read the version that needs it.

Metadata files, manifest lists and manifests never change, so what each
names is kept (by entries and bytes): signing DELETEs of one table again
costs the store's look-ups, not the files' reads. A write of a new object
is answered first from the object's referenced set
(catalog.maintenance.referenced_sets): a set look-up while nothing was
committed anywhere."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from functools import lru_cache

from pyiceberg.manifest import ManifestEntryStatus, ManifestFile

from catalog.maintenance.referenced import (
    Damaged,
    Need,
    Unreadable,
    in_folders,
    kept_folders,
    manifest_files,
    manifest_list,
    norm,
    version_files,
)
from catalog.maintenance.referenced_sets import ReferencedSets
from catalog.metadata.fileio import ReaderIO
from catalog.metadata.files import MetadataFiles
from core.content import Content, IcebergTable, MaterializedView
from core.keys import ContentKey
from core.lru import LRU
from core.refs import RefSpec
from store import Store
from store.held import Held, HeldVersions
from store.locations import ancestors
from store.retention import grace_setting

_CACHE_BYTES = 64 << 20
# A path's normal form (fsspec's, some µs each), asked again for every file
# of every retained version on each check: kept, paths never change.
_norm = lru_cache(maxsize=1 << 16)(norm)
# The schemes a location in the warehouse's bucket may be written with.
_S3_SCHEMES = ("s3", "s3a", "s3n")
# Claims around one folder kept per commit token, unless there are more.
_CLAIMS_KEPT = 1000


# The objects whose claims hold a folder, and those claiming an object in it, by name.
_Claims = tuple[frozenset[str], dict[str, frozenset[str]]]


@dataclass(frozen=True, slots=True)
class _Metadata:
    """What one metadata file names: its own files (itself, statistics),
    the snapshots' manifest lists, manifests listed inline (format v1),
    and the table's places (its folders, for damage)."""

    own: frozenset[str]
    lists: tuple[str, ...]
    inline: tuple[str, ...]
    places: tuple[str, ...]


@dataclass
class Found:
    """For each object asked about: a retained version that references it,
    or, when none does, a damaged file of a retained version whose table's
    folders hold it (and that version)."""

    held: dict[str, Held] = field(default_factory=dict)
    damaged: dict[str, tuple[Damaged, Held]] = field(default_factory=dict)


def _path(uri: str) -> str:
    """``norm(uri)``, without fsspec's parse for a plain ``s3://`` URI: what
    the parse does to one is take the scheme and trailing slashes off (a
    chained URL, ``::``, and s3fs' other scheme are left to it)."""
    rest = uri[5:] if uri.startswith("s3://") else None
    if rest is None or "::" in uri or rest.startswith("s3a://"):
        return _norm(uri)
    return rest.rstrip("/")


def _size(paths: Iterable[str]) -> int:
    return sum(len(p) + 64 for p in paths) + 64


class Liveness:
    def __init__(self, store: Store, files: MetadataFiles,
                 cache_bytes: int = _CACHE_BYTES) -> None:
        self.store = store
        self.files = files
        self.io = ReaderIO(files.reader)
        self.versions = HeldVersions(store)
        self._metadata: LRU[str, _Metadata] = LRU(
            50_000, cache_bytes // 8,
            lambda m: _size([*m.own, *m.lists, *m.inline, *m.places]))
        self._lists: LRU[str, tuple[tuple[str, ManifestFile | None], ...]] = LRU(
            100_000, cache_bytes // 8, lambda ms: _size(p for p, _ in ms) * 4)
        self._manifests: LRU[str, frozenset[str]] = LRU(100_000, cache_bytes, _size)
        # Kept while nothing is committed (the store's commit token): a
        # reference's content id for a key, the claims around a folder.
        self._ids: LRU[tuple[object, RefSpec, ContentKey], str] = LRU(10_000)
        self._claims: LRU[tuple[object, str], _Claims] = LRU(
            10_000, cache_bytes // 16,
            lambda c: _size(c[0]) + sum(_size([p, *ids]) for p, ids in c[1].items()))
        self.sets = ReferencedSets(store, self.versions, self.walk, cache_bytes)

    def referencing(self, ref: RefSpec, key: ContentKey, uris: Sequence[str],
                    first: Callable[[Held], bool], new: bool = False,
                    token: object | None = None) -> Found | None:
        """What retained history says of ``uris`` (``s3://bucket/key``),
        objects in the folders of table ``key`` on ``ref`` (None: no table
        there). ``first``: the versions to name first (the caller's);
        ``new``: the objects are to be written (a set look-up answers when
        no retained version can reference them). ``token``: the store's
        commit token taken before the caller's own reads (None: taken here)."""
        if token is None:
            token = self.store.db.commit_token()
        cid = self.content_id(ref, key, token)
        if cid is None:
            return None
        owners = self.owners(cid, uris, token)
        if new and self.sets.free(owners, [_path(u) for u in uris], token):
            return Found()
        return self.holders(owners, uris, first)

    def content_id(self, ref: RefSpec, key: ContentKey, token: object | None = None,
                   ) -> str | None:
        cached = token is not None and ref.is_plain
        if cached and (found_id := self._ids.get((token, ref, key))) is not None:
            return found_id
        found = self.store.contents(ref, [key]).get(key)
        if found is None or found.id is None:
            return None
        if cached:
            self._ids.put((token, ref, key), found.id)
        return found.id

    def owners(self, content_id: str, uris: Sequence[str],
               token: object | None = None) -> set[str]:
        """The objects ``uris`` (``s3://bucket/key``) may be files of: the
        table asked about, and any object whose claimed location holds them."""
        out = {content_id}
        for u in uris:
            folder, _, name = u.rpartition("/")
            holding, inside = self._around(folder, token)
            out |= holding
            out |= inside.get(name, frozenset())
        return out

    def _around(self, folder: str, token: object | None) -> _Claims:
        """The objects whose claims hold ``folder`` (``s3://bucket/path``,
        written with any of the bucket's schemes) or are it, and those that
        claimed an object in it, by its name."""
        found = self._claims.get((token, folder)) if token is not None else None
        if found is not None:
            return found
        holding: set[str] = set()
        inside: dict[str, set[str]] = {}
        rows = 0
        rest = folder.split("://", 1)[1]
        for scheme in _S3_SCHEMES:
            variant = f"{scheme}://{rest}"
            up = set(ancestors(variant))
            for path, cid in self.store.locations.around(variant):
                rows += 1
                name = path[len(variant) + 1:]
                if path in up:
                    holding.add(cid)
                elif path.startswith(variant + "/") and "/" not in name:
                    inside.setdefault(name, set()).add(cid)
        found = (frozenset(holding), {n: frozenset(c) for n, c in inside.items()})
        if token is not None and rows <= _CLAIMS_KEPT:
            self._claims.put((token, folder), found)
        return found

    def holders(self, content_ids: Iterable[str], uris: Sequence[str],
                first: Callable[[Held], bool]) -> Found:
        """For each of ``uris`` that a version some reference retains of one
        of ``content_ids`` references, one such version (one ``first`` says
        yes to, when there is one); for each of the others that lies in the
        folders of a table a retained version of which cannot all be read,
        the damaged file and that version."""
        wanted = {_path(u): u for u in uris}
        held = [h for cid in sorted(content_ids) for h in self.versions.of(cid, grace_setting())]
        held.sort(key=lambda h: not first(h))  # stable: the store's order otherwise
        contents = self.store.reader.load_contents(h.entry for h in held)
        out: dict[str, Held] = {}
        hurt: list[tuple[Damaged, Held]] = []
        seen: set[str] = set()  # manifest lists and manifests looked through already
        for h in held:
            left = wanted.keys() - out.keys()
            if not left:
                break
            damaged: list[Damaged] = []
            for chunk in self.walk(contents[h.entry.value_hash], seen, damaged):
                for path in chunk & left:
                    out.setdefault(path, h)
            hurt += [(d, h) for d in damaged]
        found = Found({wanted[p]: h for p, h in out.items()})
        if hurt:
            claimed = self.store.locations.places(
                {n.content_id for d, _ in hurt for n in d.needs})
            for d, h in hurt:
                folders = kept_folders([d], claimed)
                for path, uri in wanted.items():
                    if path not in out and in_folders(path, folders):
                        found.damaged.setdefault(uri, (d, h))
        return found

    # -- what one version references ---------------------------------------------------------
    def walk(self, c: Content, seen: set[str], hurt: list[Damaged],
             ) -> Iterator[AbstractSet[str]]:
        """The files (normalised paths) version ``c`` references, a set at a
        time, leaving out what lists and manifests in ``seen`` hold (walked
        already; those walked now are added); what cannot be read is
        appended to ``hurt``."""
        loc = getattr(c, "metadata_location", None)
        if not loc:
            return
        yield {_norm(loc)}
        if not isinstance(c, IcebergTable | MaterializedView):
            return
        need = Need(c.id or "", loc)
        try:
            meta = self._read_metadata(loc)
        except Unreadable as u:
            hurt.append(u.damaged(need, ()))
            return
        if meta is None:
            return  # gone (fsck reports it), or not the catalog's to open
        yield meta.own
        manifests: list[tuple[str, ManifestFile | None]] = [(p, None) for p in meta.inline]
        for mlist in meta.lists:
            if mlist in seen:
                continue
            seen.add(mlist)
            yield {_norm(mlist)}
            try:
                manifests += self._read_list(mlist)
            except Unreadable as u:
                hurt.append(u.damaged(need, meta.places))
        for path, m in manifests:
            if path in seen:
                continue
            seen.add(path)
            yield {_norm(path)}
            try:
                yield self._read_manifest(path, m)
            except Unreadable as u:
                hurt.append(u.damaged(need, meta.places))

    def _read_metadata(self, loc: str) -> _Metadata | None:
        meta = self._metadata.get(loc)
        if meta is not None:
            return meta
        version = version_files(self.files, loc)
        if version is None:
            return None
        lists: list[str] = []
        inline: list[str] = []
        for _, mlist, paths in version.snapshots:
            if mlist is not None:
                lists.append(mlist)
            else:
                inline += paths
        meta = _Metadata(frozenset([_norm(loc), *(_norm(s) for s in version.statistics)]),
                         tuple(dict.fromkeys(lists)), tuple(dict.fromkeys(inline)),
                         version.places)
        self._metadata.put(loc, meta)
        return meta

    def _read_list(self, mlist: str) -> tuple[tuple[str, ManifestFile | None], ...]:
        found = self._lists.get(mlist)
        if found is None:
            listed = manifest_list(self.io, self.files, mlist)
            if listed is None:
                return ()  # gone: it names nothing that can be found
            found = tuple(listed)
            self._lists.put(mlist, found)
        return found

    def _read_manifest(self, path: str, m: ManifestFile | None) -> frozenset[str]:
        found = self._manifests.get(path)
        if found is None:
            listing = manifest_files(self.io, self.files, path, m)
            if listing is None:
                return frozenset()
            # A tombstone: the snapshot removed the file, and the snapshots that
            # still need it list it themselves (as gc and Iceberg read it).
            found = frozenset(p for status, _, p in listing
                              if status != ManifestEntryStatus.DELETED)
            self._manifests.put(path, found)
        return found
