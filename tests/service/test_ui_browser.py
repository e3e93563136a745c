"""The dashboard in a real browser: headless Chromium (the Debian package; `.ci/run` installs it)
driven by Playwright, against one API server on a small real database (one server and one browser
for the module).

Each test loads a page, checks what it shows, and that the browser logged no error; the map must
draw one point per nest and show a nest's name on hover; a suggestion goes round trip (suggest,
evaluate with a key through the API, download the tuned file). Screenshots of every page are saved
under the test's temporary directory (the path is printed) or ``PERFEMBED_UI_SCREENSHOTS``.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.service.factories import GEMM
from tests.service.servers import api_server
from tests.service.ui_database import UiDatabase, build


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("no Chromium on this machine: install it (Debian: apt-get install chromium; .ci/run does)")


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> UiDatabase:
    return build(Path(tmp_path_factory.mktemp("ui-browser")))


@pytest.fixture(scope="module")
def server(db: UiDatabase) -> Iterator[str]:
    with api_server(db.env()) as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    executable = _chromium()
    playwright_api = pytest.importorskip("playwright.sync_api",
                                         reason="playwright is not installed (pip install .[dev])")
    with playwright_api.sync_playwright() as p:
        launched = p.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = Path(os.environ.get("PERFEMBED_UI_SCREENSHOTS") or tmp_path_factory.mktemp("ui-screenshots"))
    where.mkdir(parents=True, exist_ok=True)
    print(f"dashboard screenshots: {where}")  # noqa: T201 -- where to look, with pytest -s
    return where


def _wait(predicate: Any, timeout: float = 30.0) -> None:
    """Poll ``predicate`` from the test (the dashboard's CSP forbids the eval that wait_for_function needs)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "gave up waiting"
        time.sleep(0.05)


class Page:
    """A browser tab that records console errors and failed requests."""

    def __init__(self, browser: Any, base: str, shots: Path) -> None:
        self.context = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
        self.page = self.context.new_page()
        self.base, self.shots = base, shots
        self.errors: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))

    def open(self, path: str) -> Any:
        self.page.goto(self.base + path)
        self.page.wait_for_load_state("networkidle")
        return self.page

    def shot(self, name: str) -> Path:
        path = self.shots / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path

    def close(self) -> None:
        assert self.errors == [], f"the browser logged errors: {self.errors}"
        self.context.close()


@pytest.fixture
def tab(browser: Any, server: str, shots: Path) -> Iterator[Page]:
    page = Page(browser, server, shots)
    yield page
    page.close()


def test_overview(tab: Page, db: UiDatabase) -> None:
    page = tab.open("/ui")
    assert page.locator('[data-count="nests"]').inner_text() == "6"
    assert page.get_by_role("row", name="blas3").count() == 1
    assert "3.25x" in page.get_by_role("row", name="blas3").inner_text()
    assert page.locator('[data-fact="isolation"]').inner_text()
    tab.shot("overview")


def test_map_draws_one_point_per_nest_and_names_it_on_hover(tab: Page, db: UiDatabase) -> None:
    page = tab.open("/ui/map")
    page.wait_for_selector("#map[data-ready]")
    points = page.locator("#map .scatterlayer .trace .points path.point")
    assert points.count() == len(db.nests)
    points.first.hover(force=True)
    hover = page.locator("#map .hoverlayer .hovertext")
    hover.wait_for()
    assert any(name + "#0" in (hover.text_content() or "") for name in db.nests)
    tab.shot("map")
    points.first.click(force=True)
    page.wait_for_url("**/ui/nests/*")
    assert "Measured recipes" in page.content()


def test_map_colours_by_speedup_and_highlights_a_program(tab: Page, db: UiDatabase) -> None:
    page = tab.open(f"/ui/map?color=speedup&program={db.program_ids['blas3/gemm_ijk.c']}")
    page.wait_for_selector("#map[data-ready]")
    assert page.locator("#map .legendtext", has_text="to its neighbours").count() == 1
    assert page.locator("#map .scatterlayer .js-line").count() >= 1  # the lines to the neighbours
    assert page.locator("#map .colorbar").count() == 1
    tab.shot("map-highlight")


def test_nest_page(tab: Page, db: UiDatabase) -> None:
    nest = db.nests["blas3/gemm_ijk.c"]
    page = tab.open(f"/ui/nests/{nest}")
    page.wait_for_selector("#study-0[data-ready]")
    assert page.locator("#study-0 .scatterlayer .points path.point").count() == 4  # the complete trials
    assert "3.25x [3.00, 3.50]" in page.get_by_role("row", name="tile i, j by 32x32").first.inner_text()
    page.locator("details > summary").first.click()
    assert '"op": "tile"' in page.locator("pre.json").first.inner_text()
    tab.shot("nest")
    with page.expect_download() as download:
        page.get_by_role("link", name="download").click()
    assert "#pragma omp parallel for" in Path(download.value.path()).read_text()


def test_jobs_page_cancels_with_a_key(tab: Page, db: UiDatabase) -> None:
    page = tab.open("/ui/jobs")
    assert page.locator("progress").count() == 3
    assert "the nest failed to compile: test" in page.content()
    tab.shot("jobs")
    queued = db.jobs["queued"]
    page.get_by_role("button", name=f"Cancel job {queued}").click()
    assert "needs an API key" in page.locator("#jobs-status").inner_text()
    page.get_by_label("API key to cancel jobs").fill(db.key)
    page.keyboard.press("Tab")  # the button is reachable from the keyboard
    page.get_by_role("button", name=f"Cancel job {queued}").press("Enter")
    page.locator("#jobs-status", has_text="cancelled").wait_for()  # the CSP forbids eval: no wait_for_function
    page.wait_for_load_state("networkidle")
    page.wait_for_selector(f'tr[data-job="{queued}"] >> text=cancelled')


def test_suggest_round_trip(tab: Page, db: UiDatabase, tmp_path: Path) -> None:
    page = tab.open("/ui/suggest")
    upload = tmp_path / "mine.c"
    upload.write_text(GEMM.read_text())
    page.get_by_label("or a .c file").set_input_files(str(upload))
    _wait(lambda: "for" in page.input_value("#source"))
    page.get_by_label("Parameters").fill("ni=48 nj=48 nk=48")
    page.get_by_label("Neighbours per nest").fill("2")
    page.get_by_role("button", name="Suggest").click()
    page.wait_for_selector("#answer")
    assert "mine.c#0" in page.locator("#answer h3").first.inner_text()
    # Two neighbours, none within the gate of this six-nest database: the recipe space's first guesses
    # come as a third row.
    rows = page.locator("#answer tbody tr")
    assert rows.count() == 3 and "recipe space (no neighbour within the gate)" in rows.nth(2).inner_text()
    tab.shot("suggest")
    page.get_by_label("API key", exact=True).fill(db.key)
    page.get_by_role("button", name="Evaluate").click()
    page.locator("#eval-status", has_text="Evaluation done").wait_for(timeout=240_000)
    assert "verified=true" in page.locator("#eval-result").inner_text()
    tab.shot("suggest-evaluated")
    evaluated = page.locator("#eval-result").inner_text()
    if "accepted: no candidate held up" in evaluated or "whole program refused" in evaluated:
        # A loaded machine can make every re-measurement fall short: then the page says there is nothing
        # to download, and offers no button the server would answer with a 422.
        assert "Nothing to download" in evaluated and page.locator("#tuned-form").is_hidden()
        return
    with page.expect_download() as download:
        page.locator("#tuned-form button").click()
    assert download.value.suggested_filename == "mine.tuned.c"
    assert "void gemm" in Path(download.value.path()).read_text()
