"""Views the catalog understands, over HTTP: each version written through the
Iceberg REST API is analysed at the branch head (dependencies with content
ids, the frozen expanded text, column lineage through nested views), the
answers are versioned (a pinned ref answers as of then), and SQL sqlglot
cannot read is stored, marked unanalysed."""

from __future__ import annotations

import time
from typing import Any

from tests.api import spark_bodies as sb
from tests.api.test_rest_http import V1


def view_body(name: str, sql: str, ns: str, dialect: str = "spark") -> dict[str, Any]:
    body = sb.create_view(name, sql, dialects=(dialect,))
    body["view-version"]["default-namespace"] = [ns]
    return body


def make(http, ns: str, name: str, sql: str, dialect: str = "spark") -> dict[str, Any]:
    r = http.post(f"{V1}/namespaces/{ns}/views", json=view_body(name, sql, ns, dialect))
    assert r.status_code == 200, r.text
    return r.json()["metadata"]


def content(http, ns: str, name: str, ref: str = "main") -> dict[str, Any]:
    r = http.get(f"/api/v2/trees/{ref}/contents/{ns}.{name}")
    assert r.status_code == 200, r.text
    return r.json()["content"]


def test_a_view_records_what_it_reads_and_its_frozen_text(http, ns) -> None:
    assert http.post(f"{V1}/namespaces/{ns}/tables", json=sb.create_table("t")).status_code == 200
    table_id = content(http, ns, "t")["id"]
    make(http, ns, "v1", "SELECT * FROM t")
    c = content(http, ns, "v1")
    (a,) = c["analysis"]
    assert a["status"] == "ok" and a["dialect"] == "spark"
    assert a["dependencies"] == [{"key": [ns, "t"], "contentId": table_id,
                                  "type": "ICEBERG_TABLE",
                                  "columns": {"id": "long", "name": "string"},
                                  "fieldIds": {"id": 1, "name": 2}}]
    hive = c["extensions"]["hive"]
    assert hive["original-text"] == "SELECT * FROM t"
    assert hive["expanded-text"] == f"SELECT t.id AS id, t.name AS name FROM {ns}.t AS t"
    assert [f["name"] for f in a["fieldOrigins"]] == ["id", "name"]


def test_dependencies_and_lineage_through_nested_views(http, ns) -> None:
    http.post(f"{V1}/namespaces/{ns}/tables", json=sb.create_table("base"))
    make(http, ns, "l1", "SELECT id, upper(name) AS name FROM base")
    make(http, ns, "l2", "SELECT id, name FROM l1 WHERE id > 0")
    make(http, ns, "l3", f"SELECT x.id, x.name FROM sapwood.{ns}.l2 AS x")
    deps = http.get(f"/api/v2/trees/main/views/{ns}.l3/dependencies").json()
    assert [(".".join(d["key"]), d["depth"], d["exists"]) for d in deps["dependencies"]] == [
        (f"{ns}.l2", 1, True), (f"{ns}.l1", 2, True), (f"{ns}.base", 3, True)]
    one = http.get(f"/api/v2/trees/main/views/{ns}.l3/dependencies?depth=1").json()
    assert len(one["dependencies"]) == 1
    lineage = http.get(f"/api/v2/trees/main/views/{ns}.l3/lineage").json()["columns"]
    assert lineage == [
        {"name": "id", "derived": False, "origins": [{"table": [ns, "base"], "column": "id"}]},
        {"name": "name", "derived": True,
         "origins": [{"table": [ns, "base"], "column": "name"}]}]


def test_answers_are_as_of_the_ref_asked(http, ns) -> None:
    http.post(f"{V1}/namespaces/{ns}/tables", json=sb.create_table("a"))
    http.post(f"{V1}/namespaces/{ns}/tables", json=sb.create_table("b"))
    meta = make(http, ns, "v", "SELECT id, name FROM a")
    time.sleep(0.05)
    before = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()) + \
        f".{int(time.time() * 1000) % 1000:03d}Z"
    time.sleep(0.05)
    body = sb.replace_view(meta["view-uuid"], "SELECT id, name FROM b")
    body["updates"][2]["view-version"]["default-namespace"] = [ns]
    assert http.post(f"{V1}/namespaces/{ns}/views/v", json=body).status_code == 200
    now = http.get(f"/api/v2/trees/main/views/{ns}.v/dependencies").json()
    then = http.get(f"/api/v2/trees/main*{before}/views/{ns}.v/dependencies").json()
    assert [d["key"] for d in now["dependencies"]] == [[ns, "b"]]
    assert [d["key"] for d in then["dependencies"]] == [[ns, "a"]]


def test_sql_sqlglot_cannot_read_is_kept_unanalysed(http, ns) -> None:
    make(http, ns, "odd", "SELECT FROM WHERE )")
    (a,) = content(http, ns, "odd")["analysis"]
    assert a["status"] == "unanalysed" and "cannot parse" in a["reasons"][0]
    make(http, ns, "alien", "SELECT 1 AS x", dialect="klingon")
    (b,) = content(http, ns, "alien")["analysis"]
    assert b["status"] == "unanalysed" and "klingon" in b["reasons"][0]
    deps = http.get(f"/api/v2/trees/main/views/{ns}.odd/dependencies").json()
    assert deps["status"] == "unanalysed" and deps["dependencies"] == []


def test_a_missing_table_is_named_and_the_view_is_invalid(http, ns) -> None:
    make(http, ns, "broken", "SELECT id FROM nowhere")
    (a,) = content(http, ns, "broken")["analysis"]
    assert a["status"] == "invalid" and a["unresolved"] == [f"{ns}.nowhere"]
    assert a["reasons"] == [f"{ns}.nowhere does not exist"]


def test_not_a_view_is_404(http, ns) -> None:
    http.post(f"{V1}/namespaces/{ns}/tables", json=sb.create_table("tt"))
    r = http.get(f"/api/v2/trees/main/views/{ns}.tt/dependencies")
    assert r.status_code == 404 and r.json()["errorCode"] == "CONTENT_NOT_FOUND"
    assert http.get(f"/api/v2/trees/main/views/{ns}.none/lineage").status_code == 404


def test_a_replace_that_would_make_a_cycle_is_refused(http, ns) -> None:
    http.post(f"{V1}/namespaces/{ns}/tables", json=sb.create_table("t"))
    a = make(http, ns, "a", "SELECT id, name FROM t")
    make(http, ns, "b", "SELECT id, name FROM a")
    head = http.get("/api/v2/trees/main").json()["reference"]["hash"]
    body = sb.replace_view(a["view-uuid"], "SELECT id, name FROM b")
    body["updates"][2]["view-version"]["default-namespace"] = [ns]
    r = http.post(f"{V1}/namespaces/{ns}/views/a", json=body)
    assert r.status_code == 400, r.text
    assert r.json()["error"]["message"] == (
        f"View {ns}.a would read itself: {ns}.a → {ns}.b → {ns}.a")
    assert http.get("/api/v2/trees/main").json()["reference"]["hash"] == head
    body = sb.replace_view(a["view-uuid"], "SELECT id, name FROM a")
    body["updates"][2]["view-version"]["default-namespace"] = [ns]
    r = http.post(f"{V1}/namespaces/{ns}/views/a", json=body)
    assert r.status_code == 400 and f"{ns}.a → {ns}.a" in r.text


def test_views_put_by_versioning_commits_are_analysed_too(http, ns) -> None:
    http.post(f"{V1}/namespaces/{ns}/tables", json=sb.create_table("t"))
    meta_loc = http.post(f"{V1}/namespaces/{ns}/views",
                         json=view_body("src", "SELECT id FROM t", ns)).json()["metadata-location"]
    head = http.get("/api/v2/trees/main").json()["reference"]["hash"]
    elsewhere = {"type": "PUT", "key": {"elements": [ns, "elsewhere"]},
                 "content": {"type": "ICEBERG_VIEW", "metadataLocation": "/etc/passwd",
                             "versionId": 1}}
    ops = [{"type": "PUT", "key": {"elements": [ns, "copy"]},
            "content": {"type": "ICEBERG_VIEW", "metadataLocation": meta_loc, "versionId": 1}}]
    # A file outside the warehouse is refused before anything is read of it
    # (a commit's files are checked: tests/api/test_nessie_client_http.py).
    r = http.post(f"/api/v2/trees/main@{head}/history/commit",
                  json={"commitMeta": {"message": "copy"}, "operations": [*ops, elsewhere]})
    assert r.status_code == 400 and "outside the warehouse" in r.text, r.text
    assert "root:" not in r.text
    r = http.post(f"/api/v2/trees/main@{head}/history/commit",
                  json={"commitMeta": {"message": "copy"}, "operations": ops})
    assert r.status_code == 200, r.text
    (a,) = content(http, ns, "copy")["analysis"]
    assert a["status"] == "ok" and a["dependencies"][0]["key"] == [ns, "t"]


def test_dependents_at_any_ref(http, ns) -> None:
    http.post(f"{V1}/namespaces/{ns}/tables", json=sb.create_table("facts"))
    make(http, ns, "d1", "SELECT id, name FROM facts")
    make(http, ns, "d2", "SELECT id, name FROM d1")
    other = make(http, ns, "d3", "SELECT id, name FROM facts")
    time.sleep(0.05)
    before = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()) + \
        f".{int(time.time() * 1000) % 1000:03d}Z"
    time.sleep(0.05)
    # d3 moves away from facts: it is no longer a dependent, except as of before.
    http.post(f"{V1}/namespaces/{ns}/tables", json=sb.create_table("other"))
    body = sb.replace_view(other["view-uuid"], "SELECT id, name FROM other")
    body["updates"][2]["view-version"]["default-namespace"] = [ns]
    assert http.post(f"{V1}/namespaces/{ns}/views/d3", json=body).status_code == 200
    now = http.get(f"/api/v2/trees/main/contents/{ns}.facts/dependents").json()
    assert [(d["key"][-1], d["depth"], d["via"][-1]) for d in now["dependents"]] == [
        ("d1", 1, "facts"), ("d2", 2, "d1")]
    then = http.get(f"/api/v2/trees/main*{before}/contents/{ns}.facts/dependents").json()
    assert [d["key"][-1] for d in then["dependents"]] == ["d1", "d3", "d2"]
    # A name that does not exist (or no longer does) answers too: nothing reads it.
    nothing = http.get(f"/api/v2/trees/main/contents/{ns}.nothing/dependents")
    assert nothing.status_code == 200, nothing.text
    assert nothing.json()["exists"] is False and nothing.json()["dependents"] == []


def test_views_that_no_longer_hold_are_listed_with_reasons(http, ns) -> None:
    http.post(f"{V1}/namespaces/{ns}/tables", json=sb.create_table("gone"))
    http.post(f"{V1}/namespaces/{ns}/tables", json=sb.create_table("kept"))
    make(http, ns, "reads_gone", "SELECT id, name FROM gone")
    make(http, ns, "reads_kept", "SELECT id, name FROM kept")
    make(http, ns, "unparsable", "SELECT FROM WHERE )")
    before = http.get("/api/v2/trees/main").json()["reference"]["hash"]
    assert http.delete(f"{V1}/namespaces/{ns}/tables/gone").status_code == 204

    def by_key(ref: str, status: str) -> dict[str, dict]:
        r = http.get(f"/api/v2/trees/{ref}/views?status={status}")
        assert r.status_code == 200, r.text
        return {v["key"][-1]: v for v in r.json()["views"] if v["key"][0] == ns}

    invalid = by_key("main", "invalid")
    assert list(invalid) == ["reads_gone"]
    assert invalid["reads_gone"]["reasons"] == [f"table {ns}.gone dropped"]
    assert list(by_key("main", "unanalysed")) == ["unparsable"]
    assert "reads_kept" in by_key("main", "ok")
    assert by_key(f"@{before}", "invalid") == {}  # as of before the drop, all held
    assert http.get("/api/v2/trees/main/views?status=bogus").status_code == 400


def test_the_audit_shows_what_each_version_read(http, ns) -> None:
    http.post(f"{V1}/namespaces/{ns}/tables", json=sb.create_table("first"))
    http.post(f"{V1}/namespaces/{ns}/tables", json=sb.create_table("second"))
    meta = make(http, ns, "audited", "SELECT id, name FROM first")
    body = sb.replace_view(meta["view-uuid"], "SELECT id, name FROM second")
    body["updates"][2]["view-version"]["default-namespace"] = [ns]
    assert http.post(f"{V1}/namespaces/{ns}/views/audited", json=body).status_code == 200
    versions = http.get(f"/api/v2/trees/main/views/{ns}.audited/history").json()["versions"]
    assert [[d["key"][-1] for d in v["analysis"][0]["dependencies"]] for v in versions] == [
        ["first"], ["second"]]
    assert all(v["analysis"][0]["status"] == "ok" for v in versions)


def test_a_representation_transpiled_by_sqlglot_is_a_new_version(http, ns) -> None:
    http.post(f"{V1}/namespaces/{ns}/tables", json=sb.create_table("t"))
    make(http, ns, "tv", "SELECT id, concat(name, '!') AS name FROM t")
    head = http.get("/api/v2/trees/main").json()["reference"]["hash"]
    r = http.post(f"/api/v2/trees/main/views/{ns}.tv/representations?from=spark&to=duckdb")
    assert r.status_code == 200, r.text
    meta = r.json()["metadata"]
    assert meta["current-version-id"] == 2
    assert sb.current_sql(meta, "spark") == "SELECT id, concat(name, '!') AS name FROM t"
    assert "||" in sb.current_sql(meta, "duckdb") or "CONCAT" in sb.current_sql(meta, "duckdb")
    cur = next(v for v in meta["versions"] if v["version-id"] == 2)
    assert cur["summary"]["sapwood.generated-representation"].startswith(
        "duckdb transpiled from spark by sqlglot")
    log = http.get("/api/v2/trees/main/history?maxRecords=1").json()["logEntries"]
    assert log[0]["commitMeta"]["message"] == f"transpile view {ns}.tv from spark to duckdb"
    assert log[0]["parentCommitHash"] == head
    assert [a["dialect"] for a in content(http, ns, "tv")["analysis"]] == ["spark", "duckdb"]
    again = http.post(f"/api/v2/trees/main/views/{ns}.tv/representations?from=spark&to=duckdb")
    assert again.status_code == 409
    head = http.get("/api/v2/trees/main").json()["reference"]["hash"]
    for query, words in (("from=spark&to=klingon", "dialect 'klingon'"),
                         ("from=trino&to=duckdb", "no trino representation"),
                         ("from=spark&to=", "dialect ''"), ("from=spark&to=%20", "dialect ' '"),
                         ("from=&to=trino", "dialect ''")):
        bad = http.post(f"/api/v2/trees/main/views/{ns}.tv/representations?{query}")
        assert bad.status_code == 400, (query, bad.text)
        assert words in bad.json()["message"], bad.text
    # Nothing was written by the refused requests.
    assert http.get("/api/v2/trees/main").json()["reference"]["hash"] == head
    missing = http.post(f"/api/v2/trees/main/views/{ns}.nope/representations?from=spark&to=trino")
    assert missing.status_code == 404


def test_recompile_expands_again_against_what_the_bases_are_now(server, http, ns) -> None:
    from pyiceberg.types import LongType

    http.post(f"{V1}/namespaces/{ns}/tables", json=sb.create_table("t"))
    make(http, ns, "star", "SELECT * FROM t")
    frozen = content(http, ns, "star")["extensions"]["hive"]["expanded-text"]
    table = server.catalog().load_table(f"{ns}.t")
    table.update_schema().add_column("extra", LongType()).commit()
    # The frozen definition still names the two columns it was created with.
    assert content(http, ns, "star")["extensions"]["hive"]["expanded-text"] == frozen
    r = http.post(f"/api/v2/trees/main/views/{ns}.star/recompile")
    assert r.status_code == 200, r.text
    assert r.json()["recompiled"] is True and r.json()["columns"] == ["id", "name", "extra"]
    loaded = http.get(f"{V1}/namespaces/{ns}/views/star").json()["metadata"]
    schema = next(s for s in loaded["schemas"] if s["schema-id"] == next(
        v for v in loaded["versions"]
        if v["version-id"] == loaded["current-version-id"])["schema-id"])
    assert [(f["name"], f["type"]) for f in schema["fields"]] == [
        ("id", "long"), ("name", "string"), ("extra", "long")]
    assert "t.extra AS extra" in content(http, ns, "star")["extensions"]["hive"]["expanded-text"]
    again = http.post(f"/api/v2/trees/main/views/{ns}.star/recompile").json()
    assert again["recompiled"] is False
    http.delete(f"{V1}/namespaces/{ns}/tables/t")
    broken = http.post(f"/api/v2/trees/main/views/{ns}.star/recompile")
    assert broken.status_code == 409 and "does not exist" in broken.json()["message"]


def test_a_merge_dry_run_lists_the_views_it_would_break(server, http, ns) -> None:
    http.post(f"{V1}/namespaces/{ns}/tables", json=sb.create_table("facts"))
    http.post(f"{V1}/namespaces/{ns}/tables", json=sb.create_table("dims"))
    make(http, ns, "on_facts", "SELECT id, name FROM facts")
    make(http, ns, "on_dims", "SELECT id, name FROM dims")
    make(http, ns, "on_dims_id", "SELECT id FROM dims")
    branch = f"brk_{ns[-6:]}"
    main = http.get("/api/v2/trees/main").json()["reference"]["hash"]
    assert http.post(f"/api/v2/trees?name={branch}",
                     json={"type": "BRANCH", "name": "main", "hash": main}).status_code == 200
    assert http.delete(f"/iceberg/{branch}/v1/namespaces/{ns}/tables/facts").status_code == 204
    server.catalog(branch).load_table(f"{ns}.dims").update_schema().delete_column(
        "name").commit()
    r = http.post(f"/api/v2/trees/main@{main}/history/merge",
                  json={"fromRefName": branch, "dryRun": True})
    assert r.status_code == 200, r.text
    broken = {v["key"][-1]: v["reasons"] for v in r.json()["invalidatedViews"]}
    assert broken == {"on_facts": [f"table {ns}.facts dropped"],
                      "on_dims": [f"column name no longer exists in {ns}.dims"]}
    assert http.get("/api/v2/trees/main").json()["reference"]["hash"] == main


def test_a_merge_that_would_close_a_cycle_is_refused(http, ns) -> None:
    http.post(f"{V1}/namespaces/{ns}/tables", json=sb.create_table("t"))
    a = make(http, ns, "a", "SELECT id, name FROM t")
    b = make(http, ns, "b", "SELECT id, name FROM t")
    main = http.get("/api/v2/trees/main").json()["reference"]["hash"]
    x, y = f"x_{ns[-5:]}", f"y_{ns[-5:]}"
    for name in (x, y):
        http.post(f"/api/v2/trees?name={name}", json={"type": "BRANCH", "name": "main",
                                                      "hash": main})

    def repoint(branch: str, view: str, uuid: str, reads: str) -> None:
        body = sb.replace_view(uuid, f"SELECT id, name FROM {reads}")
        body["updates"][2]["view-version"]["default-namespace"] = [ns]
        r = http.post(f"/iceberg/{branch}/v1/namespaces/{ns}/views/{view}", json=body)
        assert r.status_code == 200, r.text

    repoint(x, "a", a["view-uuid"], "b")  # on x: a reads b
    repoint(y, "b", b["view-uuid"], "a")  # on y: b reads a
    r = http.post(f"/api/v2/trees/main@{main}/history/merge", json={"fromRefName": x})
    assert r.status_code == 200, r.text
    head = http.get("/api/v2/trees/main").json()["reference"]["hash"]
    for dry in (True, False):
        r = http.post(f"/api/v2/trees/main@{head}/history/merge",
                      json={"fromRefName": y, "dryRun": dry})
        assert r.status_code == 409, r.text
        assert f"{ns}.b → {ns}.a → {ns}.b" in r.json()["message"], r.json()
    assert http.get("/api/v2/trees/main").json()["reference"]["hash"] == head
