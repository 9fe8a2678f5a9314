"""Hostile and malformed requests against a real server, on SQLite and PostgreSQL.

Every request here goes over plain HTTP (one through PyIceberg) to a real
``sapwood serve``, through both APIs: traversal in every name and location
field, register with special files and foreign URLs, oversized and deeply
nested bodies, huge ancestor counts, odd Host headers. For each request: no
5xx, an answer within the client's 5 s timeout, and no file contents in the
answer. Afterwards: nothing exists outside the warehouse that was not there
before, and the server logged no internal error (``serving`` checks that).
"""

from __future__ import annotations

import itertools
import json
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from tests.api import spark_bodies as sb
from tests.fixtures import database_url
from tests.http import http_client
from tests.pg import free_port
from tests.server import Server, serving

V1 = "/iceberg/v1"
OK = "hostile_ok"
# Strings that only appear if a file's contents leaked: /etc/passwd, the
# process environment, and the secret the tests plant in the warehouse.
LEAKS = ("root:x:", "root:*:", "PATH=", "TOPSECRET")
_n = itertools.count()


class Probe:
    """The module's server, where it keeps things, and a client that checks
    every answer."""

    def __init__(self, server: Server, top: Path) -> None:
        self.server = server
        self.top = top
        self.warehouse = server.data_dir / "warehouse"
        self.outside = top / "outside"
        self.tok = f"hostile{uuid.uuid4().hex[:12]}"
        self.http = http_client(base_url=server.base, timeout=5)
        self.sent = 0

    def send(self, method: str, path: str, **kw: object) -> httpx.Response:
        if "json" in kw:  # as JSON allows: lone surrogates sent escaped (httpx would refuse)
            kw["content"] = json.dumps(kw.pop("json")).encode()
            kw["headers"] = {"Content-Type": "application/json", **kw.get("headers", {})}
        r = self.http.request(method, path, **kw)  # type: ignore[arg-type]
        self.sent += 1
        assert r.status_code < 500, f"{method} {path} {kw!r:.300}: {r.status_code} {r.text}"
        for leak in LEAKS:
            assert leak not in r.text, f"{method} {path} leaked {leak!r}: {r.text[:300]}"
        return r

    def refused(self, method: str, path: str, **kw: object) -> str:
        r = self.send(method, path, **kw)
        assert 400 <= r.status_code < 500, f"{method} {path} {kw!r:.300}: {r.text[:300]}"
        body = r.json()
        return str(body["error"]["message"] if "error" in body else body["message"])

    def plant(self) -> None:
        """Special files for register to be pointed at: FIFOs inside and outside
        the warehouse, links from inside it to /dev/zero and /etc/passwd, files
        holding a secret, one larger than the read limit, a folder."""
        wh, tok = self.warehouse, self.tok
        wh.mkdir(exist_ok=True)
        os.mkfifo(self.outside / f"fifo{tok}")
        os.mkfifo(wh / f"fifo{tok}.metadata.json")
        (wh / f"zero{tok}.metadata.json").symlink_to("/dev/zero")
        (wh / f"pw{tok}.metadata.json").symlink_to("/etc/passwd")
        (wh / f"secret{tok}.metadata.json").write_text("TOPSECRET root:x:0:0:root:/root:/bin/sh")
        (wh / f"secretjson{tok}.metadata.json").write_text(
            '{"format-version": 2, "table-uuid": "TOPSECRET", "location": "TOPSECRET"}')
        with open(wh / f"huge{tok}.metadata.json", "wb") as f:
            f.truncate(65 * 1024 * 1024)  # sparse: larger than the read limit, costs no disk
        (wh / f"dir{tok}.metadata.json").mkdir()

    def commit(self, ops: list[dict[str, object]]) -> httpx.Response:
        head = self.send("GET", "/api/v2/trees/main").json()["reference"]["hash"]
        return self.send("POST", f"/api/v2/trees/main@{head}/history/commit",
                         json={"commitMeta": {"message": "hostile"}, "operations": ops})

    def unique(self, stem: str) -> str:
        return f"{stem}{next(_n)}"

    def snapshot(self) -> set[str]:
        """Every path under the test's folder but outside the warehouse (the
        database's own files come and go), plus anything carrying the token in
        each folder above the warehouse, up to the root."""
        found = {str(p.relative_to(self.top)) for p in self.top.rglob("*")
                 if self.warehouse not in p.parents and p != self.warehouse
                 and not p.name.startswith("sapwood.db")}
        for folder in self.warehouse.parents:
            with os.scandir(folder) as it:
                found |= {f"{folder}/{e.name}" for e in it if self.tok in e.name}
        return found


@pytest.fixture(scope="module",
                params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def probe(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
          ) -> Iterator[Probe]:
    """One server per backend, its warehouse in a folder of its own whose
    siblings are watched."""
    top = tmp_path_factory.mktemp("hostile")
    (top / "outside").mkdir()
    url = database_url(request, request.param, top / "srv", "hostile")
    with serving(url, top / "srv") as server:
        p = Probe(server, top)
        assert p.send("POST", f"{V1}/namespaces", json={"namespace": [OK]}).status_code == 200
        p.plant()
        before = p.snapshot()
        yield p
        assert p.snapshot() == before, "a file was created outside the warehouse"
        assert p.sent >= 100, p.sent
        p.http.close()


def names(tok: str) -> list[str]:
    return ["..", ".", "/", "\\", "%2e%2e", "%2E%2E%2F", f"../../{tok}", f"..\\..\\{tok}",
            f"/{tok}", f"/tmp/{tok}", f"a/../../{tok}", "\x00", f"x\x00{tok}", "\x1f", "~",
            f"~{tok}", "${HOME}", f"C:\\{tok}", f"file:///{tok}", f"üñï{tok}çødé",
            f"💥{tok}", "\ud800", f"{tok}" + "n" * 230, "n" * 256 + tok, " ", "...", f".{tok}",
            f"{tok}.", f"{tok}%00", f"{tok}?x=1#y"]


def locations(p: Probe) -> list[str]:
    wh, whp, out, tok = p.server.warehouse, str(p.warehouse), p.outside, p.tok
    return [f"{wh}/../{tok}", f"{wh}/ns/../../{tok}", f"{whp}/../../{tok}",
            f"file:{whp}/../{tok}", f"{wh}/%2e%2e/%2e%2e/{tok}", f"{wh}/a\\..\\..\\{tok}",
            str(out / tok), f"file://{out}/{tok}", f"/{tok}", f"file:///{tok}",
            f"file://evil.example{whp}/{tok}", f"file://localhost{out}/{tok}",
            f"{tok}/relative", f"../{tok}", f"~/{tok}", f"ftp://127.0.0.1:{free_port()}/{tok}",
            f"http://127.0.0.1:{free_port()}/{tok}", f"s3://bucket/{tok}", f"memory://{tok}",
            "\x00", f"{wh}/\x00{tok}", f"{wh}/" + "d/" * 3000, f"{wh}//../{tok}",
            f"{wh}/./../{tok}", f"FILE://{out}/{tok}", f"{wh}x/{tok}"]


def test_names_never_leave_the_warehouse(probe: Probe) -> None:
    """Namespaces, tables and views named to escape, through both APIs; every
    name that is accepted gets a table and a view at their default location."""
    made = []
    for kind, body in (("tables", sb.create_table("from_tables")),
                       ("views", sb.create_view("from_views", "SELECT 1"))):
        assert probe.send("POST", f"{V1}/namespaces/{OK}/{kind}", json=body).status_code == 200
    for name in names(probe.tok):
        path = quote(name.encode("utf-8", "surrogatepass"), safe="")
        for ns in ([name], [OK, name]):
            r = probe.send("POST", f"{V1}/namespaces", json={"namespace": ns})
            if r.status_code == 200:
                made.append(ns)
        probe.send("POST", f"{V1}/namespaces/{OK}/tables", json=sb.create_table(name))
        probe.send("POST", f"{V1}/namespaces/{OK}/views", json=sb.create_view(name, "SELECT 1"))
        probe.send("GET", f"{V1}/namespaces/{path}/tables/{path}")
        for kind in ("tables", "views"):
            probe.send("POST", f"{V1}/{kind}/rename", json={
                "source": {"namespace": [OK], "name": f"from_{kind}"},
                "destination": {"namespace": [OK], "name": name}})
        r = probe.commit([{"type": "PUT", "key": {"elements": [name, "t"]},
                           "content": {"type": "NAMESPACE", "properties": {}}}])
        r = probe.commit([{"type": "PUT", "key": {"elements": [name]},
                           "content": {"type": "NAMESPACE", "properties": {}}}])
        if r.status_code == 200:
            made.append([name])
    for ns in made:
        sep = quote("\x1f".join(ns).encode("utf-8", "surrogatepass"), safe="")
        probe.send("POST", f"{V1}/namespaces/{sep}/tables", json=sb.create_table("t"))
        probe.send("POST", f"{V1}/namespaces/{sep}/views", json=sb.create_view("v", "SELECT 1"))
    # PyIceberg sends the same bodies: a name that climbs is refused there too.
    from pyiceberg.exceptions import BadRequestError
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField

    cat = probe.server.catalog()
    schema = Schema(NestedField(1, "n", LongType(), required=False))
    for name in (f"../../{probe.tok}", f"..\\{probe.tok}"):
        with pytest.raises(BadRequestError):
            cat.create_table((OK, name), schema)


def test_locations_are_checked_after_normalisation(probe: Probe) -> None:
    """Every location field (``location`` on create, ``set-location``, the
    ``write.metadata.path`` property on create and in a commit), tables and
    views, with traversal spelled every way and foreign schemes: all 400."""
    t_name, v_name = probe.unique("t"), probe.unique("v")
    table = probe.send("POST", f"{V1}/namespaces/{OK}/tables", json=sb.create_table(t_name))
    view = probe.send("POST", f"{V1}/namespaces/{OK}/views",
                      json=sb.create_view(v_name, "SELECT 1"))
    assert table.status_code == view.status_code == 200
    t_path, v_path = f"{V1}/namespaces/{OK}/tables/{t_name}", f"{V1}/namespaces/{OK}/views/{v_name}"
    for loc in locations(probe):
        wmp = {"write.metadata.path": loc}
        probe.refused("POST", f"{V1}/namespaces/{OK}/tables",
                      json={**sb.create_table(probe.unique("t")), "location": loc})
        probe.refused("POST", f"{V1}/namespaces/{OK}/views",
                      json={**sb.create_view(probe.unique("v"), "SELECT 1"), "location": loc})
        probe.refused("POST", f"{V1}/namespaces/{OK}/tables",
                      json={**sb.create_table(probe.unique("t")), "properties": wmp})
        probe.refused("POST", f"{V1}/namespaces/{OK}/views",
                      json=sb.create_view(probe.unique("v"), "SELECT 1", properties=wmp))
        for path in (t_path, v_path):
            probe.refused("POST", path, json={"updates": [{"action": "set-location",
                                                            "location": loc}]})
            probe.refused("POST", path, json={"updates": [{"action": "set-properties",
                                                            "updates": wmp}]})
    # A location inside the warehouse, spelled with dots that stay inside, is fine.
    inside = f"{probe.server.warehouse}/a/../{probe.unique('in')}"
    r = probe.send("POST", f"{V1}/namespaces/{OK}/tables",
                   json={**sb.create_table(probe.unique("t")), "location": inside})
    assert r.status_code == 200, r.text
    assert "/../" not in r.json()["metadata-location"]


def test_register_opens_nothing_outside_the_warehouse(probe: Probe) -> None:
    """Register (table and view) pointed at system files, special files,
    links out of the warehouse, secrets, an oversized file and other hosts'
    URLs: a 4xx in time, no contents in the answer, no hint of existence."""
    wh, tok = probe.warehouse, probe.tok
    fifo_out, fifo_in = probe.outside / f"fifo{tok}", wh / f"fifo{tok}.metadata.json"
    closed = free_port()
    targets = ["/etc/passwd", "file:///etc/passwd", "/etc/shadow", "/proc/self/environ",
               "file:///proc/self/environ", "/dev/zero", "file:///dev/zero", str(fifo_out),
               f"file://{fifo_out}", str(fifo_in), str(wh / f"zero{tok}.metadata.json"),
               str(wh / f"pw{tok}.metadata.json"), str(wh / f"secret{tok}.metadata.json"),
               str(wh / f"secretjson{tok}.metadata.json"), str(wh / f"huge{tok}.metadata.json"),
               str(wh / f"dir{tok}.metadata.json"), str(wh / f"missing{tok}.metadata.json"),
               f"ftp://127.0.0.1:{closed}/m.json", f"http://127.0.0.1:{closed}/m.json",
               f"https://127.0.0.1:{closed}/m.json", f"sftp://127.0.0.1:{closed}/m.json",
               f"{probe.server.warehouse}/{'../' * 30}etc/passwd",
               f"{probe.server.warehouse}/%2e%2e/%2e%2e/etc/passwd", "/etc", "", "\x00",
               f"memory://{tok}", "relative.metadata.json"]
    for loc in targets:
        for route in ("register", "register-view"):
            msg = probe.refused("POST", f"{V1}/namespaces/{OK}/{route}",
                                json={"name": probe.unique("r"), "metadata-location": loc})
            assert "TOPSECRET" not in msg and "root:" not in msg
    # Outside the warehouse, a file that exists and one that does not are
    # answered alike: the answer says nothing about the server's files.
    same = [probe.refused("POST", f"{V1}/namespaces/{OK}/register",
                          json={"name": "same", "metadata-location": loc}).replace(loc, "LOC")
            for loc in ("/etc/passwd", f"/etc/passwd{tok}", "/etc", f"{probe.outside}/{tok}")]
    assert len(set(same)) == 1, same


def test_sizes_are_limited(probe: Probe) -> None:
    """Bodies (announced and chunked), property keys, values and counts, names,
    updates per commit, operations per versioning commit; page sizes clamped."""
    big = "x" * (50 * 1024 * 1024)
    r = probe.send("POST", f"{V1}/namespaces",
                   json={"namespace": ["big"], "properties": {"a": big}})
    assert r.status_code == 413 and "SAPWOOD_MAX_BODY_BYTES" in r.json()["error"]["message"]
    # A chunked body announces no length: its bytes are counted as they come.
    chunks = (b'{"namespace": ["big2"], "properties": {"a": "' + b"x" * 65536 for _ in range(80))
    r = probe.send("POST", f"{V1}/namespaces", content=chunks,
                   headers={"Content-Type": "application/json"})
    assert r.status_code == 413, r.text
    r = probe.send("POST", "/api/v2/trees/main@00000000/history/commit",
                   content=b"[" * (5 * 1024 * 1024))
    assert r.status_code == 413, r.text
    ns = probe.unique("sz")
    assert probe.send("POST", f"{V1}/namespaces", json={"namespace": [ns]}).status_code == 200
    for body in ({"updates": {"k" * 257: "v"}}, {"updates": {"k": "v" * (64 * 1024 + 1)}},
                 {"updates": {f"k{i}": "v" for i in range(1001)}},
                 {"removals": [f"k{i}" for i in range(1001)]}, {"removals": ["k" * 257]}):
        probe.refused("POST", f"{V1}/namespaces/{ns}/properties", json=body)
    ok = {"updates": {"k" * 256: "v" * (64 * 1024)}}
    assert probe.send("POST", f"{V1}/namespaces/{ns}/properties", json=ok).status_code == 200
    probe.refused("POST", f"{V1}/namespaces", json={"namespace": ["n" * 256]})
    probe.refused("POST", f"{V1}/namespaces/{OK}/tables", json=sb.create_table("t" * 256))
    probe.refused("POST", f"{V1}/namespaces/{OK}/views", json=sb.create_view("v" * 256, "SELECT 1"))
    probe.refused("POST", f"{V1}/namespaces", json={
        "namespace": [probe.unique("p")], "properties": {f"k{i}": "v" for i in range(1001)}})
    t = probe.unique("t")
    assert probe.send("POST", f"{V1}/namespaces/{OK}/tables",
                      json=sb.create_table(t)).status_code == 200
    many = [{"action": "set-properties", "updates": {f"k{i}": "v"}} for i in range(1001)]
    probe.refused("POST", f"{V1}/namespaces/{OK}/tables/{t}", json={"updates": many})
    ops = [{"type": "PUT", "key": {"elements": [f"n{i}"]},
            "content": {"type": "NAMESPACE", "properties": {}}} for i in range(1001)]
    assert probe.commit(ops).status_code == 400
    # Page sizes are clamped, however large the number asked for (up to the
    # largest 64-bit integer: beyond, 400, tests/api/test_integer_params.py).
    most = 2**63 - 1
    for path, params in ((f"{V1}/namespaces", {"pageSize": most}),
                         ("/api/v2/trees/main/history", {"maxRecords": most}),
                         ("/api/v2/trees", {"maxRecords": most}),
                         ("/api/v2/trees/main/entries", {"maxRecords": most})):
        assert probe.send("GET", path, params=params).status_code == 200


def test_deep_nesting_and_odd_json(probe: Probe) -> None:
    """100k-deep lists and objects, 900-deep values inside accepted fields, huge
    numbers, lone surrogates, bytes that are not UTF-8: 4xx or stored, never 5xx."""
    deep_list = b"[" * 100_000 + b"]" * 100_000
    deep_obj = b'{"a":' * 100_000 + b"1" + b"}" * 100_000
    for body in (deep_list, deep_obj):
        for path in (f"{V1}/namespaces", f"{V1}/namespaces/{OK}/tables",
                     "/api/v2/trees/main@00000000/history/commit"):
            probe.refused("POST", path, content=body, headers={"Content-Type": "application/json"})
    nested: object = "x"
    for _ in range(900):
        nested = [nested]
    probe.send("POST", f"{V1}/namespaces", json={"namespace": [probe.unique("d")],
                                                 "properties": {"a": nested}})
    probe.commit([{"type": "PUT", "key": {"elements": [probe.unique("d")]},
                   "content": {"type": "NAMESPACE", "properties": {}, "x": nested}}])
    probe.commit([{"type": "PUT", "key": {"elements": [OK, probe.unique("big")]},
                   "content": {"type": "ICEBERG_TABLE", "metadataLocation": "/etc/passwd",
                               "snapshotId": 10**30}}])
    for body in (b"", b"null", b"[]", b'"x"', b"1e999", b'{"namespace": 1e999}',
                 b'{"namespace": ["\\ud800"]}', b"\xff\xfe", b'{"namespace": ["a"]' * 3):
        probe.send("POST", f"{V1}/namespaces", content=body,
                   headers={"Content-Type": "application/json"})


def test_stored_locations_are_checked_when_read(probe: Probe) -> None:
    """The versioning API stores no metadata location it has not read: a
    commit naming one outside the warehouse, or no regular file inside it,
    is refused without reading it (issue 47: a commit's files are checked),
    and nothing is there to serve."""
    fifo = probe.warehouse / f"fifo{probe.tok}.metadata.json"
    for loc in ("/etc/passwd", "file:///proc/self/environ", "/dev/zero", str(fifo),
                f"{probe.server.warehouse}/../../../etc/passwd",
                f"http://127.0.0.1:{free_port()}/m.json", str(probe.warehouse)):
        for kind, route in (("ICEBERG_TABLE", "tables"), ("ICEBERG_VIEW", "views")):
            name = probe.unique("stored")
            content = {"type": kind, "metadataLocation": loc}
            if kind == "ICEBERG_VIEW":
                content["versionId"] = 1
            r = probe.commit([{"type": "PUT", "key": {"elements": [OK, name]},
                               "content": content}])
            if loc in (str(fifo), str(probe.warehouse)):
                # Inside the warehouse a new metadata file must be a file there.
                assert r.status_code == 400 and "does not exist" in r.text, r.text
                continue
            assert r.status_code == 400 and name in r.text, r.text
            assert "root:" not in r.text
            probe.refused("GET", f"{V1}/namespaces/{OK}/{route}/{name}")
            probe.refused("POST", f"{V1}/namespaces/{OK}/{route}/{name}",
                          json={"updates": [{"action": "set-properties",
                                             "updates": {"a": "b"}}]})


def test_refs_and_versions(probe: Probe) -> None:
    """Huge ``~n``/``^n`` and odd instants in every place a ref goes; format
    version 4 on create (raw and PyIceberg), upgrade and register."""
    huge = ("main~99999999999999999999", "main~1000000001", "main^99999999999999999999",
            "main~" + "9" * 5000, "@" + "f" * 64 + "~99999999999999999999")
    for ref in huge:
        msg = probe.refused("GET", f"/iceberg/{quote(ref, safe='')}/v1/namespaces")
        assert "1000000000" in msg, msg
    odd = ("main*99999999999999999999", "main*-99999999999999999", "main*99999-12-31T00:00:00Z")
    for ref in huge + odd:
        probe.refused("GET", f"/api/v2/trees/{quote(ref, safe='')}")
        probe.refused("GET", f"{V1}/namespaces/{OK}/tables/t@{quote(ref, safe='')}")
    body = {**sb.create_table(probe.unique("v4")), "properties": {"format-version": "4"}}
    msg = probe.refused("POST", f"{V1}/namespaces/{OK}/tables", json=body)
    assert "1, 2 and 3" in msg and "format" in msg.lower()
    t = probe.unique("t")
    probe.send("POST", f"{V1}/namespaces/{OK}/tables", json=sb.create_table(t))
    probe.refused("POST", f"{V1}/namespaces/{OK}/tables/{t}",
                  json={"updates": [{"action": "upgrade-format-version", "format-version": 4}]})
    v4 = probe.warehouse / f"v4{probe.tok}.metadata.json"
    meta = probe.send("GET", f"{V1}/namespaces/{OK}/tables/{t}").json()["metadata"]
    v4.write_text(json.dumps({**meta, "format-version": 4, "next-row-id": 0}))
    probe.refused("POST", f"{V1}/namespaces/{OK}/register",
                  json={"name": probe.unique("r"), "metadata-location": str(v4)})
    from pyiceberg.exceptions import BadRequestError
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField

    with pytest.raises(BadRequestError, match="format"):
        probe.server.catalog().create_table(
            (OK, probe.unique("pyv4")), Schema(NestedField(1, "n", LongType(), required=False)),
            properties={"format-version": "4"})


def test_only_configured_hosts_are_served(probe: Probe) -> None:
    """The default host list: loopback names only, any port, any case."""
    port = probe.server.port
    for host in ("evil.example", f"evil.example:{port}", "localhost.evil.example",
                 "127.0.0.1.nip.io", "127.0.0.2", "0.0.0.0", f"[::2]:{port}", "[::1", "",
                 "user@127.0.0.1", "a" * 1000, "localhost:1:2"):
        for path in (f"{V1}/namespaces", "/api/v2/trees", f"{V1}/config"):
            r = probe.send("GET", path, headers={"Host": host})
            assert r.status_code == 400, (host, r.text)
            assert "SAPWOOD_ALLOWED_HOSTS" in r.text
    for host in ("localhost", f"localhost:{port}", "LOCALHOST", "127.0.0.1", f"[::1]:{port}",
                 "[::1]", "localhost."):
        assert probe.send("GET", f"{V1}/namespaces", headers={"Host": host}).status_code == 200
