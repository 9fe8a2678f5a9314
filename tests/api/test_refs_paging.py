"""More than 1,000 references (issue 28): the versioning API pages them by
default (250 a page, hasMore and token) and filters by name prefix, and the
web UI's references page pages and filters too; nothing is cut silently."""

from __future__ import annotations

import re
from pathlib import Path

import httpx

from store import Store
from tests.server import serving

N = 1050


def test_every_reference_is_reachable_by_paging_in_the_api_and_the_ui(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'sapwood.db'}"
    store = Store(url)
    for i in range(N):
        store.create_reference(f"{'team' if i % 3 else 'etl'}/b{i:04}")
    store.close()
    want = sorted(["main", *(f"{'team' if i % 3 else 'etl'}/b{i:04}" for i in range(N))])
    with serving(url, tmp_path) as server:
        http = httpx.Client(base_url=server.base, timeout=30)
        first = http.get("/api/v2/trees").json()
        assert len(first["references"]) == 250 and first["hasMore"] and first["token"]
        names, token = [], None
        while True:
            page = http.get("/api/v2/trees", params={"pageToken": token} if token else {}).json()
            names += [r["name"] for r in page["references"]]
            if not page["hasMore"]:
                break
            token = page["token"]
        assert names == want
        etl = http.get("/api/v2/trees", params={"prefix": "etl/", "maxRecords": 1000}).json()
        assert [r["name"] for r in etl["references"]] == [n for n in want if n.startswith("etl/")]
        assert not etl["hasMore"]
        full = http.get("/api/v2/trees", params={"fetch": "ALL", "maxRecords": 2}).json()
        assert full["references"][0]["metadata"]["commitMetaOfHEAD"]["hash"]
        # The UI: 100 a page, "Next page" to the end, and the filter.
        seen, path = [], "/ui"
        while path:
            html = http.get(path).text
            rows = re.findall(r'<td><a href="/ui/tree/[^"]+">([^<]+)</a></td>', html)
            assert len(rows) <= 100
            seen += rows
            nxt = re.search(r'<a id="next" href="([^"]+)"', html)
            path = nxt.group(1).replace("&amp;", "&") if nxt else ""
        assert seen == want
        html = http.get("/ui", params={"prefix": "etl/b000"}).text
        assert re.findall(r'<td><a href="/ui/tree/[^"]+">([^<]+)</a></td>', html) == [
            "etl/b0000", "etl/b0003", "etl/b0006", "etl/b0009"]
