"""More than 1,000 references (issue 28): the versioning API pages them by
default (250 a page, hasMore and token) and filters by name prefix, and the
web UI's references page pages and filters too; nothing is cut silently.
The UI's browser pages a namespace's objects the same way."""

from __future__ import annotations

import re
from pathlib import Path

from core.commits import CommitMeta, Put
from core.content import IcebergTable, Namespace
from core.keys import ContentKey
from store import Store
from tests.http import http_client
from tests.server import serving

N = 1050


def test_every_reference_is_reachable_by_paging_in_the_api_and_the_ui(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'sapwood.db'}"
    store = Store(url)
    for i in range(N):
        store.create_reference(f"{'team' if i % 3 else 'etl'}/b{i:04}")
    store.commit("main", [Put(ContentKey.of("big"), Namespace())], CommitMeta("ns"))
    store.commit("main", [Put(ContentKey.of("big", f"t{j:03}"),
                              IcebergTable(metadata_location=f"s3://w/t{j}.json"))
                          for j in range(150)], CommitMeta("tables"))
    store.close()
    want = sorted(["main", *(f"{'team' if i % 3 else 'etl'}/b{i:04}" for i in range(N))])
    with serving(url, tmp_path) as server:
        http = http_client(base_url=server.base, timeout=30)
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
        # Browsing a namespace of 150 tables: 100, then the rest.
        shown, path = [], "/ui/tree/main?prefix=big"
        while path:
            html = http.get(path).text
            shown += re.findall(r'<a href="/ui/object/main/[^"]+">([^<]+)</a>', html)
            nxt = re.search(r'<a id="next" href="([^"]+)"', html)
            path = nxt.group(1).replace("&amp;", "&") if nxt else ""
        assert shown == [f"big.t{j:03}" for j in range(150)]
        assert "big" in http.get("/ui/tree/main").text
