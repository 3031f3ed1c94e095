"""Browser test (Debian chromium via playwright): for the shipped attention run (local-qwen-nq-attention20,
found by name under sample_docs/runs/ or, while it grows, sample_docs/runs/progress/), Results draws the
attention measure by position under the U-curve: the gold document's curve and the positional bias (the
documents that are not gold), with n, and one sentence on each shape; a store without attention trials gets
no attention heading and no chart for it."""

from __future__ import annotations

import shutil

import pytest

from components.core.resources import sample_path
from tests.e2e.appserver import settle, streamlit_app
from tests.webapp.test_app_results_shape import litm_store

pytestmark = pytest.mark.browser
NAME = "local-qwen-nq-attention20.sqlite"
HEADING = "Where the model looks, by position"


def shipped_attention_store():
    for folder in (sample_path("runs"), sample_path("runs", "progress")):
        if (folder / NAME).is_file():
            return folder / NAME
    pytest.fail(f"{NAME} is neither in sample_docs/runs/ nor in sample_docs/runs/progress/")


def test_results_draws_the_attention_by_position_for_the_shipped_attention_run(new_page, tmp_path):
    shipped = tmp_path / "shipped"
    shipped.mkdir()
    shutil.copy(shipped_attention_store(), shipped / NAME)  # a copy: the shipped store stays as it is
    env = {"LITM_DB": str(tmp_path / "runs.sqlite"), "LITM_SHIPPED_RUNS": str(shipped)}
    with streamlit_app(env=env) as url:
        page = new_page(1440, 900)
        page.goto(f"{url}/results")
        settle(page, 90_000)
        page.get_by_text(HEADING).first.wait_for(timeout=60_000)
        chart = page.locator(".js-plotly-plot").filter(has_text="% of the attention")
        chart.first.wait_for(timeout=30_000)
        text = chart.first.inner_text()
        assert "the gold document · n up to" in text
        assert "documents that are not gold (the positional bias) · n up to" in text
        assert chart.first.locator(".scatterlayer .trace").count() == 4  # two bands, two lines
        assert page.get_by_text("The gold document: ").count() == 1
        assert page.get_by_text("Documents that are not gold: ").count() == 1
        assert "Traceback" not in page.content()


def test_results_shows_no_attention_view_for_a_store_without_attention_trials(new_page, tmp_path):
    shipped = tmp_path / "shipped"
    shipped.mkdir()
    litm_store(shipped / "local-qwen-nq-litm.sqlite", {0: 5, 9: 3, 19: 4}, 8)
    env = {"LITM_DB": str(tmp_path / "runs.sqlite"), "LITM_SHIPPED_RUNS": str(shipped)}
    with streamlit_app(env=env) as url:
        page = new_page(1440, 900)
        page.goto(f"{url}/results")
        settle(page, 90_000)
        page.wait_for_selector(".js-plotly-plot .main-svg")
        page.get_by_text("Shape of each curve").first.wait_for(timeout=30_000)
        assert page.get_by_text(HEADING).count() == 0
        assert page.locator(".js-plotly-plot").filter(has_text="% of the attention").count() == 0
