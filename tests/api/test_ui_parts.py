"""The UI's pure parts, case by case (the pages that use them are tested over
HTTP and in Chromium): the side-by-side SQL diff, what a diff says changed
in a key, and how instants and hashes are shown."""

from __future__ import annotations

from api.ui.changes import view_changed, what_changed
from api.ui.format import instant, short, yesno
from api.ui.sqldiff import compare


def version(n: int, sql: dict[str, str], ns: list[str] | None = None) -> dict[str, object]:
    return {"versionId": n, "representations": sql, "defaultNamespace": ns or ["db"]}


def test_the_side_by_side_diff() -> None:
    vs = [version(1, {"spark": "SELECT a\nFROM t\nWHERE x < 1"}),
          version(2, {"spark": "SELECT a, b\nFROM t", "trino": "SELECT 1"}),
          version(3, {"spark": "SELECT a\nFROM t\nWHERE x < 1"}, ["other"])]
    d = compare(vs, 1, 2)
    assert d is not None and not d.identical
    # Line 1 changed (the new words marked), line 3 removed; SQL escaped; no links.
    assert '<tr class="changed"><td class="no">1</td><td class="sql">SELECT a</td>' in d.html
    assert '<td class="sql">SELECT a<ins>, b</ins></td>' in d.html
    assert '<tr class="removed"><td class="no">3</td><td class="sql"><del>WHERE x &lt; 1</del>' \
        in d.html
    assert "<caption>version 1 has no SQL in this dialect</caption>" in d.html  # trino
    assert "<a " not in d.html
    # The same SQL, another default namespace: not identical, and it says so.
    other = compare(vs, 1, 3)
    assert other is not None and not other.identical and "<table" not in other.html
    assert "Default namespace: <code>db</code> → <code>other</code>" in other.html
    same = compare(vs, 2, 2)
    assert same is not None and same.identical and same.html == ""
    assert compare(vs, 1, 9) is None


def test_what_changed_in_a_key() -> None:
    table = {"id": "t1", "type": "ICEBERG_TABLE", "snapshotId": 5, "schemaId": 0, "specId": 0}
    assert what_changed(None, table) == "created at snapshot 5"
    assert what_changed(None, {**table, "snapshotId": -1}) == "created, no snapshot yet"
    assert what_changed(None, {"type": "ICEBERG_VIEW", "versionId": 1}) == \
        "created at version 1"
    assert what_changed(None, {"type": "NAMESPACE"}) == "created"
    assert what_changed(table, None) == "dropped"
    assert what_changed(table, {**table, "snapshotId": 6, "schemaId": 1}) == \
        "snapshot 5 → 6; schema 0 → 1"
    assert what_changed(table, {**table, "id": "t2"}) == \
        "dropped and created again: another table under this name"
    assert what_changed({**table, "snapshotId": -1}, table) == "snapshot none → 5"
    assert what_changed(table, {**table, "metadataLocation": "x"}).startswith("metadata only")
    view = {"id": "v", "type": "ICEBERG_VIEW", "versionId": 1}
    assert what_changed(table, {**view, "id": "t1"}) == "was a table, now a view"
    ns = {"id": "n", "type": "NAMESPACE", "properties": {"a": "1", "b": "2"}}
    assert what_changed(ns, {**ns, "properties": {"a": "9", "c": "3"}}) == \
        "properties added c; changed a; removed b"


def test_what_changed_in_a_view_definition() -> None:
    def meta(v: int, sql: dict[str, str], props: dict[str, str]) -> dict[str, object]:
        return {"current-version-id": v, "properties": props, "versions": [
            {"version-id": v, "schema-id": 0, "default-namespace": ["db"],
             "representations": [{"dialect": d, "sql": s} for d, s in sql.items()]}]}

    a = meta(3, {"spark": "SELECT 1", "hive": "SELECT 1"}, {"k": "v"})
    b = meta(3, {"spark": "SELECT 2", "trino": "SELECT 1"}, {"k": "v"})
    assert view_changed(a, b) == "SQL changed (spark); SQL added (trino); SQL removed (hive)"
    assert view_changed(a, meta(4, {"spark": "SELECT 1", "hive": "SELECT 1"}, {})) == \
        "version 3 → 4; properties removed k"
    assert view_changed(a, a) == ""


def test_instants_booleans_and_hashes() -> None:
    assert instant(1795608239431) == \
        '<time datetime="2026-11-25T12:03:59.431Z">2026-11-25T12:03:59.431Z</time>'
    assert instant(None) == "" and instant("soon") == "soon"
    assert [yesno(v) for v in (True, False, "true", None)] == ["yes", "no", "yes", "no"]
    h = "ab" * 32
    assert short(h) == (f'<code class="hash" title="{h}">{h[:12]}'
                        f'<span class="rest">{h[12:]}</span></code>')
    assert short(f"@{h}") == (f'<code class="hash" title="@{h}">@{h[:12]}'
                              f'<span class="rest">{h[12:]}</span></code>')
    assert short("main") == "<code>main</code>"
    assert short("<b>") == "<code>&lt;b&gt;</code>"
