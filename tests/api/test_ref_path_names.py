"""A reference named like a segment of the Iceberg API's path (``v1``,
``config``, ``namespaces``, …) serves as a catalog's base path: a client whose
URI is ``/iceberg/<ref>`` and which puts config's prefix into every later path
(``/iceberg/v1/v1/v1/namespaces/…``) reads and writes that ref (issue 49,
defect 4: the second ``v1`` was taken for the API's, every call after config
answered 404). Real PyIceberg clients against a real server."""

from __future__ import annotations

from urllib.parse import quote

import httpx
import pyarrow as pa
import pytest

from tests.fixtures import server_fixture
from tests.server import Server

server = server_fixture()
NAMES = ("v1", "config", "namespaces", "tables", "oauth", "views", "transactions", "events")


def branch(http: httpx.Client, name: str) -> None:
    head = http.get("/api/v2/trees/main").json()["reference"]["hash"]
    r = http.post("/api/v2/trees", params={"name": name, "type": "BRANCH"},
                  json={"type": "BRANCH", "name": "main", "hash": head})
    assert r.status_code == 200, r.text


@pytest.fixture(scope="module")
def orders(server: Server) -> None:
    """sales.orders on main with one row, then a branch per name."""
    main = server.catalog("main")
    main.create_namespace("sales")
    main.create_table("sales.orders", pa.schema([("id", pa.int64()), ("src", pa.string())])
                      ).append(pa.table({"id": [1], "src": ["main"]}))
    with httpx.Client(base_url=server.base) as http:
        for name in NAMES:
            branch(http, name)


@pytest.mark.parametrize("name", NAMES)
def test_a_branch_named_like_the_api_serves_as_a_base_path(server: Server, orders: None,
                                                            name: str) -> None:
    cat = server.catalog(name)  # uri /iceberg/<name>; config's prefix is <name>
    assert cat.properties.get("prefix") == name
    table = cat.load_table("sales.orders")
    table.append(pa.table({"id": [2], "src": [name]}))
    assert sorted(cat.load_table("sales.orders").scan().to_arrow()["src"].to_pylist()) == \
        sorted(["main", name])
    cat.create_namespace(f"only_{name}")
    assert (f"only_{name}",) in cat.list_namespaces()
    # main saw none of it: the writes went to the branch.
    main = server.catalog("main")
    assert main.load_table("sales.orders").scan().to_arrow()["src"].to_pylist() == ["main"]
    assert (f"only_{name}",) not in main.list_namespaces()


def test_every_path_shape_addresses_the_ref(server: Server, orders: None,
                                            http: httpx.Client) -> None:
    """The four shapes (base path or not, prefix or not) of a ref named v1,
    and the default branch's, each name the ref they spell."""
    r = http.post("/iceberg/v1/v1/v1/namespaces", json={"namespace": ["shapes"]})
    assert r.status_code == 200, r.text
    shapes = {"/iceberg/v1/v1/v1/namespaces": "v1",           # base path and prefix
              "/iceberg/v1/v1/namespaces": "v1",              # one of them
              "/iceberg/v1/namespaces": "main",               # neither: the default branch
              "/iceberg/main/v1/main/namespaces": "main"}
    for path, ref in shapes.items():
        r = http.get(path)
        assert r.status_code == 200, (path, r.text)
        assert (["shapes"] in r.json()["namespaces"]) == (ref == "v1"), (path, r.json())
    r = http.get("/iceberg/v1/v1/config")
    assert r.status_code == 200 and r.json()["overrides"]["prefix"] == "v1", r.text
    r = http.get(f"/iceberg/{quote('v1')}/v1/config", params={"warehouse": "v1"})
    assert r.json()["overrides"]["prefix"] == "v1", r.text
