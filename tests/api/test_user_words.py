"""Refusals in the words the user typed (issue 44, the trial's defect 7;
docs/cli.md, docs/ui.md): a per-key merge mode for a key the merge does not
change is said as the UI's ``force=``/``drop=`` (the CLI's ``--force/--drop``:
tests/api/test_cli_merge_report.py; Spark SQL's ``FORCE/DROP``:
tests/spark/test_spark_sql_extension.py), not the API's ``keyMergeModes``;
a privilege refusal of a write to ``main`` names ``main``, not the
``main@<hash>`` the client sent to pin the head it saw. Real servers, the
real ``sapwood`` command and plain HTTP."""

from __future__ import annotations

import subprocess

import httpx

from tests.api import spark_bodies as sb
from tests.api.auth_setup import People, set_up
from tests.api.test_rest_http import V1
from tests.api.test_versioning_http import head
from tests.api.ui_forms import browser
from tests.fixtures import server_fixture
from tests.http import http_client
from tests.server import Server
from tests.zygote_client import run

secured = server_fixture(env={"SAPWOOD_AUTH": "1"},
                         prepare=lambda url: set_up(url, protect_main=False), prefix="words")


def test_the_ui_says_a_choice_for_a_key_the_merge_does_not_change_in_its_words(
        server: Server, http: httpx.Client, ns: str) -> None:
    made = http.post(f"{V1}/namespaces/{ns}/views", json=sb.create_view("v", "SELECT 1 AS n"))
    assert made.status_code == 200, made.text
    dev = f"dev_{ns}"[:60]
    r = http.post("/api/v2/trees", params={"name": dev, "type": "BRANCH"},
                  json={"type": "BRANCH", "name": "main", "hash": head(http, "main")})
    assert r.status_code == 200, r.text
    assert http.post(f"/iceberg/{dev}/v1/namespaces/{ns}/views/v", json=sb.replace_view(
        made.json()["metadata"]["view-uuid"], "SELECT 2 AS n")).status_code == 200
    page = browser(server).get("/ui/merge", params={"from": dev, "into": "main",
                                                    "force": f"{ns}.vv"})
    assert page.status_code == 400, page.text[:300]
    said = (f"a choice (force= or drop=) names a key this merge does not change: "
            f"&#39;{ns}.vv&#39; (did you mean &#39;{ns}.v&#39;?)")
    assert said in page.text and "keyMergeModes" not in page.text, page.text
    # And a way back to the preview, without the choices.
    assert (f'<a href="/ui/merge?from={dev}&amp;into=main" id="back">Back to the preview, '
            "without these choices</a>") in page.text, page.text


def sapwood(server: Server, who: str, *args: str) -> subprocess.CompletedProcess[str]:
    people: People = server.people  # type: ignore[attr-defined]
    return run([*args], env={"SAPWOOD_URI": server.base, "COLUMNS": "200",
                             "SAPWOOD_CREDENTIAL": people.keys[who]}, timeout=60)


def test_a_privilege_refusal_names_the_reference_as_typed(secured: Server) -> None:
    people: People = secured.people  # type: ignore[attr-defined]
    with http_client(base_url=secured.base, headers=people.headers("admin"),
                     timeout=30) as admin:
        assert admin.post(f"{V1}/namespaces", json={"namespace": ["words"]}).status_code == 200
        assert admin.post(f"{V1}/namespaces/words/tables", json=sb.create_table("t")
                          ).status_code == 200
        made = head(admin, "main")
    # etl reads everything and writes only etl*.
    for args in (["restore", "words.t", "--from", "main~1", "--yes"],
                 ["revert", made]):
        out = sapwood(secured, "etl", *args)
        assert out.returncode == 1, (args, out.stdout, out.stderr)
        lines = out.stderr.splitlines()
        assert lines == [
            "error: Principal 'etl' lacks the 'write' privilege on reference 'main'"], lines
