"""How the UI shows values (issue 44), case by case; the pages that use them
are tested over HTTP (tests/api/test_ui_wayfinding.py) and in Chromium:
the API's commit times cut to the millisecond, counts, sizes, words kept
whole, SQL keywords by sqlglot, and the row-count chart."""

from __future__ import annotations

import re

from api.ui.format import instant
from api.ui.sql import highlight


def test_an_api_instant_is_cut_to_the_millisecond_and_kept_whole() -> None:
    whole = "2026-11-27T20:25:39.679801Z"
    assert instant(whole) == (f'<time datetime="{whole}" title="{whole}">'
                              "2026-11-27T20:25:39.679Z</time>")
    # Already to the millisecond (or the second, or in another zone): no title;
    # the API's spelling stays in ``datetime``.
    assert instant("2026-11-27T20:25:39Z") == \
        '<time datetime="2026-11-27T20:25:39Z">2026-11-27T20:25:39.000Z</time>'
    assert instant("2026-11-27T21:25:39.679+01:00") == \
        '<time datetime="2026-11-27T21:25:39.679+01:00">2026-11-27T20:25:39.679Z</time>'
    # Not an instant: shown as it came, escaped.
    assert instant("2026-11-27T20:25:39") == "2026-11-27T20:25:39"
    assert instant("<soon>") == "&lt;soon&gt;"


def test_counts_sizes_and_words() -> None:
    from api.ui.format import count, size, words

    assert [count(v) for v in ("4005", 12, None, "n/a")] == ["4,005", "12", "", "n/a"]
    assert [size(v) for v in ("939", "4875", 1024 ** 2, 10 ** 13, 10 ** 16, None)] == [
        "939 B", "4.8 KiB", "1.0 MiB", "9.1 TiB", "9094.9 TiB", ""]
    # A word a browser could break is kept whole; letters and digits need nothing.
    assert words("local-1764 app  <b>") == (
        '<span class="word">local-1764</span> app  <span class="word">&lt;b&gt;</span>')
    assert words("4000") == "4000" and words(None) == ""


def _marked(sql: str, dialect: str = "spark") -> list[str]:
    out = highlight(sql, dialect)
    assert re.sub(r"<[^>]+>", "", out).replace("&gt;", ">").replace("&lt;", "<").replace(
        "&#x27;", "'") == sql
    return [re.sub(r"\s+", " ", k) for k in re.findall(r'<span class="kw">(.*?)</span>', out,
                                                       re.S)]


def test_sql_keywords_are_sqlglots() -> None:
    assert _marked("SELECT a FROM t GROUP\n  BY a ORDER BY a") == [
        "SELECT", "FROM", "GROUP BY", "ORDER BY"]
    assert _marked("SELECT a FROM t x FULL OUTER JOIN u USING (a) LEFT SEMI JOIN v ON true") \
        == ["SELECT", "FROM", "FULL", "OUTER", "JOIN", "USING", "LEFT", "SEMI", "JOIN", "ON",
            "true"]
    # A keyword's spelling as a name is a name; a function is a name.
    assert _marked("SELECT date, last, count(*) FROM t ORDER BY 1 NULLS LAST") == [
        "SELECT", "FROM", "ORDER BY", "NULLS", "LAST"]
    # What does not parse is marked from its tokens alone.
    assert _marked("SELECT a FROM (((") == ["SELECT", "FROM"]
    assert highlight("SELECT 'it''s'", "no such dialect") == "SELECT &#x27;it&#x27;&#x27;s&#x27;"


def test_the_row_chart() -> None:
    from api.ui.chart import MAX_POINTS, points, rows_chart

    snaps = [{"snapshot-id": 2, "timestamp-ms": 1795608239500, "summary": {"total-records": "9"}},
             {"snapshot-id": 1, "timestamp-ms": 1795608239431, "summary": {"total-records": "4"}},
             {"snapshot-id": 3, "timestamp-ms": 1795608239600, "summary": {"operation": "x"}},
             {"snapshot-id": 4, "timestamp-ms": 1795608239700,
              "summary": {"total-records": "-1"}}]
    pts = points(snaps)
    assert [(p.snapshot, p.rows) for p in pts] == [(1, 4), (2, 9)]  # oldest first, counts only
    svg = rows_chart(pts)
    assert svg.startswith('<svg class="chart" id="rows-chart" role="img"')
    assert re.findall(r'data-rows="(\d+)"', svg) == ["4", "9"]
    assert "<title>snapshot 1 · 2026-11-25T12:03:59.431Z · 4 rows</title>" in svg
    ys = [float(y) for y in re.findall(r'cy="([\d.]+)"', svg)]
    assert ys[0] > ys[1]  # more rows, higher up
    assert "<script" not in svg and "href" not in svg
    assert rows_chart([]) == "" and "<polyline" not in rows_chart(pts[:1])
    many = [{"snapshot-id": i, "timestamp-ms": i, "summary": {"total-records": str(i)}}
            for i in range(MAX_POINTS + 5)]
    assert len(points(many)) == MAX_POINTS and points(many)[0].snapshot == 5
