"""The files a table's new snapshots name, checked before the commit lands.

A snapshot names its manifest list, and the list names manifests: readers,
gc and fsck read them all later, for every reference, so one file that is
not what the commit says it is would break them for everyone. A snapshot a
commit adds (``add-snapshot``, also when it creates the table) or a
registered metadata file brings is refused with a 400 naming the file and
what is wrong with it, and nothing is stored, unless:

* its manifest list lies under the table's location, or under its
  ``write.metadata.path`` when that is inside the table's location or the
  warehouse (Iceberg writes it there);
* the list is there and reads as an Iceberg manifest list: an Avro file
  whose records are ``manifest_file``, written for this snapshot (its
  ``snapshot-id`` metadata, which Iceberg's and PyIceberg's writers set),
  whose entries decode;
* every manifest it names that the snapshot's parent did not name is there
  and its Avro header says it is a manifest: records ``manifest_entry``,
  and its ``content`` (data or deletes) the one the list gives it. Only the
  header is read (64 KiB first): a manifest the parent named was checked
  when the parent was.

Every file is read through the catalog's reader (catalog.metadata.reading): inside
the warehouse (real paths), regular files only, within the size limit and
the timeout. Cost per commit: one read of the manifest list, a read of the
parent's list unless this process checked it (kept by path: files never
change), and one header read per new manifest. Those reads overlap: the
parent's list and the header of the manifest the list most likely names
(see ``_guess``) are read alongside the list, and further new manifests'
headers a few at a time.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence

from pyiceberg.manifest import ManifestContent
from pyiceberg.table.metadata import TableMetadata
from pyiceberg.table.snapshots import Snapshot
from pyiceberg.table.update import AddSnapshotUpdate, TableUpdate

from catalog.metadata.fileio import BytesInput, ReaderIO
from catalog.metadata.locations import METADATA_PATH, Where, split, under
from catalog.metadata.manifest_lists import read_list
from catalog.metadata.reading import MetadataReader
from core.errors import (
    FileNotFoundInWarehouseError,
    SapwoodError,
    UnavailableError,
    bad_request,
)
from core.lru import LRU

MAGIC = b"Obj\x01"
_SYNC = 16
_HEAD = 64 * 1024
_MAX_KEYS = 10_000
_LISTS_BYTES = 16 << 20
# Manifests whose headers are read ahead of the one being checked.
_AHEAD = 4
# The names Iceberg Java's SnapshotProducer and PyIceberg
# (table/update/snapshot.py) give a commit's files, in one folder: its
# manifest list snap-<snapshot id>-<attempt>-<commit uuid>.avro and its
# manifests <commit uuid>-m<N>.avro, N from 0.
_LIST_NAME = re.compile(
    r"snap--?[0-9]+-[0-9]+-([0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12})\.avro")
_CONTENT = {"data": ManifestContent.DATA, "deletes": ManifestContent.DELETES}
# Makes the 400 for one file from what is wrong with it.
_Refuse = Callable[[str], SapwoodError]


class _Short(Exception):
    """The bytes end inside the Avro header: read more of the file."""


class NotIceberg(ValueError):
    """What is wrong with a file, said without quoting it."""


def avro_header(data: bytes) -> dict[str, bytes]:
    """The metadata of an Avro object container file's header (magic, a
    map of bytes, the sync marker). _Short when ``data`` ends inside it."""
    if data[:4] != MAGIC:
        if len(data) < 4 and MAGIC.startswith(data) and data:
            raise _Short
        raise NotIceberg("it is not an Avro file")
    pos = 4
    meta: dict[str, bytes] = {}
    while True:
        count, pos = _long(data, pos)
        if count == 0:
            break
        if count < 0:  # a block with its size in bytes after the count
            count = -count
            _, pos = _long(data, pos)
        if len(meta) + count > _MAX_KEYS:
            raise NotIceberg("its Avro header holds too many keys")
        for _ in range(count):
            key, pos = _bytes(data, pos)
            value, pos = _bytes(data, pos)
            try:
                meta[key.decode("utf-8")] = value
            except UnicodeDecodeError:
                raise NotIceberg("its Avro header has a key that is not UTF-8") from None
    if len(data) < pos + _SYNC:
        raise _Short
    return meta


def _long(data: bytes, pos: int) -> tuple[int, int]:
    """Avro's zig-zag variable-length long."""
    n = shift = 0
    for _ in range(10):
        if pos >= len(data):
            raise _Short
        b = data[pos]
        pos += 1
        n |= (b & 0x7F) << shift
        if not b & 0x80:
            return (n >> 1) ^ -(n & 1), pos
        shift += 7
    raise NotIceberg("its Avro header holds a number longer than 64 bits")


def _bytes(data: bytes, pos: int) -> tuple[bytes, int]:
    size, pos = _long(data, pos)
    if size < 0:
        raise NotIceberg("its Avro header holds a negative length")
    if pos + size > len(data):
        raise _Short
    return data[pos:pos + size], pos + size


def records(meta: dict[str, bytes]) -> str:
    """The name of the records an Avro file holds (its schema's record name,
    without a namespace)."""
    try:
        schema = json.loads(meta["avro.schema"])
    except KeyError:
        raise NotIceberg("its Avro header has no schema") from None
    except (ValueError, RecursionError):
        raise NotIceberg("its Avro schema is not JSON") from None
    if not isinstance(schema, dict) or schema.get("type") != "record" or \
            not isinstance(schema.get("name"), str):
        raise NotIceberg("its Avro schema is not a record")
    return str(schema["name"]).rsplit(".", 1)[-1]


def diagnose(reader: MetadataReader, location: str, expected: str) -> str | None:
    """What is wrong with an Avro file that should hold ``expected`` records
    (``manifest_file``: a manifest list; ``manifest_entry``: a manifest),
    read from its header; None when the header looks right (or the file
    cannot be read: the caller says why)."""
    try:
        data = reader.head(location, _HEAD)
        try:
            meta = avro_header(data)
        except _Short:
            if len(data) < _HEAD:
                return "it ends inside its Avro header"
            meta = avro_header(reader.read(location))
        kind = records(meta)
    except _Short:
        return "it ends inside its Avro header"
    except NotIceberg as e:
        return str(e)
    except SapwoodError:
        return None
    return None if kind == expected else f"its records are '{kind[:100]}', not '{expected}'"


class SnapshotFiles:
    def __init__(self, reader: MetadataReader, cache_size: int = 2_000) -> None:
        self.reader = reader
        self.io = ReaderIO(reader)
        # Manifest list -> the manifests it names, for lists checked (or
        # read as a parent's) here: the next commit of a table needs its
        # head's, so a small budget does.
        self.lists: LRU[str, dict[str, ManifestContent]] = LRU(
            cache_size, _LISTS_BYTES, lambda found: 200 + sum(100 + len(p) for p in found))

    # -- entry points -----------------------------------------------------------------
    def added(self, doing: str, table: str, updates: Sequence[TableUpdate],
              base: TableMetadata | None, after: TableMetadata) -> None:
        """The snapshots ``updates`` add; ``after``: the table's metadata
        with them applied (its location and write.metadata.path)."""
        snaps = [u.snapshot for u in updates if isinstance(u, AddSnapshotUpdate)]
        if snaps:
            roots = _roots(self.reader, [m for m in (base, after) if m is not None])
            for s in snaps:
                self._check(doing, table, s, after, roots)

    def brought(self, doing: str, table: str, meta: TableMetadata) -> None:
        """Every snapshot of a metadata file being registered, parents first."""
        roots = _roots(self.reader, [meta])
        for s in sorted(meta.snapshots, key=lambda s: (s.sequence_number or 0, s.timestamp_ms)):
            self._check(doing, table, s, meta, roots)

    # -- one snapshot -----------------------------------------------------------------
    def _check(self, doing: str, table: str, snap: Snapshot, meta: TableMetadata,
               roots: list[tuple[str, Where]]) -> None:
        mlist = snap.manifest_list
        what = f"the manifest list of snapshot {snap.snapshot_id} of {table} {mlist}"

        def refuse(problem: str) -> SapwoodError:
            return bad_request(f"{doing}: {what} {problem}")

        if not mlist:
            raise bad_request(f"{doing}: snapshot {snap.snapshot_id} of {table} names no "
                              "manifest list")
        try:
            where = split(mlist)
        except SapwoodError as e:
            raise refuse(f"is not a location: {e.message}") from None
        if not any(under(where, root) for _, root in roots):
            raise refuse("is not under the table's location " + " nor ".join(
                name for name, _ in roots))
        guess = _guess(mlist)
        parent = meta.snapshot_by_id(snap.parent_snapshot_id) \
            if snap.parent_snapshot_id is not None else None
        # Begun before the list is read, so that the reads overlap (on S3
        # each is a round trip a commit would otherwise wait for in turn):
        # the parent's list is not kept here after a restart, or when
        # another of the server's processes checked the parent.
        ahead = self.reader.start(guess, _HEAD) if guess else None
        parents = self.reader.start(parent.manifest_list, None) \
            if parent is not None and parent.manifest_list not in self.lists else None
        manifests = self._read_list(mlist, snap.snapshot_id, refuse)
        known = self._parents(parent, parents) if parent is not None else {}
        new = [(path, content) for path, content in manifests.items() if path not in known]
        started: dict[int, Callable[[], bytes]] = {}

        def begin(i: int) -> None:
            if i < len(new):
                path = new[i][0]
                started[i] = self._guessed(ahead, path) if path == guess and ahead \
                    else self.reader.start(path, _HEAD)

        for i in range(_AHEAD):
            begin(i)
        # Checked in the list's order, each from its own read's outcome, so
        # the first bad manifest is the one refused, as when read in turn.
        for i, (path, content) in enumerate(new):
            begin(i + _AHEAD)
            self._check_manifest(doing, path, content, what, started.pop(i))
        self.lists.put(mlist, manifests)

    def _guessed(self, ahead: Callable[[], bytes], path: str) -> Callable[[], bytes]:
        """The header read ahead, or (when that read failed in any way) the
        header read now, as it would be without the guess: the guess
        changes no answer, not even an error's words."""
        def read() -> bytes:
            try:
                return ahead()
            except Exception:
                return self.reader.head(path, _HEAD)
        return read

    def _read_list(self, mlist: str, snapshot_id: int, refuse: _Refuse,
                   ) -> dict[str, ManifestContent]:
        data = self._read(mlist, refuse, None)
        try:
            meta = avro_header(data)
        except _Short:
            raise refuse("is not a manifest list: it ends inside its Avro header") from None
        except NotIceberg as e:
            raise refuse(f"is not a manifest list: {e}") from None
        try:
            kind = records(meta)
        except NotIceberg as e:
            raise refuse(f"is not a manifest list: {e}") from None
        if kind != "manifest_file":
            raise refuse(f"is not a manifest list: its records are '{kind[:100]}', not "
                         "'manifest_file'" + (" (it is a manifest)"
                                              if kind == "manifest_entry" else ""))
        written = meta.get("snapshot-id")
        if written is not None and written != str(snapshot_id).encode():
            raise refuse("was written for another snapshot (its snapshot-id metadata "
                          "differs)")
        try:
            listed = {m.manifest_path: m.content
                      for m in read_list(BytesInput(mlist, data))}
        except Exception as e:  # a hostile file, parsed: any failure is its own
            raise refuse(f"is not a manifest list: its entries do not decode "
                         f"({type(e).__name__})") from None
        if any(not isinstance(p, str) or not p for p in listed):
            raise refuse("is not a manifest list: an entry names no manifest")
        return listed

    def _parents(self, parent: Snapshot, begun: Callable[[], bytes] | None,
                 ) -> dict[str, ManifestContent]:
        """What the parent's manifest list names (the parent landed already:
        a list that cannot be read names nothing known, so every manifest
        of the new list is checked); ``begun``: its read, started earlier."""
        found = self.lists.get(parent.manifest_list)
        if found is None:
            try:
                source = BytesInput(parent.manifest_list, begun()) if begun is not None \
                    else self.io.new_input(parent.manifest_list)
                found = {m.manifest_path: m.content for m in read_list(source)}
            except Exception:  # damage already in history (fsck reports it), or gone
                return {}
            self.lists.put(parent.manifest_list, found)
        return found

    def _check_manifest(self, doing: str, path: str, content: ManifestContent,
                        what: str, first: Callable[[], bytes]) -> None:
        def refuse(problem: str) -> SapwoodError:
            return bad_request(f"{doing}: the manifest {path}, listed by {what}, {problem}")

        data = self._read(path, refuse, _HEAD, first)
        try:
            try:
                meta = avro_header(data)
            except _Short:
                if len(data) < _HEAD:  # the whole file was read
                    raise NotIceberg("it ends inside its Avro header") from None
                meta = avro_header(self._read(path, refuse, None))
            kind = records(meta)
        except _Short:
            raise refuse("is not a manifest: it ends inside its Avro header") from None
        except NotIceberg as e:
            raise refuse(f"is not a manifest: {e}") from None
        if kind != "manifest_entry":
            raise refuse(f"is not a manifest: its records are '{kind[:100]}', not "
                         "'manifest_entry'")
        said = meta.get("content")
        if said is not None and _CONTENT.get(said.decode("utf-8", "replace")) != content:
            raise refuse(f"holds {said.decode('utf-8', 'replace')[:20]!r} entries, but the "
                         f"list says {content.name.lower()}")

    def _read(self, location: str, refuse: _Refuse, size: int | None,
              begun: Callable[[], bytes] | None = None) -> bytes:
        """A file's first ``size`` bytes (``begun``: from a read started
        earlier), or the 400 saying why not."""
        try:
            return begun() if begun is not None else self.reader.head(location, size)
        except FileNotFoundInWarehouseError:
            raise refuse("does not exist (not written, or removed by garbage collection "
                         "after the writer took longer than gc's write window; write it "
                         "again)") from None
        except UnavailableError:
            raise  # a storage timeout: 503, retry
        except SapwoodError as e:
            raise refuse(f"cannot be read: {e.message}") from None


def _guess(mlist: str) -> str | None:
    """The first manifest a commit wrote, when the manifest list's name
    says which commit wrote it (``_LIST_NAME``): nearly every commit names
    it, so its header is worth reading before the list says so."""
    folder, _, name = mlist.rpartition("/")
    found = _LIST_NAME.fullmatch(name)
    return f"{folder}/{found.group(1)}-m0.avro" if folder and found else None


def _roots(reader: MetadataReader, metas: Iterable[TableMetadata]) -> list[tuple[str, Where]]:
    """Where a table's manifest lists may lie: its location, and its
    write.metadata.path when that is inside the location or the warehouse."""
    warehouse = reader.locations.root
    out: dict[str, Where] = {}
    for meta in metas:
        try:
            loc = split(meta.location)
        except SapwoodError:
            continue
        out.setdefault(meta.location, loc)
        path = meta.properties.get(METADATA_PATH)
        if path:
            try:
                w = split(path)
            except SapwoodError:
                continue
            if under(w, loc) or under(w, warehouse):
                out.setdefault(f"{path} ({METADATA_PATH})", w)
    return list(out.items())
