"""What the tests of engine catalog names (issue 49) share: the Iceberg base a
client uses after config for a ref and the catalog name it gave, and the
table their views read (``sales.orders``)."""

from __future__ import annotations

from urllib.parse import quote

import httpx

SCHEMA = {"type": "struct", "schema-id": 0, "fields": [
    {"id": 1, "name": "id", "required": False, "type": "long"}]}


def base(ref: str, catalog: str | None = None) -> str:
    """The Iceberg base a client uses after config: base path and prefix."""
    prefix = quote(f"{ref}|{catalog}" if catalog else ref, safe="")
    return f"/iceberg/{ref}/v1/{prefix}"


def create_orders(server_base: str) -> None:
    """The namespace ``sales`` and its table ``orders`` on main."""
    with httpx.Client(base_url=server_base) as http:
        assert http.post("/iceberg/v1/namespaces", json={"namespace": ["sales"]}
                         ).status_code == 200
        r = http.post("/iceberg/v1/namespaces/sales/tables", json={
            "name": "orders", "schema": SCHEMA})
        assert r.status_code == 200, r.text
