"""The manifest header the catalog reads ahead changes no answer (issue 48).

A commit's manifest list named as PyIceberg and Iceberg Java name it
(snap-<id>-<attempt>-<uuid>.avro) makes the catalog read <uuid>-m0.avro's
header alongside the list (catalog/metadata/snapshot_files.py). Whatever
that file is (a good manifest, garbage, missing), a list that does not name
it is checked on its own manifests alone, and one that names it gets the
same answer as a list named otherwise: the first bad new manifest, in the
list's order, refused by name. On SQLite and PostgreSQL with a local
warehouse, and with the warehouse on a local S3-compatible server."""

from __future__ import annotations

import random
import uuid
from pathlib import Path
from typing import Any

import httpx

from tests.api.test_commit_files import _add, _appended, _refused
from tests.api.warehouse_files import GARBAGE, get, manifest_list, moved, put
from tests.fixtures import WITH_S3, server_fixture

server = server_fixture(WITH_S3)
V1 = "/iceberg/v1"


def test_a_list_named_as_iceberg_names_it_is_checked_as_any_other(
        server: Any, http: httpx.Client, ns: str, tmp_path: Path) -> None:
    meta, current, manifests = _appended(server, http, ns)
    loc = meta["location"]
    good = get(server, manifests[0].manifest_path)
    seq = meta["last-sequence-number"] + 1
    folder = f"{loc}/metadata"

    def commit(m0: bytes | None, new: list[tuple[str, bytes]]) -> tuple[httpx.Response, int]:
        """A commit whose list is snap-<sid>-1-<u>.avro, with <u>-m0.avro
        holding ``m0`` (None: absent), naming the manifests ``new``
        (name in the folder, bytes) after the current snapshot's."""
        sid, u = random.randint(1, 2**62), uuid.uuid4()
        named = []
        for name, data in new:
            path = f"{folder}/{name.format(u=u)}"
            put(server, path, data)
            named.append(moved(manifests[0], path))
        if m0 is not None and not any(n.startswith("{u}-m0.") for n, _ in new):
            put(server, f"{folder}/{u}-m0.avro", m0)
        path = f"{folder}/snap-{sid}-1-{u}.avro"
        put(server, path, manifest_list(tmp_path, sid, current.snapshot_id, seq,
                                        [*manifests, *named]))
        return _add(http, ns, "t", meta, path, sid), sid

    other = f"{uuid.uuid4()}-m0.avro"
    # <u>-m0.avro is garbage, or a manifest list, but the list does not name it.
    for m0 in (GARBAGE, get(server, current.manifest_list)):
        r, _ = commit(m0, [("{u}-m1.avro", GARBAGE)])
        _refused(r, "-m1.avro, listed by", "is not a manifest: it is not an Avro file")
        r, _ = commit(m0, [(other, GARBAGE)])
        _refused(r, f"the manifest {folder}/{other}, listed by",
                 "is not a manifest: it is not an Avro file")
    # <u>-m0.avro is a good manifest, the one named is not (and the reverse).
    r, _ = commit(good, [("{u}-m1.avro", GARBAGE)])
    _refused(r, "-m1.avro, listed by", "is not a manifest: it is not an Avro file")
    # Named, and garbage, or absent: the same words as for any other name.
    r, sid = commit(None, [("{u}-m0.avro", GARBAGE)])
    _refused(r, f"listed by the manifest list of snapshot {sid}",
             "-m0.avro", "is not a manifest: it is not an Avro file")
    sid, u = random.randint(1, 2**62), uuid.uuid4()
    path = f"{folder}/snap-{sid}-1-{u}.avro"
    put(server, path, manifest_list(tmp_path, sid, current.snapshot_id, seq,
                                    [*manifests, moved(manifests[0], f"{folder}/{u}-m0.avro")]))
    _refused(_add(http, ns, "t", meta, path, sid), f"the manifest {folder}/{u}-m0.avro",
             "does not exist")
    # Several new manifests: the first bad one in the list's order is named.
    r, _ = commit(None, [("{u}-m0.avro", good), ("{u}-m1.avro", good),
                         ("{u}-m2.avro", get(server, current.manifest_list)),
                         ("{u}-m3.avro", GARBAGE)])
    _refused(r, "-m2.avro, listed by", "its records are 'manifest_file'")
    r, _ = commit(None, [("{u}-m0.avro", GARBAGE), ("{u}-m1.avro", good),
                         ("{u}-m2.avro", get(server, current.manifest_list))])
    _refused(r, "-m0.avro, listed by", "is not a manifest: it is not an Avro file")
    # <u>-m0.avro garbage and not named, the named ones good: it lands, and reads.
    r, sid = commit(GARBAGE, [(other.replace("-m0", "-m5"), good)])
    assert r.status_code == 200, r.text
    meta = http.get(f"{V1}/namespaces/{ns}/tables/t").json()["metadata"]
    assert meta["current-snapshot-id"] == sid
