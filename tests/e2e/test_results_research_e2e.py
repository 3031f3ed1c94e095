"""Browser tests of the researcher's flow on Results (Debian chromium via playwright): a sweep run by
`litm sweep` in its own process, into the store Results reads, appears on the open page without a reload;
a click on a point of the U-curve lists that point's trials."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.e2e.appserver import ROOT, settle, streamlit_app
from tests.support import sweep_toml
from tests.webapp.runs_fixture import fill

pytestmark = pytest.mark.browser


def test_a_command_line_sweep_appears_without_a_reload(tmp_path, llm_url, new_page):
    db = tmp_path / "runs.sqlite"
    fill(db, name="first sweep", n_tasks=2, lengths=(2000,))
    toml = sweep_toml(
        tmp_path,
        name="cli sweep",
        base_url=llm_url,
        n_tasks=2,
        lengths=(600,),
        positions=(0.0, 1.0),
        strategies=("baseline",),
        params="{}",
    )
    with streamlit_app(env={"LITM_DB": str(db), "LITM_SHIPPED_RUNS": str(tmp_path / "none")}) as url:
        tab = new_page(1400, 1200)
        tab.goto(f"{url}/results")
        settle(tab, 90_000)
        filt = tab.locator('[data-testid="stMultiSelect"]').filter(has_text="Sweeps").first
        assert "first sweep" in filt.inner_text() and "cli sweep" not in tab.inner_text("body")
        tab.evaluate("window.__same_page = true")  # a reload would drop it
        done = subprocess.run(
            [sys.executable, "-m", "components.cli", "sweep", str(toml), "--db", str(db), "--quiet"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=300,
            env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": str(ROOT)},
        )
        assert done.returncode == 0, done.stderr[-2000:]
        # the page looks at the store every few seconds and redraws itself on the newer sweep
        tab.wait_for_function(
            """() => [...document.querySelectorAll('[data-testid="stMultiSelect"]')]
                .some(e => e.innerText.includes('cli sweep'))""",
            timeout=60_000,
        )
        settle(tab)
        assert tab.evaluate("window.__same_page === true")  # no reload: the same page, redrawn
        assert "first sweep" not in filt.inner_text()
        metrics = tab.locator('[data-testid="stMetric"]').filter(has_text="Trials").first.inner_text()
        assert re.search(r"Trials\s+4\b", metrics), metrics  # 2 tasks x 2 positions x 1 length
        assert "Traceback" not in tab.content()


def test_a_click_on_a_curve_point_lists_its_trials(tmp_path, new_page):
    db = fill(tmp_path / "runs.sqlite", name="click sweep", lengths=(2000,), positions=(0.0, 0.5, 1.0))
    with streamlit_app(env={"LITM_DB": str(db), "LITM_SHIPPED_RUNS": str(tmp_path / "none")}) as url:
        tab = new_page(1400, 1400)
        tab.goto(f"{url}/results")
        settle(tab, 90_000)
        chart = tab.locator(".js-plotly-plot").first
        chart.wait_for(timeout=30_000)
        tab.get_by_text("Click a point of a curve to list its trials here.").wait_for()
        # the first line's middle point (baseline at position 0.5): plotly draws each marker as a path
        points = chart.locator(".scatterlayer .trace").nth(1).locator(".points path")
        for _ in range(3):
            box = points.nth(1).bounding_box()
            assert box is not None
            tab.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
            settle(tab)
            try:
                tab.get_by_text(re.compile(r"Trials at this point: ")).wait_for(timeout=10_000)
                break
            except Exception:  # the chart was still drawing: click again
                continue
        heading = tab.locator(
            '[data-testid="stMarkdown"]', has_text="Trials at this point"
        ).first.inner_text()
        assert "Baseline" in heading and "position 0.5" in heading, heading
        assert re.search(r"6 trials, 6 scored", heading), heading  # 6 tasks at one length
        assert tab.get_by_text(re.compile(r"Trial #\d+: task-")).count() >= 1  # the drill-down opened
        assert "Traceback" not in tab.content()
