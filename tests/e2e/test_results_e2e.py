"""Browser tests (Debian chromium via playwright): Results draws a curve from a filled run store,
Papers draws a published chart, and an Experiments run against the loopback OpenAI-compatible
server shows its progress, also after a page reload."""

from __future__ import annotations

import json
import re
import urllib.request

import pytest

from tests.e2e.appserver import llm_server, settle, streamlit_app
from tests.webapp.runs_fixture import fill

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def app_with_runs(tmp_path_factory):
    home = tmp_path_factory.mktemp("e2e-results")
    db = fill(home / "runs" / "litm.sqlite", lengths=(2000, 4000), positions=(0.0, 0.5, 1.0))
    with streamlit_app(env={"LITM_DB": str(db), "LITM_SHIPPED_RUNS": str(home / "none")}) as url:
        yield url, db


@pytest.fixture
def tab(new_page):
    return new_page(1400, 1400)


def open_page(page, url: str, name: str) -> None:
    page.goto(url)  # the app's root first: it registers the navigation
    settle(page)
    page.get_by_role("link", name=name).first.click()
    settle(page)


def test_results_shows_a_curve(app_with_runs, tab):
    url, _ = app_with_runs
    open_page(tab, url, "Results")
    chart = tab.locator(".js-plotly-plot").first
    chart.wait_for(timeout=30_000)
    assert "by answer position" in chart.inner_text() or tab.get_by_text("by answer position").count()
    assert tab.locator(".js-plotly-plot .scatterlayer .trace").count() >= 3
    assert tab.get_by_text("2 trials ended in an error").count() == 1
    assert "Traceback" not in tab.content()


def test_papers_shows_a_published_chart(app_with_runs, tab):
    url, _ = app_with_runs
    open_page(tab, url, "Papers")
    tab.locator(".js-plotly-plot").first.wait_for(timeout=30_000)
    assert tab.get_by_text(re.compile("as published")).count() >= 1
    tab.get_by_role("tab", name=re.compile("R&R")).click()
    settle(tab)
    assert tab.locator(".js-plotly-plot").count() >= 2


def test_experiments_run_against_loopback_server(tmp_path, tab):
    with (
        llm_server() as v1,
        streamlit_app(
            env={"LITM_DB": str(tmp_path / "runs.sqlite"), "LITM_SHIPPED_RUNS": str(tmp_path / "none")}
        ) as url,
    ):
        admin = v1.removesuffix("/v1") + "/admin/mode"
        req = urllib.request.Request(
            admin,
            data=json.dumps({"delay": 0.15}).encode(),
            method="POST",
            headers={"Content-Type": "application/json"},
        )
        urllib.request.urlopen(req, timeout=5).read()
        tab.goto(url)
        settle(tab)
        sidebar = tab.locator('[data-testid="stSidebar"]')
        sidebar.locator('[data-testid="stSelectbox"]').filter(has_text="Provider").click()
        tab.get_by_role("option", name=re.compile("OpenAI-compatible")).click()
        settle(tab)
        sidebar.get_by_role("textbox", name="Model", exact=True).fill("loop")
        sidebar.get_by_role("textbox", name="Model", exact=True).press("Enter")
        settle(tab)
        sidebar.get_by_role("textbox", name="Base URL").fill(v1)
        sidebar.get_by_role("textbox", name="Base URL").press("Enter")
        settle(tab)
        tab.get_by_role("link", name="Experiments").first.click()
        settle(tab)
        tasks = tab.get_by_role("spinbutton", name="Tasks (the first n of the set)")
        tasks.fill("1")
        tasks.press("Enter")
        settle(tab)
        tab.get_by_role("button", name=re.compile("Run the sweep")).click()
        tab.get_by_text(re.compile(r"\d+/30 trials")).first.wait_for(timeout=30_000)
        tab.reload()  # a refresh is a new session: the URL's token finds the sweep again
        settle(tab)
        tab.get_by_text("Your sweeps in this session").wait_for(timeout=30_000)
        tab.get_by_text(re.compile(r"30/30 trials")).first.wait_for(timeout=90_000)
        # the last trial is written a moment before the sweep is closed: the panel (redrawn every second)
        # says "finished" on its next turn
        tab.get_by_text(re.compile(r"· finished ·")).first.wait_for(timeout=30_000)
        assert "Traceback" not in tab.content()


def test_shared_runs_import_from_the_results_page(tmp_path, tab):
    """A class shares runs: a CSV exported from one store is uploaded on Results and joins the user's store."""
    from components.run.store import RunStore

    source = RunStore(fill(tmp_path / "theirs.sqlite", lengths=(2000,), positions=(0.0, 1.0)))
    export = source.export_trials(tmp_path / "shared.csv", "csv")
    n = len(source.trials_frame())
    source.close()
    mine = tmp_path / "mine.sqlite"
    with streamlit_app(env={"LITM_DB": str(mine), "LITM_SHIPPED_RUNS": str(tmp_path / "none")}) as url:
        open_page(tab, url, "Results")
        tab.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(str(export))
        tab.get_by_text(re.compile(r"Imported \d+ trial")).first.wait_for(timeout=60_000)
        assert "Traceback" not in tab.content()
    store = RunStore(mine)
    assert len(store.trials_frame()) == n
    store.close()


def test_a_click_on_a_sweeps_row_shows_that_sweep(tmp_path, tab):
    """Results opens on the newest sweep of the user's store; a click on another row of "Sweeps in the
    run stores" makes that sweep the Sweeps filter."""
    db = tmp_path / "runs.sqlite"
    fill(db, name="older sweep")
    fill(db, name="newer sweep", model="other-model")
    with streamlit_app(env={"LITM_DB": str(db), "LITM_SHIPPED_RUNS": str(tmp_path / "none")}) as url:
        tab.goto(f"{url}/results")
        settle(tab, 90_000)
        filt = tab.locator('[data-testid="stMultiSelect"]').filter(has_text="Sweeps")
        assert "newer sweep" in filt.first.inner_text() and "older sweep" not in filt.first.inner_text()
        listing = tab.locator('[data-testid="stExpander"]').filter(has_text="Sweeps in the run stores")
        listing.get_by_text(re.compile("Sweeps in the run stores")).click()
        grid = listing.locator('[data-testid="stDataFrame"]').first
        grid.wait_for(state="visible", timeout=30_000)
        picked = "() => [...document.querySelectorAll('[data-testid=\"stMultiSelect\"]')].some(e => e.innerText.includes('older sweep'))"
        for _ in range(3):  # the grid draws on a canvas once laid out: click again if the first came early
            tab.wait_for_timeout(1_000)
            box = grid.bounding_box()
            assert box is not None
            # rows are 35 px under a 35 px header; the first row is the older sweep; x: its selection box
            tab.mouse.click(box["x"] + 12, box["y"] + 35 + 17)
            settle(tab)
            try:
                tab.wait_for_function(picked, timeout=10_000)
                break
            except Exception:  # not selected yet: try again
                continue
        tab.wait_for_function(picked, timeout=20_000)
        assert "newer sweep" not in filt.first.inner_text()
