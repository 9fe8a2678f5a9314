"""Every number a route takes is range-checked (issue 34, item 8), on SQLite
and PostgreSQL: generated from the application's route table. Each integer
(or number) query and path parameter, and each numeric field anywhere in a
route's body, gets 2^63, -2^63-1, 1e20, a string of digits past 2^63, a
word and -1 (and nan/inf for numbers): a 400 naming the parameter, in the
Iceberg error body under /iceberg and Nessie's under /api/v2; -1 too where
the declaration says negatives mean nothing, and no 5xx anywhere (the
server fixture fails the module on a 5xx in the server log). Before, an
events cursor of 2^63 and a grant id of 2^63 answered 500 OverflowError,
and an ``after-timestamp-ms`` of 2^63 on the events query too; a table
content with ``snapshotId`` 2^63 was committed."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import httpx
import pyarrow as pa
import pytest
from fastapi.routing import APIRoute
from pydantic import TypeAdapter
from pyiceberg.schema import Schema

from core.content import Content
from core.numbers import INT64_MAX
from tests.api import spark_bodies as sb
from tests.api.schema_samples import Leaf, Samples
from tests.api.test_auth_routes import SAMPLE, routes
from tests.fixtures import BACKENDS, server_fixture
from tests.http import http_client
from tests.server import Server

BIG = 2 ** 63
SCHEMA = pa.schema([pa.field("id", pa.int64())])
# What the routes with required query parameters need to be reached at all.
REQUIRED_QUERY = {"name": "newbranch", "from": "spark", "to": "trino", "ref": "main"}
# Fields PyIceberg checks against others before any range (an identifier
# field id must name a field of the schema): refused, by their own message.
CROSS_CHECKED = {"identifier-field-ids"}


def objects(server: Server) -> None:
    """What the sample paths name (tests/api/test_auth_routes.py's SAMPLE),
    so the values a route takes reach its handler on real objects."""
    with http_client(base_url=server.base, timeout=30) as http:
        assert http.post("/iceberg/v1/namespaces", json={"namespace": ["ns"]}).status_code == 200
        server.catalog().create_table("ns.t", SCHEMA).append(pa.table({"id": [1]}, SCHEMA))
        r = http.post("/iceberg/v1/namespaces/ns/views",
                      json=sb.create_view("v", "SELECT id FROM ns.t"))
        assert r.status_code == 200, r.text


server = server_fixture(BACKENDS, prefix="integers", ready=objects)


@dataclass(frozen=True)
class Case:
    route: str
    method: str
    path: str  # a template: "{value}" where a path parameter goes
    where: str  # query, path, body
    name: str  # as the wire spells it
    number: bool  # a float parameter (an integer one otherwise)
    minimum: float | None
    maximum: float | None
    query: dict[str, str] = field(default_factory=dict)
    samples: Samples | None = None
    leaf: Leaf | None = None

    @property
    def id(self) -> str:
        return f"{self.route}-{self.method}-{self.where}-{self.name}"


def _path(route: APIRoute, target: str | None = None) -> str:
    def sub(m: re.Match[str]) -> str:
        return "{value}" if m.group(1) == target else SAMPLE[m.group(1)]
    return re.sub(r"{(\w+)(?::path)?}", sub, route.path)


def _bound(metadata: list[Any], *names: str) -> float | None:
    return next((getattr(m, n) for m in metadata for n in names
                 if getattr(m, n, None) is not None), None)


def _required_query(route: APIRoute) -> dict[str, str]:
    return {p.alias: REQUIRED_QUERY[p.alias] for p in route.dependant.query_params
            if p.field_info.is_required()}


def parameter_cases() -> list[Case]:
    out = []
    for r in routes():
        params = [("query", p) for p in r.dependant.query_params] + \
            [("path", p) for p in r.dependant.path_params]
        for where, p in params:
            text = str(p.field_info.annotation)
            if "int" not in text and "float" not in text:
                continue
            meta = p.field_info.metadata
            for method in sorted(r.methods):
                out.append(Case(r.name, method, _path(r, p.name if where == "path" else None),
                                where, p.alias, "float" in text, _bound(meta, "ge", "gt"),
                                _bound(meta, "le", "lt"), _required_query(r)))
    return out


def body_cases() -> list[Case]:
    out = []
    for r in routes():
        for p in r.dependant.body_params:
            samples = Samples(TypeAdapter(p.field_info.annotation).json_schema(by_alias=True))
            for leaf in samples.leaves():
                for method in sorted(r.methods):
                    out.append(Case(r.name,
                                    method, _path(r), "body", leaf.dotted,
                                    leaf.types <= {"number", "null"}, leaf.minimum,
                                    leaf.maximum, _required_query(r), samples, leaf))
    return out


def free_form_cases() -> list[Case]:
    """Numbers inside bodies the route table types as free-form JSON: a
    versioning commit's content values, a materialized view's schema."""
    out = []
    commit = Samples({"type": "object", "required": ["operations"], "properties": {
        "operations": {"type": "array", "minItems": 1, "items": {
            "type": "object", "required": ["type", "key", "content"], "properties": {
                "type": {"const": "PUT"},
                "key": {"type": "object", "required": ["elements"],
                        "properties": {"elements": {"type": "array", "minItems": 1,
                                                    "items": {"type": "string"}}}},
                "content": TypeAdapter(Content).json_schema(by_alias=True,
                                                            ref_template="#/$defs/{model}"),
            }}}}})
    commit.defs.update(commit.root["properties"]["operations"]["items"]["properties"]
                       ["content"].pop("$defs", {}))
    for leaf in commit.leaves():
        out.append(Case("commit", "POST", f"/api/v2/trees/main@{'0' * 64}/history/commit",
                        "body", leaf.dotted, False, leaf.minimum, leaf.maximum,
                        samples=commit, leaf=leaf))
    mv_schema = TypeAdapter(Schema).json_schema(by_alias=True)
    mv = Samples({"type": "object", "required": ["key", "sql", "schema"], "properties": {
        "key": {"const": {"elements": ["ns", "mv"]}}, "sql": {"const": "SELECT 1 AS a"},
        "schema": {k: v for k, v in mv_schema.items() if k != "$defs"}},
        "$defs": mv_schema.get("$defs", {})})
    for leaf in mv.leaves():
        out.append(Case("create_materialized_view", "POST", "/api/v2/trees/main/materialized-views",
                        "body", leaf.dotted, leaf.types <= {"number", "null"}, leaf.minimum,
                        leaf.maximum, samples=mv, leaf=leaf))
    return out


PARAMS = parameter_cases()
BODIES = body_cases() + free_form_cases()


def test_the_route_table_has_the_numbers_the_issue_names() -> None:
    names = {(c.route, c.name) for c in PARAMS + BODIES}
    for expected in [("list_events", "after"), ("revoke_grant", "grant_id"),
                     ("query_events", "after-timestamp-ms"), ("query_events", "page-size"),
                     ("commit_table", "updates[].snapshot.snapshot-id"),
                     ("commit", "operations[].content.snapshotId"),
                     ("create_materialized_view", "schema.fields[].id")]:
        assert expected in names, expected
    assert len(PARAMS) >= 20 and len(BODIES) >= 120


@pytest.mark.parametrize("case", PARAMS, ids=[c.id for c in PARAMS])
def test_every_numeric_parameter_declares_its_range(case: Case) -> None:
    assert case.minimum is not None and case.maximum is not None, case
    assert case.maximum <= INT64_MAX


def _message(r: httpx.Response) -> str:
    body = r.json()
    return str(body["message"] if "errorCode" in body else body["error"]["message"])


def _refused(r: httpx.Response, case: Case, named: bool = True) -> None:
    assert r.status_code == 400, (case.id, r.status_code, r.text)
    body = r.json()
    if r.request.url.path.startswith("/api/"):
        assert body["errorCode"] == "BAD_REQUEST", body
    else:
        assert body["error"]["type"] in ("BadRequestException",
                                         "IllegalArgumentException"), body
    if named:
        wire = case.leaf.name if case.leaf is not None else case.name
        assert wire in _message(r), (case.id, _message(r))


def _send_parameter(http: httpx.Client, case: Case, value: str) -> httpx.Response:
    query = dict(case.query)
    path = case.path
    if case.where == "path":
        path = path.replace("{value}", value)
    else:
        query[case.name] = value
    return http.request(case.method, path, params=query)


def _meaningless_negative(case: Case) -> bool:
    return case.minimum is not None and case.minimum >= 0


@pytest.mark.parametrize("case", PARAMS, ids=[c.id for c in PARAMS])
def test_every_numeric_parameter_refuses_what_it_cannot_hold(http: httpx.Client,
                                                             case: Case) -> None:
    bad = [str(BIG), str(-BIG - 1), "1e20", "abc"] + (["nan", "inf", "1e400"]
                                                       if case.number else [])
    if case.number:
        bad.remove(str(-BIG - 1))  # a float parameter holds it: checked by its minimum below
    for value in bad:
        if case.number and value in (str(BIG), "1e20") and case.maximum is not None and \
                case.maximum >= float(value):
            continue
        _refused(_send_parameter(http, case, value), case)
    negative = _send_parameter(http, case, "-1")
    if _meaningless_negative(case):
        _refused(negative, case)
    else:
        assert negative.status_code < 500, negative.text


def _send_body(http: httpx.Client, case: Case, value: Any) -> httpx.Response:
    assert case.samples is not None and case.leaf is not None
    return http.request(case.method, case.path, params=case.query,
                        json=case.samples.body_with(case.leaf, value))


@pytest.mark.parametrize("case", BODIES, ids=[c.id for c in BODIES])
def test_every_number_in_a_body_is_range_checked(http: httpx.Client, case: Case) -> None:
    assert case.leaf is not None
    named = case.leaf.name not in CROSS_CHECKED
    for value in (BIG, -BIG - 1):
        _refused(_send_body(http, case, value), case, named)
    others: list[Any] = [1e20, "abc", str(BIG)]
    for value in others:
        r = _send_body(http, case, value)
        if case.leaf.integer_only:
            _refused(r, case, named)
        else:  # a default value may be a double or a string
            assert r.status_code < 500, (case.id, value, r.text)
    negative = _send_body(http, case, -1)
    if _meaningless_negative(case):
        _refused(negative, case, named)
    else:
        assert negative.status_code < 500, (case.id, negative.text)
