"""Whether history anyone retains references an object in the warehouse:
asked before the catalog signs an engine's DELETE (catalog.delegation,
docs/security.md), so that maintenance run on one branch deletes nothing
another reference, or a commit some reference retains, still needs — the
rule gc deletes by (catalog.maintenance.gc).

Whose files an object may be: the table the request names, and every
object whose claimed location holds the object (a table dropped and made
again at its old location leaves its history's files there). Which of
their versions are retained: the store's answer (store.held, as gc's mark
counts them). The files a version references are read as gc reads them
(catalog.maintenance.referenced): its metadata file, statistics files,
every snapshot's manifest list, every manifest and every data and delete
file a manifest lists that is not a tombstone. Metadata files, manifest
lists and manifests never change, so what each names is kept (by entries
and bytes): signing DELETEs of one table again costs the store's look-ups,
not the files' reads."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from pyiceberg.io import FileIO
from pyiceberg.manifest import ManifestEntryStatus, ManifestFile, read_manifest_list

from catalog.fileio import file_io
from catalog.files import MetadataFiles
from catalog.maintenance.referenced import norm, read_manifest_entries, storage_fields
from core.content import Content, IcebergTable, MaterializedView
from core.errors import SapwoodError
from core.keys import ContentKey
from core.lru import LRU
from core.refs import RefSpec
from store import Store
from store.held import Held, HeldVersions
from store.retention import grace_setting

_CACHE_BYTES = 64 << 20
# A path's normal form (fsspec's, some µs each), asked again for every file
# of every retained version on each check: kept, paths never change.
_norm = lru_cache(maxsize=1 << 16)(norm)
# The schemes a location in the warehouse's bucket may be written with.
_S3_SCHEMES = ("s3", "s3a", "s3n")


@dataclass(frozen=True, slots=True)
class _Metadata:
    """What one metadata file names: its own files (itself, statistics),
    the snapshots' manifest lists, and manifests listed inline (format v1)."""

    own: frozenset[str]
    lists: tuple[str, ...]
    inline: tuple[str, ...]
    location: str  # the table's, for its FileIO


class _Lazy:
    """A table's FileIO, made only when a file has to be read."""

    def __init__(self, location: str) -> None:
        self.location = location
        self._io: FileIO | None = None

    def get(self) -> FileIO:
        if self._io is None:
            self._io = file_io(self.location)
        return self._io


def _size(paths: Iterable[str]) -> int:
    return sum(len(p) + 64 for p in paths) + 64


class Liveness:
    def __init__(self, store: Store, files: MetadataFiles,
                 cache_bytes: int = _CACHE_BYTES) -> None:
        self.store = store
        self.files = files
        self.versions = HeldVersions(store)
        self._metadata: LRU[str, _Metadata] = LRU(
            50_000, cache_bytes // 8, lambda m: _size([*m.own, *m.lists, *m.inline]))
        self._lists: LRU[str, tuple[tuple[str, ManifestFile | None], ...]] = LRU(
            100_000, cache_bytes // 8, lambda ms: _size(p for p, _ in ms) * 4)
        self._manifests: LRU[str, frozenset[str]] = LRU(100_000, cache_bytes, _size)

    def content_id(self, ref: RefSpec, key: ContentKey) -> str | None:
        found = self.store.contents(ref, [key]).get(key)
        return found.id if found is not None else None

    def owners(self, content_id: str, uris: Sequence[str]) -> set[str]:
        """The objects ``uris`` (``s3://bucket/key``) may be files of: the
        table asked about, and any object whose claimed location holds them."""
        variants = [f"{scheme}://{u.split('://', 1)[1]}" for u in uris for scheme in _S3_SCHEMES]
        return {content_id, *self.store.locations.holding(variants)}

    def holders(self, content_ids: Iterable[str], uris: Sequence[str],
                first: Callable[[Held], bool]) -> dict[str, Held]:
        """For each of ``uris`` that a version some reference retains of one
        of ``content_ids`` references, one such version (one ``first`` says
        yes to, when there is one)."""
        wanted = {norm(u): u for u in uris}
        held = [h for cid in sorted(content_ids) for h in self.versions.of(cid, grace_setting())]
        held.sort(key=lambda h: not first(h))  # stable: the store's order otherwise
        contents = self.store.reader.load_contents(h.entry for h in held)
        out: dict[str, Held] = {}
        seen: set[str] = set()  # manifest lists and manifests looked through already
        for h in held:
            found = self._references(contents[h.entry.value_hash], wanted.keys() - out.keys(),
                                     seen)
            for path in found:
                out.setdefault(path, h)
            if len(out) == len(wanted):
                break
        return {wanted[p]: h for p, h in out.items()}

    # -- what one version references ---------------------------------------------------------
    def _references(self, c: Content, wanted: set[str], seen: set[str]) -> set[str]:
        """Which of ``wanted`` (normalised paths) version ``c`` references,
        leaving out what lists and manifests in ``seen`` hold (found already)."""
        loc = getattr(c, "metadata_location", None)
        if not loc or not wanted:
            return set()
        found = {_norm(loc)} & wanted
        if not isinstance(c, IcebergTable | MaterializedView):
            return found
        meta = self._read_metadata(loc)
        if meta is None:
            return found
        found |= meta.own & wanted
        io = _Lazy(meta.location)
        manifests: list[tuple[str, ManifestFile | None]] = [(p, None) for p in meta.inline]
        for mlist in meta.lists:
            if mlist in seen:
                continue
            seen.add(mlist)
            if _norm(mlist) in wanted:
                found.add(_norm(mlist))
            manifests += self._read_list(io, mlist)
        for path, m in manifests:
            if path in seen:
                continue
            seen.add(path)
            if _norm(path) in wanted:
                found.add(_norm(path))
            found |= self._read_manifest(io, path, m) & wanted
        return found

    def _read_metadata(self, loc: str) -> _Metadata | None:
        meta = self._metadata.get(loc)
        if meta is not None:
            return meta
        try:
            doc = storage_fields(self.files.reader.read(loc))
        except (SapwoodError, ValueError, FileNotFoundError):
            return None  # gone or unreadable: it references nothing that can be found
        stats = [s["statistics-path"] for s in
                 [*doc.get("statistics", []), *doc.get("partition-statistics", [])]]
        lists: list[str] = []
        inline: list[str] = []
        for snap in doc.get("snapshots", []):
            if snap.get("manifest-list"):
                lists.append(snap["manifest-list"])
            else:  # format v1 may list manifests in the snapshot itself
                inline += snap.get("manifests") or []
        meta = _Metadata(frozenset([norm(loc), *(norm(s) for s in stats)]),
                         tuple(dict.fromkeys(lists)), tuple(dict.fromkeys(inline)),
                         str(doc.get("location") or loc))
        self._metadata.put(loc, meta)
        return meta

    def _read_list(self, io: _Lazy, mlist: str) -> tuple[tuple[str, ManifestFile | None], ...]:
        found = self._lists.get(mlist)
        if found is None:
            try:
                listed = read_manifest_list(io.get().new_input(mlist))
                found = tuple((m.manifest_path, m) for m in listed)
            except FileNotFoundError:
                return ()
            self._lists.put(mlist, found)
        return found

    def _read_manifest(self, io: _Lazy, path: str, m: ManifestFile | None) -> frozenset[str]:
        found = self._manifests.get(path)
        if found is None:
            try:
                entries = (m.fetch_manifest_entry(io.get(), discard_deleted=False)
                           if m is not None else read_manifest_entries(io.get(), path))
            except FileNotFoundError:
                return frozenset()
            # A tombstone: the snapshot removed the file, and the snapshots that
            # still need it list it themselves (as gc and Iceberg read it).
            found = frozenset(norm(e.data_file.file_path) for e in entries
                              if e.status != ManifestEntryStatus.DELETED)
            self._manifests.put(path, found)
        return found
