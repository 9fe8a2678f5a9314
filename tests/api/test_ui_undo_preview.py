"""The UI's undo previews say what confirming would do (issue 44, the
trial's defect 6; docs/ui.md): "would restore", "would delete", never the
past tense of what was not done; a preview with nothing to change offers no
button; a restore that deletes says so on its button. The page after the
confirmation says what was done. A real server, plain HTTP as a browser
sends it, SQLite and PostgreSQL."""

from __future__ import annotations

import re

import httpx

from tests.api import spark_bodies as sb
from tests.api.test_rest_http import V1
from tests.api.test_versioning_http import head
from tests.api.ui_forms import browser, submit
from tests.server import Server


def actions(html: str) -> list[str]:
    """The Action column of the page's table."""
    return re.findall(r"<tr><td>[^<]*</td><td>([^<]*)</td>", html)


def confirm(html: str) -> str | None:
    """The confirmation button's label, None when there is none."""
    m = re.search(r'<button type="submit" id="confirm">([^<]*)</button>', html)
    return m[1] if m else None


def test_previews_say_what_would_happen_and_nothing_to_do_has_no_button(
        server: Server, http: httpx.Client, ns: str) -> None:
    before = head(http, "main")
    made = http.post(f"{V1}/namespaces/{ns}/views", json=sb.create_view("v", "SELECT 1 AS n"))
    assert made.status_code == 200, made.text
    first = head(http, "main")
    assert http.post(f"{V1}/namespaces/{ns}/views/v", json=sb.replace_view(
        made.json()["metadata"]["view-uuid"], "SELECT 2 AS n")).status_code == 200
    second = head(http, "main")
    ui = browser(server)

    def preview(path: str, **params: str) -> str:
        r = ui.get(path, params=params)
        assert r.status_code == 200, r.text[:500]
        return r.text

    page = preview("/ui/restore", key=f"{ns}.v", source=f"@{first}", branch="main")
    assert actions(page) == ["would restore"], page
    assert confirm(page) == f"Restore {ns}.v on main"

    # From before the view existed: the restore deletes it, and its button says so.
    page = preview("/ui/restore", key=f"{ns}.v", source=f"@{before}", branch="main")
    assert actions(page) == ["would delete"], page
    assert confirm(page) == f"Delete {ns}.v on main"

    # As it is now: nothing to do, nothing to press.
    page = preview("/ui/restore", key=f"{ns}.v", source="main", branch="main")
    assert actions(page) == ["unchanged"], page
    assert "Preview: nothing to change" in page and confirm(page) is None

    page = preview("/ui/revert", commit=second, branch="main")
    assert actions(page) == ["would restore"], page
    assert confirm(page) == f"Revert {second[:12]} on main"
    # Reverting a view's creation (nothing changed it since) deletes it.
    assert http.post(f"{V1}/namespaces/{ns}/views", json=sb.create_view("w", "SELECT 3 AS n")
                     ).status_code == 200
    third = head(http, "main")
    page = preview("/ui/revert", commit=third, branch="main")
    assert actions(page) == ["would delete"], page
    assert confirm(page) == f"Revert {third[:12]} on main (deletes {ns}.w)"

    # Confirmed, the page says what was done, in the past tense.
    done = submit(ui, f"/ui/restore?key={ns}.v&source=@{before}&branch=main", "/ui/restore")
    assert done.status_code == 200, done.text[:500]
    assert actions(done.text) == ["deleted"] and confirm(done.text) is None
    # The new commit is a link (its page on the branch); the form's instant fits.
    restored = head(http, "main")
    assert (f'is now at <a href="/ui/commit/{restored}?ref=main" id="new-commit">'
            f'<code class="hash" title="{restored}">{restored[:12]}<span') in done.text, done.text
    assert 'name="source" value="' in done.text and 'size="32"' in done.text
    assert http.get(f"{V1}/namespaces/{ns}/views/v").status_code == 404
    # A key restored (here revived) is a link to its page on the branch.
    done = submit(ui, f"/ui/restore?key={ns}.v&source=@{first}&branch=main", "/ui/restore")
    assert done.status_code == 200, done.text[:500]
    assert f'<td><a href="/ui/object/main/{ns}.v">{ns}.v</a></td><td>revived</td>' in done.text
