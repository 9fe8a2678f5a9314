"""Nessie's own clients against the versioning API, by plain HTTP (issue 47;
docs/nessie-compatibility.md): what Nessie's Java client (inside Iceberg's
Spark runtime) sends — gzip bodies, a namespace's ``elements``, a view's
``sqlText``/``dialect``, updates without ``expectedContent`` — is taken as
Nessie takes it, and a request with its ``Nessie-Client-Spec`` header is
answered in Nessie's shapes only (its client fails on any field it does not
know). The exchanges are the ones /work/nessie-failures.md recorded."""

from __future__ import annotations

import gzip
import json
import os
import uuid
import zlib
from pathlib import Path
from typing import Any

import httpx

from tests.api import spark_bodies as sb

V2 = "/api/v2"
V1 = "/iceberg/v1"
NESSIE = {"Nessie-Client-Spec": "2"}
# Nessie's models' fields: ImmutableIcebergView$Json's seven, the table's,
# the namespace's; MergeResponse's and ContentKeyDetails'.
VIEW_FIELDS = {"type", "id", "metadataLocation", "versionId", "schemaId", "sqlText", "dialect"}
TABLE_FIELDS = {"type", "id", "metadataLocation", "snapshotId", "schemaId", "specId",
                "sortOrderId"}
MERGE_FIELDS = {"resultantTargetHash", "commonAncestor", "targetBranch", "effectiveTargetHash",
                "expectedHash", "wasApplied", "wasSuccessful", "details"}


def head(http: httpx.Client, ref: str) -> str:
    r = http.get(f"{V2}/trees/{ref}")
    assert r.status_code == 200, r.text
    return str(r.json()["reference"]["hash"])


def gzipped(http: httpx.Client, method: str, path: str, payload: Any,
            encoding: str = "gzip", **kw: Any) -> httpx.Response:
    """As the Java client sends every body: compressed, with its header."""
    raw = json.dumps(payload).encode()
    data = gzip.compress(raw) if encoding == "gzip" else zlib.compress(raw)
    return http.request(method, path, content=data, headers={
        **NESSIE, "Content-Type": "application/json; charset=utf-8",
        "Content-Encoding": encoding}, **kw)


def commit(http: httpx.Client, ref: str, *ops: dict[str, Any],
           headers: dict[str, str] | None = None) -> httpx.Response:
    return http.post(f"{V2}/trees/{ref}/history/commit",
                     headers=NESSIE if headers is None else headers, json={
        "commitMeta": {"message": "nessie client", "authors": ["root"],
                       "allProperties": {"application-type": ["iceberg"]}},
        "operations": list(ops)})


def content(http: httpx.Client, ref: str, key: str, nessie: bool = True) -> dict[str, Any]:
    r = http.get(f"{V2}/trees/{ref}/contents/{key}", headers=NESSIE if nessie else {})
    assert r.status_code == 200, r.text
    return dict(r.json()["content"])


def test_gzip_and_deflate_bodies_are_read(http, ns) -> None:
    main = head(http, "main")
    for name, encoding in ((f"gz_{ns}", "gzip"), (f"df_{ns}", "deflate")):
        r = gzipped(http, "POST", f"{V2}/trees", {"type": "BRANCH", "name": "main",
                                                  "hash": main},
                    encoding, params={"name": name, "type": "BRANCH"})
        assert r.status_code == 200, r.text
        assert r.json()["reference"] == {"type": "BRANCH", "name": name, "hash": main}
    # A POST the Java client sends first: contents by keys, gzipped.
    r = gzipped(http, "POST", f"{V2}/trees/main/contents",
                {"requestedKeys": [{"elements": [ns]}]})
    assert r.status_code == 200, r.text
    assert [c["key"]["elements"] for c in r.json()["contents"]] == [[ns]]


def test_a_large_compressed_body_is_read_whole(http, ns) -> None:
    """Past 64 KiB compressed the body decodes off the event loop: the same
    answer."""
    props = {f"p{i}": os.urandom(15_000).hex() for i in range(5)}
    body = {"commitMeta": {"message": "big"}, "operations": [
        {"type": "PUT", "key": {"elements": [ns, "big"]},
         "content": {"type": "NAMESPACE", "properties": props}}]}
    assert len(gzip.compress(json.dumps(body).encode())) > 64 * 1024
    r = gzipped(http, "POST", f"{V2}/trees/main@{head(http, 'main')}/history/commit", body)
    assert r.status_code == 200, r.text
    assert content(http, "main", f"{ns}.big")["properties"] == props


def test_bodies_that_do_not_decode_are_refused_naming_why(http, ns) -> None:
    main = head(http, "main")
    params = {"name": f"no_{ns}", "type": "BRANCH"}
    ref = {"type": "BRANCH", "name": "main", "hash": main}
    r = http.post(f"{V2}/trees", params=params, content=json.dumps(ref).encode(),
                  headers={"Content-Type": "application/json", "Content-Encoding": "br"})
    assert r.status_code == 415, r.text
    assert "'br'" in r.json()["message"]
    r = http.post(f"{V2}/trees", params=params, content=b"not gzip at all",
                  headers={"Content-Type": "application/json", "Content-Encoding": "gzip"})
    assert r.status_code == 400, r.text
    assert "gzip" in r.json()["message"]
    cut = gzip.compress(json.dumps(ref).encode())[:-12]
    r = http.post(f"{V2}/trees", params=params, content=cut,
                  headers={"Content-Type": "application/json", "Content-Encoding": "gzip"})
    assert r.status_code == 400, r.text
    # A small body that decodes past the body limit (4 MiB): a 413, not memory.
    bomb = gzip.compress(b" " * (5 * 1024 * 1024) + json.dumps(ref).encode())
    assert len(bomb) < 64 * 1024
    r = http.post(f"{V2}/trees", params=params, content=bomb,
                  headers={"Content-Type": "application/json", "Content-Encoding": "gzip"})
    assert r.status_code == 413, r.text
    assert "once decoded" in r.json()["message"]
    assert http.get(f"{V2}/trees/no_{ns}").status_code == 404


def test_namespace_elements_are_taken_checked_and_answered(http, ns) -> None:
    key = [ns, "child"]
    body = {"type": "NAMESPACE", "elements": key, "properties": {"owner": "root"}}
    wrong = commit(http, f"main@{head(http, 'main')}", {
        "type": "PUT", "key": {"elements": key}, "documentation": None,
        "content": {**body, "elements": [ns, "other"]}})
    assert wrong.status_code == 400, wrong.text
    assert "elements" in wrong.json()["message"]
    r = commit(http, f"main@{head(http, 'main')}", {
        "type": "PUT", "key": {"elements": key}, "content": {**body, "id": None}})
    assert r.status_code == 200, r.text
    dotted = f"{ns}.child"
    # Every answer carrying a namespace value carries its elements.
    got = content(http, "main", dotted)
    assert got["elements"] == key and got["properties"] == {"owner": "root"}
    assert content(http, "main", dotted, nessie=False)["elements"] == key
    posted = http.post(f"{V2}/trees/main/contents", headers=NESSIE,
                       json={"requestedKeys": [{"elements": key}]}).json()
    assert posted["contents"][0]["content"]["elements"] == key
    entries = http.get(f"{V2}/trees/main/entries", headers=NESSIE,
                       params={"content": "true", "prefixKey": ns}).json()["entries"]
    assert [e["content"]["elements"] for e in entries if e["type"] == "NAMESPACE"] == [key]


def _table(http: httpx.Client, ns: str, name: str) -> dict[str, Any]:
    r = http.post(f"{V1}/namespaces/{ns}/tables", json=sb.create_table(name))
    assert r.status_code == 200, r.text
    return content(http, "main", f"{ns}.{name}")


def _set_property(http: httpx.Client, ns: str, name: str, value: str) -> None:
    r = http.post(f"{V1}/namespaces/{ns}/tables/{name}", json={
        "requirements": [], "updates": [{"action": "set-properties",
                                         "updates": {"k": value}}]})
    assert r.status_code == 200, r.text


def test_an_update_without_expected_content_is_based_on_its_hash(http, ns) -> None:
    """NessieCatalog's table commits name the content id and the hash they
    read, never ``expectedContent``: the value at that hash is what the
    update was based on, and a key changed since is a conflict."""
    first = _table(http, ns, "t")
    at_first = head(http, "main")
    r = http.post(f"{V2}/trees", params={"name": f"b_{ns}", "type": "BRANCH"},
                  json={"type": "BRANCH", "name": "main", "hash": at_first})
    assert r.status_code == 200, r.text
    _set_property(http, ns, "t", "1")
    second = content(http, "main", f"{ns}.t")
    assert second["metadataLocation"] != first["metadataLocation"]
    put = {"type": "PUT", "key": {"elements": [ns, "t"]}, "content": second}
    r = commit(http, f"b_{ns}@{head(http, f'b_{ns}')}", put)
    assert r.status_code == 200, r.text
    assert content(http, f"b_{ns}", f"{ns}.t")["metadataLocation"] == \
        second["metadataLocation"]
    # Based on main as it was before the update: the key changed since.
    stale = commit(http, f"main@{at_first}", {**put, "content": first})
    assert stale.status_code == 409, stale.text
    body = stale.json()
    assert body["errorCode"] == "REFERENCE_CONFLICT"
    # Nessie's polymorphic details, nothing its client cannot read.
    assert body["errorDetails"] == {"type": "REFERENCE_CONFLICTS", "conflicts": [{
        "conflictType": "VALUE_DIFFERS", "key": {"elements": [ns, "t"]},
        "message": body["errorDetails"]["conflicts"][0]["message"]}]}
    assert content(http, "main", f"{ns}.t") == second
    # An expectedContent, when given, is checked (stricter than Nessie 0.99,
    # which ignores an out-of-date one at the head).
    r = commit(http, f"main@{head(http, 'main')}",
               {**put, "content": first, "expectedContent": first})
    assert r.status_code == 409, r.text
    assert r.json()["errorDetails"]["conflicts"][0]["conflictType"] == "VALUE_DIFFERS"
    # Sapwood's own callers keep its details (the key as text, retryable).
    again = commit(http, f"main@{at_first}", {**put, "content": first}, headers={})
    assert again.status_code == 409
    assert again.json()["errorDetails"]["conflicts"][0]["key"] == f"{ns}.t"
    assert "retryable" in again.json()["errorDetails"]


def test_views_take_and_answer_nessies_fields(http, ns) -> None:
    r = http.post(f"{V1}/namespaces/{ns}/views", json=sb.create_view("v", "SELECT 1"))
    assert r.status_code == 200, r.text
    sapwood = content(http, "main", f"{ns}.v", nessie=False)
    assert "extensions" in sapwood  # Sapwood's shape for its own callers
    got = content(http, "main", f"{ns}.v")
    assert set(got) == VIEW_FIELDS, got
    assert (got["sqlText"], got["dialect"]) == ("-", "-")
    table = _table(http, ns, "t")
    assert set(table) == TABLE_FIELDS, table
    key = {"elements": [ns, "v"]}
    refused = commit(http, f"main@{head(http, 'main')}", {
        "type": "PUT", "key": key, "content": {**got, "sqlText": "SELECT 2"}})
    assert refused.status_code == 400, refused.text
    assert "sqlText" in refused.json()["message"]
    refused = commit(http, f"main@{head(http, 'main')}", {
        "type": "PUT", "key": key, "content": {**got, "metadata": {"variant": "x"}}})
    assert refused.status_code == 400 and "metadata" in refused.json()["message"], refused.text
    # NessieCatalog's placeholders are taken (the SQL is in the file), and
    # Nessie's optional metadata as null.
    r = commit(http, f"main@{head(http, 'main')}", {"type": "PUT", "key": key,
                                                    "content": {**got, "metadata": None}})
    assert r.status_code == 200, r.text
    entries = http.get(f"{V2}/trees/main/entries", headers=NESSIE,
                       params={"content": "true", "prefixKey": ns}).json()["entries"]
    assert {e["type"]: set(e["content"]) for e in entries} == {
        "ICEBERG_VIEW": VIEW_FIELDS, "ICEBERG_TABLE": TABLE_FIELDS}


def test_merge_answers_in_nessies_fields(http, ns) -> None:
    dev = f"m_{ns}"
    r = http.post(f"{V2}/trees", params={"name": dev, "type": "BRANCH"},
                  json={"type": "BRANCH", "name": "main", "hash": head(http, "main")})
    assert r.status_code == 200, r.text
    r = http.post(f"/iceberg/{dev}/v1/namespaces/{ns}/tables", json=sb.create_table("t"))
    assert r.status_code == 200, r.text
    merge = {"fromRefName": dev, "fromHash": head(http, dev)}
    dry = gzipped(http, "POST", f"{V2}/trees/main@{head(http, 'main')}/history/merge",
                  {**merge, "isDryRun": True})
    assert dry.status_code == 200, dry.text
    assert set(dry.json()) <= MERGE_FIELDS, dry.json()
    assert dry.json()["wasApplied"] is False
    r = gzipped(http, "POST", f"{V2}/trees/main@{head(http, 'main')}/history/merge",
                {**merge, "isDryRun": False})
    assert r.status_code == 200, r.text
    body = r.json()
    assert set(body) <= MERGE_FIELDS and body["wasApplied"] is True, body
    assert {tuple(d["key"]["elements"]) for d in body["details"]} >= {(ns, "t")}
    assert all(set(d) == {"key", "mergeBehavior"} for d in body["details"]), body


def test_commit_meta_as_the_java_client_sends_it(http, ns) -> None:
    """Every commit property the v2 Java client sends is in ``allProperties``
    (NessieCatalog's application-type, app-id, iceberg.operation): kept and
    shown in the log; what Sapwood cannot keep, or does not know, is a 400
    naming it and commits nothing."""
    key = {"elements": [ns, "p"]}
    meta = {"hash": None, "committer": None, "authors": ["root"], "allSignedOffBy": [],
            "message": "create namespace p", "commitTime": None, "authorTime": None,
            "allProperties": {"application-type": ["iceberg"], "app-id": ["local-1"]}}
    before = head(http, "main")
    for bad, named in (({"allProperties": {"k": ["a", "b"]}}, "allProperties"),
                       ({"allSignedOffBy": ["someone"]}, "allSignedOffBy"),
                       ({"commitTime": "2026-01-01T00:00:00Z"}, "commitTime"),
                       ({"bogus": 1}, "bogus")):
        r = http.post(f"{V2}/trees/main@{before}/history/commit", headers=NESSIE, json={
            "commitMeta": {**meta, **bad}, "operations": [
                {"type": "PUT", "key": key, "content": {"type": "NAMESPACE"}}]})
        assert r.status_code == 400, (bad, r.text)
        assert named in r.json()["message"], (bad, r.text)
    assert head(http, "main") == before
    r = gzipped(http, "POST", f"{V2}/trees/main@{before}/history/commit", {
        "commitMeta": meta, "operations": [
            {"type": "PUT", "key": key, "documentation": None,
             "content": {"type": "NAMESPACE", "id": None, "elements": key["elements"],
                         "properties": {}}}]})
    assert r.status_code == 200, r.text
    log = http.get(f"{V2}/trees/main/history", headers=NESSIE,
                   params={"max-records": 1}).json()["logEntries"]
    assert log[0]["commitMeta"]["allProperties"] == {"application-type": ["iceberg"],
                                                     "app-id": ["local-1"]}
    assert log[0]["commitMeta"]["authors"] == ["root"]


def test_every_author_is_kept(http, ns) -> None:
    """A commit by several authors keeps them all, in order, joined by ', '
    (as an import from Nessie keeps them), not only the first; an ``author``
    that is not the first of ``authors`` is a 400 naming both, committing
    nothing."""
    key = {"elements": [ns, "authored"]}
    ops = [{"type": "PUT", "key": key, "content": {"type": "NAMESPACE"}}]
    before = head(http, "main")
    r = http.post(f"{V2}/trees/main@{before}/history/commit", json={
        "commitMeta": {"message": "m", "author": "bob", "authors": ["ana", "bob"]},
        "operations": ops})
    assert r.status_code == 400, r.text
    assert "commitMeta.author ('bob') is not the first of commitMeta.authors" in \
        r.json()["message"]
    assert head(http, "main") == before
    r = http.post(f"{V2}/trees/main@{before}/history/commit", json={
        "commitMeta": {"message": "pair work", "author": "ana", "authors": ["ana", "bob"]},
        "operations": ops})
    assert r.status_code == 200, r.text
    log = http.get(f"{V2}/trees/main/history", params={"max-records": 1}).json()
    assert log["logEntries"][0]["commitMeta"]["authors"] == ["ana, bob"]


def test_the_default_branch_is_dash(http, ns) -> None:
    """``-`` names the default branch in every ref segment (the Java
    client's getDefaultBranch() reads /trees/-)."""
    main = http.get(f"{V2}/trees/main").json()["reference"]
    assert http.get(f"{V2}/trees/-", headers=NESSIE).json()["reference"] == main
    assert http.get(f"{V2}/trees/-@{main['hash']}/contents/{ns}").status_code == 200
    r = http.get(f"{V2}/trees/-/diff/-@{main['hash']}")
    assert r.status_code == 200 and r.json()["diffs"] == [], r.text


def test_repository_config_is_nessies_empty_one(http) -> None:
    r = http.get(f"{V2}/config/repository", params={"type": "GARBAGE_COLLECTOR"},
                 headers=NESSIE)
    assert r.status_code == 200 and r.json() == {"configs": []}, r.text
    r = http.get(f"{V2}/config/repository", params={"type": "NOPE"})
    assert r.status_code == 400 and "'NOPE'" in r.json()["message"], r.text
    r = http.post(f"{V2}/config/repository", json={"configs": []})
    assert r.status_code == 400 and "configuration" in r.json()["message"], r.text


def test_a_full_log_puts_carry_their_content(http, ns) -> None:
    """Nessie's client cannot read a PUT without its content: the whole
    log failed on fetch=ALL."""
    _table(http, ns, "t")
    r = http.get(f"{V2}/trees/main/history", headers=NESSIE,
                 params={"fetch": "ALL", "max-records": 1})
    assert r.status_code == 200, r.text
    (op,) = r.json()["logEntries"][0]["operations"]
    assert op["type"] == "PUT" and op["key"] == {"elements": [ns, "t"]}
    assert set(op["content"]) == TABLE_FIELDS
    assert op["content"] == content(http, "main", f"{ns}.t")


def test_nessies_key_parameters_filter_entries_and_diffs(http, ns) -> None:
    """What Nessie's client sends to narrow a listing narrows it (they were
    ignored, and every key answered)."""
    for name in ("a", "b", "c"):
        _table(http, ns, name)
    start = f"k_{ns}"
    r = http.post(f"{V2}/trees", params={"name": start, "type": "BRANCH"},
                  json={"type": "BRANCH", "name": "main", "hash": head(http, "main")})
    assert r.status_code == 200, r.text
    _table(http, ns, "d")

    def listed(**params: Any) -> list[str]:
        r = http.get(f"{V2}/trees/main/entries", headers=NESSIE, params=params)
        assert r.status_code == 200, r.text
        return [".".join(e["name"]["elements"]) for e in r.json()["entries"]]

    assert listed(**{"prefix-key": ns}) == [ns, f"{ns}.a", f"{ns}.b", f"{ns}.c", f"{ns}.d"]
    assert listed(key=[f"{ns}.a", f"{ns}.c"]) == [f"{ns}.a", f"{ns}.c"]
    assert listed(**{"min-key": f"{ns}.b", "max-key": f"{ns}.c"}) == [f"{ns}.b", f"{ns}.c"]
    assert listed(**{"prefix-key": ns, "max-records": 2}) == [ns, f"{ns}.a"]

    def diffed(**params: Any) -> list[str]:
        r = http.get(f"{V2}/trees/{start}/diff/main", headers=NESSIE, params=params)
        assert r.status_code == 200, r.text
        return [".".join(d["key"]["elements"]) for d in r.json()["diffs"]]

    assert diffed() == [f"{ns}.d"]
    assert diffed(key=f"{ns}.a") == []
    assert diffed(**{"prefix-key": ns}) == [f"{ns}.d"]
    assert diffed(**{"max-key": f"{ns}.c"}) == []
    r = http.get(f"{V2}/trees/{start}/diff/main", params={"filter": "true"})
    assert r.status_code == 400 and "'filter'" in r.json()["message"], r.text


def test_a_log_ends_at_its_limit_hash(http, ns) -> None:
    _table(http, ns, "t")
    _set_property(http, ns, "t", "1")
    _set_property(http, ns, "t", "2")
    log = http.get(f"{V2}/trees/main/history", params={"max-records": 3}).json()["logEntries"]
    hashes = [e["commitMeta"]["hash"] for e in log]
    r = http.get(f"{V2}/trees/main/history", params={"limit-hash": hashes[1]})
    assert r.status_code == 200, r.text
    assert [e["commitMeta"]["hash"] for e in r.json()["logEntries"]] == hashes[:2]
    assert r.json()["hasMore"] is False
    r = http.get(f"{V2}/trees/main/history", params={"limit-hash": "zz"})
    assert r.status_code == 400 and "limit-hash" in r.json()["message"], r.text


def test_reads_refuse_parameters_they_do_not_take(http, ns) -> None:
    for path, params in ((f"{V2}/trees/main/entries", {"prefixkey": ns}),
                         (f"{V2}/trees/main/history", {"untilHash": "abcd1234"}),
                         (f"{V2}/trees/main/contents/{ns}", {"bogus": "1"}),
                         (f"{V2}/trees", {"fetchh": "ALL"})):
        r = http.get(path, params=params)
        assert r.status_code == 400, (path, r.text)
        assert repr(next(iter(params))) in r.json()["message"], r.text
    # Nessie's own parameters on a contents read are taken: for-write asks
    # write on the key (anyone may, without authentication), and there is no
    # documentation to add.
    for params in ({"for-write": "true"}, {"with-doc": "true"}):
        assert http.get(f"{V2}/trees/main/contents/{ns}", params=params).status_code == 200
        r = http.post(f"{V2}/trees/main/contents", params=params,
                      json={"requestedKeys": [{"elements": [ns]}]})
        assert r.status_code == 200, r.text


def test_documentation_is_refused_not_dropped(http, ns) -> None:
    before = head(http, "main")
    r = commit(http, f"main@{before}", {
        "type": "PUT", "key": {"elements": [ns, "doc"]}, "content": {"type": "NAMESPACE"},
        "documentation": {"mimeType": "text/markdown", "text": "hi"}})
    assert r.status_code == 400 and "documentation" in r.json()["message"], r.text
    assert head(http, "main") == before


def test_a_put_names_a_metadata_file_that_is_what_it_says(http, ns) -> None:
    """A client that writes metadata files itself (Iceberg's NessieCatalog)
    commits a value naming one: the file must be inside the warehouse,
    there, valid metadata of the kind named, its current ids the value's."""
    table = _table(http, ns, "t")
    r = http.post(f"{V1}/namespaces/{ns}/views", json=sb.create_view("v", "SELECT 1"))
    assert r.status_code == 200, r.text
    view = content(http, "main", f"{ns}.v")
    before = head(http, "main")
    new = {k: v for k, v in table.items() if k != "id"}
    for key, value, named in (
            ("outside", {**new, "metadataLocation": "file:/tmp/x.json"}, "file:/tmp/x.json"),
            ("ids", {**new, "schemaId": 7}, "schemaId"),
            ("kind", {**{k: v for k, v in view.items() if k != "id"},
                      "metadataLocation": table["metadataLocation"]}, "view"),
            ("viewids", {**{k: v for k, v in view.items() if k != "id"}, "versionId": 9},
             "versionId")):
        r = commit(http, f"main@{before}", {
            "type": "PUT", "key": {"elements": [ns, key]}, "content": value})
        assert r.status_code == 400, (key, r.text)
        assert f"'{ns}.{key}'" in r.json()["message"] and named in r.json()["message"], \
            (key, r.text)
    assert head(http, "main") == before


def test_unchanged_and_delete_as_the_java_client_sends_them(http, ns) -> None:
    _table(http, ns, "t")
    key = {"elements": [ns, "t"]}
    r = commit(http, f"main@{head(http, 'main')}", {"type": "UNCHANGED", "key": key})
    assert r.status_code == 200, r.text
    r = commit(http, f"main@{head(http, 'main')}", {"type": "DELETE", "key": key})
    assert r.status_code == 200, r.text
    assert http.get(f"{V2}/trees/main/contents/{ns}.t").status_code == 404
    r = commit(http, f"main@{head(http, 'main')}", {"type": "DELETE", "key": key})
    assert r.status_code == 409 and r.json()["errorCode"] == "REFERENCE_CONFLICT", r.text
    assert r.json()["errorDetails"]["type"] == "REFERENCE_CONFLICTS"


def test_a_merge_takes_nessies_merge_modes_and_commit_meta(http, ns) -> None:
    dev = f"mm_{ns}"
    r = http.post(f"{V2}/trees", params={"name": dev, "type": "BRANCH"},
                  json={"type": "BRANCH", "name": "main", "hash": head(http, "main")})
    assert r.status_code == 200, r.text
    r = http.post(f"/iceberg/{dev}/v1/namespaces/{ns}/tables", json=sb.create_table("t"))
    assert r.status_code == 200, r.text
    r = gzipped(http, "POST", f"{V2}/trees/main@{head(http, 'main')}/history/merge", {
        "fromRefName": dev, "fromHash": head(http, dev), "isDryRun": False,
        "defaultKeyMergeMode": "NORMAL",
        "commitMeta": {"message": "publish", "authors": ["ana"],
                       "allProperties": {"job": ["nightly"]}}})
    assert r.status_code == 200, r.text
    meta = http.get(f"{V2}/trees/main/history", params={"max-records": 1}).json()[
        "logEntries"][0]["commitMeta"]
    assert (meta["message"], meta["authors"]) == ("publish", ["ana"])
    assert meta["allProperties"] == {"job": ["nightly"]}


def test_an_endpoint_sapwood_lacks_is_not_a_missing_content(http) -> None:
    r = http.get(f"{V2}/trees/main/recent-changes", headers=NESSIE)
    assert r.status_code == 404, r.text
    assert r.json()["errorCode"] == "UNKNOWN" and "No endpoint GET" in r.json()["message"]


def test_a_commit_it_does_not_have_is_a_missing_reference_to_nessies_client(http) -> None:
    missing = "ab" * 32
    r = http.get(f"{V2}/trees/@{missing}/history", headers=NESSIE)
    assert r.status_code == 404 and r.json()["errorCode"] == "REFERENCE_NOT_FOUND", r.text
    r = http.get(f"{V2}/trees/@{missing}/history")
    assert r.status_code == 404 and r.json()["errorCode"] == "CONTENT_NOT_FOUND", r.text


def test_a_retained_log_answers_nessies_fields_only(http, ns) -> None:
    """Past a branch's retention the log says from when; Nessie's LogResponse
    has no such field (its client would fail on it)."""
    ret = f"r_{ns}"
    r = http.post(f"{V2}/trees", params={"name": ret, "type": "BRANCH"},
                  json={"type": "BRANCH", "name": "main", "hash": head(http, "main")})
    assert r.status_code == 200, r.text
    for i in range(3):
        r = commit(http, f"{ret}@{head(http, ret)}", {
            "type": "PUT", "key": {"elements": [f"{ns}_{i}"]}, "content": {"type": "NAMESPACE"}})
        assert r.status_code == 200, r.text
    policy = http.put(f"{V2}/retention", json={"policies": [{"refs": ret, "keepCommits": 2}]})
    assert policy.status_code == 200, policy.text
    try:
        ours = http.get(f"{V2}/trees/{ret}/history").json()
        assert ours["historyExpiredBefore"] and len(ours["logEntries"]) == 2
        theirs = http.get(f"{V2}/trees/{ret}/history", headers=NESSIE).json()
        assert set(theirs) == {"hasMore", "token", "logEntries"}, theirs
        assert len(theirs["logEntries"]) == 2
    finally:
        assert http.put(f"{V2}/retention", json={"policies": []}).status_code == 200


def test_gzip_metadata_a_nessie_client_wrote_serves_through_rest(http, ns) -> None:
    """Iceberg's NessieCatalog writes a view's metadata gzip-compressed
    (``*.gz.metadata.json``): committed through the versioning API, the
    file is checked, and the Iceberg REST API serves that view (and a table
    written so) on the same ref."""
    r = http.post(f"{V1}/namespaces/{ns}/views", json=sb.create_view("v", "SELECT 42"))
    assert r.status_code == 200, r.text
    table = _table(http, ns, "t")
    view = content(http, "main", f"{ns}.v")
    ops = []
    for name, value in (("gv", view), ("gt", table)):
        plain = Path(value["metadataLocation"].removeprefix("file://"))
        packed = plain.with_name(f"00009-{uuid.uuid4()}.gz.metadata.json")
        packed.write_bytes(gzip.compress(plain.read_bytes()))
        ops.append({"type": "PUT", "key": {"elements": [ns, name]},
                    "content": {**{k: v for k, v in value.items() if k != "id"},
                                "metadataLocation": packed.as_uri()}})
    r = commit(http, f"main@{head(http, 'main')}", *ops)
    assert r.status_code == 200, r.text
    got = http.get(f"{V1}/namespaces/{ns}/views/gv")
    assert got.status_code == 200, got.text
    assert sb.current_sql(got.json()["metadata"]) == "SELECT 42"
    assert got.json()["metadata-location"].endswith(".gz.metadata.json")
    got = http.get(f"{V1}/namespaces/{ns}/tables/gt")
    assert got.status_code == 200, got.text
    assert got.json()["metadata-location"].endswith(".gz.metadata.json")


def test_materialized_views_are_left_out_for_nessies_client(server, http, ns) -> None:
    """Nessie's model has no MATERIALIZED_VIEW: a listing holding one failed
    whole ("No content type registered"). To a Nessie client, listings, diffs
    and logs leave them out, and reading one is a 400 saying where to."""
    from tests.api.test_mviews_http import base_table, create

    base_table(server, ns)
    before = head(http, "main")
    create(http, ns)
    mv = f"{ns}.mv"

    def names(headers: dict[str, str]) -> set[str]:
        r = http.get(f"{V2}/trees/main/entries", headers=headers, params={"prefixKey": ns})
        assert r.status_code == 200, r.text
        return {".".join(e["name"]["elements"]) for e in r.json()["entries"]}

    assert names({}) == {f"{ns}.t", mv}
    assert names(NESSIE) == {f"{ns}.t"}
    r = http.get(f"{V2}/trees/main/contents/{mv}", headers=NESSIE)
    assert r.status_code == 400 and "MATERIALIZED_VIEW" in r.json()["message"], r.text
    r = http.post(f"{V2}/trees/main/contents", headers=NESSIE,
                  json={"requestedKeys": [{"elements": [ns, "mv"]}]})
    assert r.status_code == 400, r.text
    assert http.get(f"{V2}/trees/main/contents/{mv}").status_code == 200
    diff = http.get(f"{V2}/trees/main@{before}/diff/main", headers=NESSIE).json()["diffs"]
    assert mv not in {".".join(d["key"]["elements"]) for d in diff}
    log = http.get(f"{V2}/trees/main/history", headers=NESSIE,
                   params={"fetch": "ALL", "max-records": 1}).json()["logEntries"]
    assert all(op["key"]["elements"] != [ns, "mv"] for op in log[0]["operations"])
    ours = http.get(f"{V2}/trees/main/history",
                    params={"fetch": "ALL", "max-records": 1}).json()["logEntries"]
    assert any(op["key"]["elements"] == [ns, "mv"] for op in ours[0]["operations"])
