"""A table or view whose metadata file has gone answers 404 naming the file,
in Iceberg's words, however recently it was read: the parsed file a server
keeps in memory is not answered as if the file were still there (the REST
Compatibility Kit's testLoadTableWithMissingMetadataFile)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlparse

import httpx

from tests.api.test_rest_http import V1, make_table, make_view


@contextmanager
def moved_away(location: str, tmp_path: Path) -> Iterator[None]:
    path = Path(urlparse(location).path)
    aside = tmp_path / "aside.json"
    os.replace(path, aside)
    try:
        yield
    finally:
        os.replace(aside, path)


def gone(r: httpx.Response, location: str) -> None:
    assert r.status_code == 404, r.text
    e = r.json()["error"]
    assert e["type"] == "NotFoundException", e
    assert f"Failed to open input stream for file: {location}" in e["message"], e


def test_a_table_whose_metadata_file_went_is_not_found(http: httpx.Client, ns: str,
                                                      tmp_path: Path) -> None:
    location = make_table(http, ns, "t")["metadata-location"]
    url = f"{V1}/namespaces/{ns}/tables/t"
    assert http.get(url).status_code == 200  # read, and kept in memory
    with moved_away(location, tmp_path):
        gone(http.get(url), location)
        assert http.head(url).status_code == 404
        gone(http.get(url, params={"snapshots": "refs"}), location)
    r = http.get(url)  # back again: read again
    assert r.status_code == 200, r.text
    assert r.json()["metadata-location"] == location


def test_a_view_whose_metadata_file_went_is_not_found(http: httpx.Client, ns: str,
                                                     tmp_path: Path) -> None:
    location = make_view(http, ns, "v")["metadata-location"]
    url = f"{V1}/namespaces/{ns}/views/v"
    assert http.get(url).status_code == 200
    with moved_away(location, tmp_path):
        gone(http.get(url), location)
    assert http.get(url).status_code == 200
