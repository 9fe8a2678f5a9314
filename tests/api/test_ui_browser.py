"""The web UI in a real headless Chromium (Debian's ``chromium`` and
``chromedriver``, driven by Selenium; nothing downloaded at run time) against
a real server with a catalog built here: a table with snapshots, a view with
4 versions by 2 authors, branches. Every page loads without console errors;
the view's timeline shows 4 versions; the diff marks the changed SQL line;
the as-of picker shows the SQL current at a chosen instant; a merge preview
shows a conflict and how to resolve it; a merge through the UI lands (checked
through the API); the side-by-side diff of long SQL fits 1,400 px.
A full-page screenshot of every page goes to ``build/ui-screenshots`` (and to
``docs/screenshots`` with SAPWOOD_UPDATE_SCREENSHOTS=1, the README's copies)."""

from __future__ import annotations

import base64
import html
import os
import re
import shutil
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.api import spark_bodies as sb
from tests.api.test_pyiceberg import SCHEMA, rows
from tests.fixtures import server_fixture
from tests.http import http_client
from tests.server import Server, serving

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "build" / "ui-screenshots"
REQUIRE = os.environ.get("SAPWOOD_REQUIRE_BROWSER") == "1" or os.environ.get("CI") == "true"


def _chromium() -> tuple[str, str] | None:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    return (browser, driver) if browser and driver else None


@pytest.fixture(scope="module")
def driver():  # type: ignore[no-untyped-def]
    found = _chromium()
    if found is None:
        if REQUIRE:
            pytest.fail("Chromium and chromedriver are required (Debian packages chromium, "
                        "chromium-driver; tests/run.sh installs them)")
        pytest.skip("Chromium not installed")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = found[0]
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                "--window-size=1280,900"):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    d = webdriver.Chrome(service=Service(found[1]), options=opts)
    yield d
    d.quit()


server = server_fixture(prefix="ui-browser")


def load(driver, server: Server, path: str, shot: str | None = None,  # type: ignore[no-untyped-def]
         status: int = 200) -> str:
    driver.get(server.base + path)
    own = f"{server.base}{path} - Failed to load resource: the server responded with a " \
          f"status of {status}"
    errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"
              and not (status != 200 and e["message"].startswith(own))]
    assert not errors, (path, errors)
    if shot:
        screenshot(driver, shot)
    return str(driver.page_source)


def screenshot(driver, name: str) -> None:  # type: ignore[no-untyped-def]
    """The whole page (not only the window), at the window's width."""
    size = driver.execute_cdp_cmd("Page.getLayoutMetrics", {})["cssContentSize"]
    png = base64.b64decode(driver.execute_cdp_cmd("Page.captureScreenshot", {
        "captureBeyondViewport": True,
        "clip": {"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1},
    })["data"])
    places = [SHOTS]
    if os.environ.get("SAPWOOD_UPDATE_SCREENSHOTS") == "1":
        places.append(ROOT / "docs" / "screenshots")
    for place in places:
        place.mkdir(parents=True, exist_ok=True)
        (place / f"{name}.png").write_bytes(png)


def navigate(driver, action) -> None:  # type: ignore[no-untyped-def]
    """Run ``action`` (a click or a submit that loads a new page) and wait
    until the new page has replaced the old one and finished loading: a
    click returns before the navigation does, so reading the page right
    after it reads the old page (or half of the new one)."""
    from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    old = driver.find_element(By.TAG_NAME, "html")
    action()
    wait = WebDriverWait(driver, 20)

    def replaced(_: object) -> bool:
        # Chromium reports a node of the page being torn down either as stale
        # or, caught mid-navigation, as an inspector error: both mean gone.
        try:
            return bool(ec.staleness_of(old)(driver))
        except StaleElementReferenceException:
            return True
        except WebDriverException as e:
            if "does not belong to the document" in str(e):
                return True
            raise

    wait.until(replaced)
    wait.until(lambda d: d.execute_script("return document.readyState") == "complete")


@contextmanager
def foreign_page(action: str, fields: dict[str, str]) -> Iterator[str]:
    """Another site's page on another port of the same host (the same
    *site*, so SameSite=Strict cookies go along): a form aimed at
    ``action``. Its URL."""
    inputs = "".join(f'<input type="hidden" name="{html.escape(k)}" value="{html.escape(v)}">'
                     for k, v in fields.items())
    body = (f'<!doctype html><html lang="en"><head><link rel="icon" href="data:,">'
            f'<title>elsewhere</title></head><body><form method="post" '
            f'action="{html.escape(action)}">{inputs}<button id="go">Go</button></form>'
            f"</body></html>").encode()

    class Page(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    site = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    thread = threading.Thread(target=site.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{site.server_address[1]}/"
    finally:
        site.shutdown()
        site.server_close()


def send_foreign_form(driver, url: str) -> str:  # type: ignore[no-untyped-def]
    """Open the other site's page, press its button: the catalog's answer."""
    from selenium.webdriver.common.by import By

    driver.get(url)
    navigate(driver, driver.find_element(By.ID, "go").click)
    # The refusal's 403, which Chromium logs: expected here, and nothing else.
    errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert all("status of 403" in e["message"] for e in errors), errors
    return str(driver.page_source)


# The SQL of a wide view: one long line, as engines often store it.
LONG = ("SELECT o.id, o.name, count(*) AS orders_in_the_window, sum(o.id) AS total_of_ids, "
        "max(o.name) AS last_name_alphabetically FROM sales.orders AS o WHERE o.id > 100 AND "
        "o.name LIKE '%a rather long pattern to match here%' GROUP BY o.id, o.name "
        "HAVING count(*) > 1 ORDER BY orders_in_the_window DESC, total_of_ids")


def broken_words(driver, element) -> list[str]:  # type: ignore[no-untyped-def]
    """The words inside ``element`` that are drawn on more than one line
    (the test's script; the pages have none)."""
    return list(driver.execute_script("""
        const bad = [];
        for (const cell of arguments[0].querySelectorAll('th, td')) {
          const walk = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
          for (let n = walk.nextNode(); n; n = walk.nextNode()) {
            for (const m of n.data.matchAll(/\\S+/g)) {
              const r = document.createRange();
              r.setStart(n, m.index); r.setEnd(n, m.index + m[0].length);
              const lines = new Set([...r.getClientRects()].filter(x => x.width > 0)
                                    .map(x => Math.round(x.top)));
              if (lines.size > 1) bad.push(m[0]);
            }
          }
        }
        return bad;""", element))


def selected_text(driver, element) -> str:  # type: ignore[no-untyped-def]
    """What a visitor's selection of ``element`` copies (the test's script;
    the pages have none)."""
    return str(driver.execute_script(
        "const r = document.createRange(); r.selectNodeContents(arguments[0]);"
        "const s = getSelection(); s.removeAllRanges(); s.addRange(r); return s.toString()",
        element))


def test_the_ui_in_chromium(driver, server: Server) -> None:  # type: ignore[no-untyped-def]
    from selenium.webdriver.common.by import By

    http = http_client(base_url=server.base, timeout=30)
    cat = server.catalog()
    cat.create_namespace("sales")
    t = cat.create_table("sales.orders", SCHEMA)
    t.append(rows(3))
    # A summary as engines write it: long keys and values, one a long word.
    cat.load_table("sales.orders").append(rows(2, start=10), snapshot_properties={
        "spark.app.id": "local-1764265539000-a-rather-long-application-identifier",
        "engine-version": "3.5.6 (Apache Iceberg 1.10.0, commit 2114bf631e49af532d66e2ce)"})
    cat.load_table("sales.orders").append(rows(1200, start=100))
    base = "/iceberg/v1/namespaces/sales"
    r = http.post(f"{base}/views", json=sb.create_view("daily", "SELECT 1 AS n"),
                  headers={"Sapwood-Commit-Author": "ana"})
    uuid = r.json()["metadata"]["view-uuid"]
    instants = []
    for i, who in ((2, "bo"), (3, "ana"), (4, "bo")):
        time.sleep(1.1)  # instants a second apart: the picker's resolution
        instants.append(http.get("/api/v2/trees/main").json()["reference"]["hash"])
        assert http.post(f"{base}/views/daily", json=sb.replace_view(uuid, f"SELECT {i} AS n"),
                         headers={"Sapwood-Commit-Author": who}).status_code == 200
    wide = sb.create_view("wide", LONG)
    wide["view-version"]["default-namespace"] = ["sales"]
    r = http.post(f"{base}/views", json=wide)
    assert r.status_code == 200, r.text
    longer = LONG.replace("(*) > 1", "(*) > 2").replace("DESC", "ASC") + " LIMIT 100"
    again = sb.replace_view(r.json()["metadata"]["view-uuid"], longer)
    again["updates"][2]["view-version"]["default-namespace"] = ["sales"]
    assert http.post(f"{base}/views/wide", json=again).status_code == 200
    main = http.get("/api/v2/trees/main").json()["reference"]["hash"]

    page = load(driver, server, "/ui", "references")
    assert "main" in page
    # An open catalog: nothing offers to sign in.
    assert not driver.find_elements(By.PARTIAL_LINK_TEXT, "Sign in")
    # The head's hash: 12 characters shown, all 64 on hover and in a copy.
    shown = driver.find_element(By.CSS_SELECTOR, "#refs code.hash")
    assert shown.get_attribute("title") == main
    assert selected_text(driver, shown) == main
    rest = driver.find_element(By.CSS_SELECTOR, "#refs code.hash .rest")
    assert rest.size["width"] == 0 and rest.get_attribute("textContent") == main[12:]
    page = load(driver, server, "/ui/log/main", "log")
    assert "replace view sales.wide" in page and "replace view sales.daily" in page
    # The instant boxes' examples look like placeholders, not like values.
    since = driver.find_element(By.NAME, "since")
    assert since.get_attribute("placeholder") == "YYYY-MM-DDThh:mm:ssZ"
    assert driver.execute_script(
        "return getComputedStyle(arguments[0], '::placeholder').fontStyle", since) == "italic"
    navigate(driver, driver.find_element(By.CSS_SELECTOR, "a[href^='/ui/commit/']").click)
    assert "version 1 → 2; SQL changed (spark)" in driver.find_element(By.ID, "changes").text
    screenshot(driver, "commit")
    page = load(driver, server, "/ui/tree/main?prefix=sales", "browse")
    assert "sales.orders" in page and "sales.daily" in page
    page = load(driver, server, "/ui/object/main/sales.orders")
    snapshots = driver.find_element(By.ID, "snapshots").text
    assert "append" in snapshots and re.search(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z",
                                               snapshots)
    assert not re.search(r"\b\d{13}\b", snapshots), snapshots  # no epoch milliseconds
    # The summary's figures in columns; the whole summary a click away.
    assert [th.text for th in driver.find_elements(By.CSS_SELECTOR, "#snapshots > thead th")
            ][3:7] == ["Rows", "Added", "Files", "Size"]
    assert driver.find_element(By.CSS_SELECTOR, "#snapshots > tbody > tr td.n").text == "1,205"
    for opener in driver.find_elements(By.CSS_SELECTOR, "#snapshots details summary"):
        opener.click()
    summary = driver.find_elements(By.CSS_SELECTOR, "#snapshots table.kv th")
    assert "added-records" in [th.text for th in summary] and "spark.app.id" in [
        th.text for th in summary]
    # Readable: no word of the table or its summaries broken across lines,
    # in a wide window or a narrow one (where the table scrolls instead).
    for width in (1280, 700):
        driver.set_window_size(width, 900)
        assert broken_words(driver, driver.find_element(By.ID, "snapshots")) == [], width
    driver.set_window_size(1280, 900)
    # The row count over the snapshots: a dot each, drawn, oldest first.
    chart = driver.find_element(By.ID, "rows-chart")
    assert chart.size["width"] > 300 and chart.size["height"] > 60
    assert [c.get_attribute("data-rows") for c in chart.find_elements(By.TAG_NAME, "circle")] \
        == ["3", "5", "1205"]
    openers = driver.find_elements(By.CSS_SELECTOR, "#snapshots details summary")
    for opener in openers[:1] + openers[2:]:
        opener.click()  # the engine-written summary open in the picture
    screenshot(driver, "table")
    assert [td.text for td in driver.find_elements(
        By.CSS_SELECTOR, "main > table:first-of-type td:nth-child(4)")] == ["no", "no"]
    assert "sales.wide" in driver.find_element(By.ID, "readers").text
    # A view without a comparison asked for: the two newest versions, side by side.
    page = load(driver, server, "/ui/object/main/sales.daily", "view")
    timeline = driver.find_elements(By.CSS_SELECTOR, "#timeline tbody tr")
    assert len(timeline) == 4 and "ana" in page and "bo" in page
    assert driver.find_element(By.ID, "compare").text == "Version 3 → 4"
    changed = driver.find_elements(By.CSS_SELECTOR, ".diff tr.changed del, .diff tr.changed ins")
    assert [e.text for e in changed] == ["3", "4"], "the diff marks the changed SQL words"
    assert not driver.find_elements(By.CSS_SELECTOR, ".diff a")  # no stray links
    # Another pair, chosen in the form: the page comes back scrolled to the diff.
    from selenium.webdriver.support.ui import Select

    Select(driver.find_element(By.NAME, "a")).select_by_value("1")
    navigate(driver, driver.find_element(By.CSS_SELECTOR, "form[action='#compare'] button").click)
    assert driver.current_url.endswith("/ui/object/main/sales.daily?a=1&b=4#compare")
    assert driver.find_element(By.ID, "compare").text == "Version 1 → 4"
    # Long SQL side by side at 1,400 px: wrapped, nothing wider than the window.
    driver.set_window_size(1400, 900)
    try:
        load(driver, server, "/ui/object/main/sales.wide", "view-diff")
        assert driver.execute_script("return document.documentElement.scrollWidth") <= 1400
        sbs = driver.find_element(By.CSS_SELECTOR, ".diff table.sbs")
        assert sbs.location["x"] + sbs.size["width"] <= 1400
        assert [e.get_attribute("textContent") for e in driver.find_elements(
            By.CSS_SELECTOR, ".diff ins")] == ["2", "ASC", " LIMIT 100"]
        marked = [e.text for e in driver.find_elements(By.CSS_SELECTOR, "pre.sql .kw")]
        assert {"GROUP BY", "ORDER BY", "HAVING", "LIKE", "ASC", "LIMIT"} <= set(marked), marked
    finally:
        driver.set_window_size(1280, 900)
    # The as-of picker: the SQL current at an instant between versions 2 and 3.
    load(driver, server, "/ui/tree/main?prefix=sales")
    stamp = http.get(f"/api/v2/trees/@{instants[1]}/history",
                     params={"maxRecords": 1}).json()["logEntries"][0]["commitMeta"]["commitTime"]
    box = driver.find_element(By.NAME, "at")
    box.send_keys(stamp)
    navigate(driver, box.submit)
    navigate(driver, driver.find_element(By.LINK_TEXT, "sales.daily").click)
    sql = driver.find_element(By.CSS_SELECTOR, "pre.sql").text
    assert sql == "SELECT 2 AS n", sql  # version 2 was current then
    # A merge preview with a conflict and how to resolve it, then a merge that
    # lands and breaks a view (the preview names it, why, and the button says so).
    assert http.post(f"{base}/tables", json=sb.create_table("stock")).status_code == 200
    low = sb.create_view("low_stock", "SELECT id FROM stock WHERE id < 5")
    low["view-version"]["default-namespace"] = ["sales"]
    assert http.post(f"{base}/views", json=low).status_code == 200
    for name in ("other", "fresh"):
        http.post("/api/v2/trees", params={"name": name, "type": "BRANCH"},
                  json={"type": "BRANCH", "name": "main",
                        "hash": http.get("/api/v2/trees/main").json()["reference"]["hash"]})
    for branch, sql in (("main", "SELECT 10 AS n"), ("other", "SELECT 20 AS n")):
        v = http.get(f"/iceberg/{branch}/v1/namespaces/sales/views/daily").json()
        assert http.post(f"/iceberg/{branch}/v1/namespaces/sales/views/daily",
                         json=sb.replace_view(v["metadata"]["view-uuid"], sql)
                         ).status_code == 200
    page = load(driver, server, "/ui/merge?from=other&into=main", "merge-conflict")
    assert "CONFLICT" in page and "different SQL" in page
    commands = [c.text for c in driver.find_elements(By.CSS_SELECTOR, "#outcomes code.cmd")]
    assert commands == ["sapwood merge other --into main --force sales.daily",
                        "sapwood merge other --into main --drop sales.daily"]
    navigate(driver, driver.find_element(By.CSS_SELECTOR, "#outcomes a.force").click)
    assert "FORCED" in driver.page_source and driver.find_elements(
        By.CSS_SELECTOR, "form[method='post'] input[name='force'][value='sales.daily']")
    http.post("/iceberg/fresh/v1/namespaces/sales/tables", json=sb.create_table("landed"))
    assert http.delete("/iceberg/fresh/v1/namespaces/sales/tables/stock").status_code == 204
    load(driver, server, "/ui/merge?from=fresh&into=main", "merge-preview")
    broken = driver.find_element(By.CSS_SELECTOR, "#invalidated > li")
    assert broken.find_element(By.TAG_NAME, "a").get_attribute("href").endswith(
        "/ui/object/main/sales.low_stock")
    assert "table sales.stock dropped" in broken.text, broken.text
    button = driver.find_element(By.CSS_SELECTOR, "form[method='post'] button")
    assert button.text == "Merge fresh into main and break 1 view", button.text
    navigate(driver, button.click)
    assert "Merged: main is now at" in driver.page_source
    assert http.get("/iceberg/v1/namespaces/sales/tables/landed").status_code == 200
    page = load(driver, server, "/ui/diff?from=other&to=main", "diff")
    listed = {r.find_element(By.CSS_SELECTOR, "td a").text: r.text
            for r in driver.find_elements(By.CSS_SELECTOR, "#changes tbody tr")}
    assert "SQL changed (spark)" in listed["sales.daily"] and "added" in listed["sales.landed"]
    # The switcher: the log of another branch, and the navigation stays there.
    load(driver, server, "/ui/log/main")
    Select(driver.find_element(By.ID, "switch-ref")).select_by_value("other")
    navigate(driver, driver.find_element(By.CSS_SELECTOR, "#switcher button").click)
    assert driver.current_url.endswith("/ui/log/other")
    assert driver.find_element(By.ID, "nav-browse").get_attribute("href").endswith(
        "/ui/tree/other")
    # Error pages say what to try; a mistyped reference, what was meant.
    page = load(driver, server, "/ui/log/mian", "error", status=404)
    assert "Not found" in page and "What to try" in page
    navigate(driver, driver.find_element(By.CSS_SELECTOR, "#did-you-mean a").click)
    assert driver.current_url.endswith("/ui/log/main")
    page = load(driver, server, "/ui/nonsense", "not-found", status=404)
    assert [a.text for a in driver.find_elements(By.CSS_SELECTOR, "#try a")] == [
        "The references", "the log of main", "browse main"]
    # The keyboard: the first Tab reaches the skip link.
    page = load(driver, server, "/ui/log/nope", status=404)
    assert "Not found" in page
    from selenium.webdriver.common.keys import Keys

    driver.find_element(By.TAG_NAME, "body").send_keys(Keys.TAB)
    assert driver.switch_to.active_element.get_attribute("class") == "skip"


def test_signing_in_from_the_browser(driver, tmp_path_factory) -> None:  # type: ignore[no-untyped-def]
    """Authentication on: the browser gets a sign-in step, signs in with an
    API key, and sees only what its principal may read."""
    from selenium.webdriver.common.by import By

    from tests.api.auth_setup import set_up

    base = tmp_path_factory.mktemp("ui-browser-auth")
    url = f"sqlite:///{base / 'sapwood.db'}"
    people = set_up(url, protect_main=False)
    with serving(url, base, {"SAPWOOD_AUTH": "1"}) as srv:
        admin = http_client(base_url=srv.base, headers=people.headers("admin"), timeout=30)
        for ns in ("sales", "hr"):
            assert admin.post("/iceberg/v1/namespaces", json={"namespace": [ns]}).status_code \
                == 200
            assert admin.post(f"/iceberg/v1/namespaces/{ns}/tables",
                              json=sb.create_table("t")).status_code == 200
        # Another site's page signing the browser in (as 'nobody'): refused.
        with foreign_page(f"{srv.base}/ui/login", {"client_id": people.keys["nobody"],
                                                    "next": "/ui"}) as url:
            assert "Form refused" in send_foreign_form(driver, url)
        assert not [c for c in driver.get_cookies() if c["name"] == "sapwood_ui_token"]
        load(driver, srv, "/ui/tree/main?prefix=sales", "sign-in-needed", status=401)
        # The page's own link: signing in comes back to it.
        navigate(driver, driver.find_element(By.CSS_SELECTOR, "main a[href^='/ui/login']").click)
        screenshot(driver, "login")
        driver.find_element(By.NAME, "client_id").send_keys(people.keys["sales"])
        navigate(driver, driver.find_element(By.CSS_SELECTOR, "main form button").click)
        assert "Sign out" in driver.page_source and "sales.t" in driver.page_source
        # The 'sales' principal reads below 'sales' only.
        assert "sales" in load(driver, srv, "/ui/tree/main")
        assert "hr" not in driver.find_element(By.ID, "main").text.split()
        page = load(driver, srv, "/ui/tree/main?prefix=sales")
        assert "sales.t" in page
        hr = load(driver, srv, "/ui/object/main/hr.t", status=403)
        assert "Not allowed" in hr
        # Signing out: the navigation's button (a form), then nothing is readable.
        load(driver, srv, "/ui/tree/main?prefix=sales")
        navigate(driver, driver.find_element(By.CSS_SELECTOR, "#sign-out button").click)
        assert driver.find_element(By.LINK_TEXT, "Sign in")
        # Back on the references, which ask to sign in (401).
        assert [e["message"].split(" - ")[0] for e in driver.get_log("browser")
                if e["level"] == "SEVERE"] == [f"{srv.base}/ui"]
        assert not [c for c in driver.get_cookies() if c["name"] == "sapwood_ui_token"]
        load(driver, srv, "/ui/tree/main?prefix=sales", status=401)


def test_restore_a_version_and_revert_a_commit_in_the_browser(  # type: ignore[no-untyped-def]
        driver, server: Server) -> None:
    """Issue 27: the view page's "restore this version" and the commit
    page's "revert", each through its preview, land (checked through the API);
    the previews write nothing."""
    from selenium.webdriver.common.by import By

    http = http_client(base_url=server.base, timeout=30)

    def head() -> str:
        return str(http.get("/api/v2/trees/main").json()["reference"]["hash"])

    server.catalog().create_namespace("ops")
    base = "/iceberg/v1/namespaces/ops"
    made = http.post(f"{base}/views", json=sb.create_view("v", "SELECT 1 AS n"))
    assert made.status_code == 200, made.text
    assert http.post(f"{base}/views/v", json=sb.replace_view(
        made.json()["metadata"]["view-uuid"], "SELECT 2 AS n")).status_code == 200

    load(driver, server, "/ui/object/main/ops.v")
    links = driver.find_elements(By.CSS_SELECTOR, "#timeline a.restore")
    assert len(links) == 1  # version 1; the current one needs no restoring
    before = head()
    navigate(driver, links[0].click)
    assert "Preview" in driver.page_source
    assert "version 1 as new version 3" in driver.page_source
    assert head() == before  # the preview wrote nothing
    screenshot(driver, "restore")
    navigate(driver, driver.find_element(By.ID, "confirm").click)
    assert "Restored: main is now at" in driver.page_source
    assert sb.current_sql(http.get(f"{base}/views/v").json()["metadata"]) == "SELECT 1 AS n"
    page = load(driver, server, "/ui/object/main/ops.v?a=1&b=3")
    assert "restored: version 1" in page
    # Version 3 is version 1 again: the comparison says so.
    assert driver.find_element(By.ID, "identical").text.startswith(
        "Versions 1 and 3 are identical")

    assert http.post(f"{base}/tables", json=sb.create_table("t")).status_code == 200
    created = head()
    load(driver, server, f"/ui/commit/{created}")
    navigate(driver, driver.find_element(By.ID, "revert").click)
    assert "Preview" in driver.page_source and "ops.t" in driver.page_source
    assert "would delete" in driver.page_source and head() == created  # a preview's tense
    screenshot(driver, "revert")
    navigate(driver, driver.find_element(By.ID, "confirm").click)
    assert "Reverted: main is now at" in driver.page_source
    assert http.get(f"{base}/tables/t").status_code == 404
    page = load(driver, server, f"/ui/commit/{head()}")
    assert "sapwood.revert.commits" in page and created in page


def test_a_form_on_another_site_is_refused(driver, server: Server) -> None:  # type: ignore[no-untyped-def]
    """Issue 34: a page on another port of the same host submits a form to
    the catalog in the visitor's browser: refused, nothing created."""
    http = http_client(base_url=server.base, timeout=30)
    load(driver, server, "/ui")  # the visitor has the catalog open (and its cookie)
    forged = {"name": "forged", "type": "BRANCH", "source": "main", "csrf": "guess"}
    with foreign_page(f"{server.base}/ui/refs", forged) as url:
        page = send_foreign_form(driver, url)
    assert "Form refused" in page and "not from this catalog" in page, page
    assert http.get("/api/v2/trees/forged").status_code == 404
