"""Browser test of Compare (Debian chromium via playwright): a real `litm sweep` over r as a list against
the loopback server (middle-loss mode), the Compare page's Pareto chart and recommendation, the copied
link reopened in a new browser context showing the same view, and the one-file report downloaded and
opened. Screenshots go to $LITM_SHOTS (default: the test's temporary folder)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from components.cli import main
from tests.e2e.appserver import select, settle, streamlit_app
from tests.e2e.test_decision_e2e import TEXT_BOXES, chart, first_x_tick, overlaps
from tests.support import sweep_toml

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def swept_store(tmp_path_factory, _loopback_llm):
    home = tmp_path_factory.mktemp("e2e-compare")
    _loopback_llm.reset()
    _loopback_llm.set(middle_loss=0.7)
    toml = sweep_toml(
        home,
        name="r sweep",
        base_url=_loopback_llm.openai_url,
        n_tasks=4,
        lengths=(1200,),
        positions=(0.0, 0.25, 0.5, 0.75, 1.0),
        strategies=("baseline", "reprompt"),
        params="{ r = [200, 400] }",
    )
    db = home / "runs.sqlite"
    assert main(["sweep", str(toml), "--db", str(db), "--quiet"]) == 0
    _loopback_llm.reset()
    return home, db


@pytest.fixture(scope="module")
def app(swept_store):
    home, db = swept_store
    with streamlit_app(env={"LITM_DB": str(db), "LITM_SHIPPED_RUNS": str(home / "none")}) as url:
        yield url


def shots() -> Path | None:
    folder = os.environ.get("LITM_SHOTS")
    return Path(folder) if folder else None


def state_of(page) -> tuple[str, list[str]]:
    rec = page.locator('[data-testid="stAlertContentInfo"]').first.inner_text()
    tags = page.locator('[data-testid="stMultiSelect"]').nth(1).locator(".react-aria-ComboBox [data-tag]")
    arms = [tags.nth(i).get_attribute("aria-label") for i in range(tags.count())]
    return rec, arms


def test_compare_pareto_recommendation_link_and_report(app, new_page, tmp_path):
    page = new_page(1440, 900)
    page.goto(app)
    settle(page)
    page.get_by_role("link", name="Compare").first.click()
    settle(page)
    page.get_by_text("Accuracy against cost per 1,000 questions").first.wait_for()
    # three arms: baseline and reprompt with r = 200 and r = 400; re-priced as gpt-4o-mini so cost differs
    select(page, "Price every arm as", "openai:gpt-4o-mini")
    page.get_by_text("Accuracy against cost per 1,000 questions").first.wait_for()
    page.wait_for_timeout(1000)
    rec, arms = state_of(page)
    assert re.search(r"(most accurate|within \d+ points|a tie)", rec), rec
    assert re.search(r"Recommend .+ · (saves|costs) \$[\d.,]+ (more )?per 1,000 questions", rec), rec
    # the accuracy-cost chart, priced: numbered points whose texts never overlap, its dollar axis from $0
    plot = chart(page, "Accuracy against cost per 1,000 questions")
    boxes = plot.evaluate(TEXT_BOXES)
    assert not overlaps(boxes), overlaps(boxes)
    assert first_x_tick(plot) == "$0"
    legend = " ".join(b["text"] for b in boxes)
    assert (
        "Reprompt · r=200 · loop-model" in legend and "Reprompt · r=400 · loop-model" in legend
    )  # names whole
    assert sorted(arms) == [
        "Baseline · loop-model",
        "Reprompt · r=200 · loop-model",
        "Reprompt · r=400 · loop-model",
    ]
    assert page.locator(".js-plotly-plot").count() >= 3  # Pareto, U-curves, differences
    link = page.locator('[data-testid="stCode"]').first.inner_text().strip()
    assert "price=openai%3Agpt-4o-mini" in link and "arm=" in link and link.startswith("http"), link
    if shots():
        page.screenshot(path=str(shots() / "compare-page.png"))
        page.set_viewport_size({"width": 1440, "height": 3200})  # the app scrolls inside its own container
        settle(page)
        page.screenshot(path=str(shots() / "compare-page-full.png"))
        page.set_viewport_size({"width": 1440, "height": 900})

    other = new_page(1440, 900)  # a new context: a colleague opening the link
    other.goto(link)
    settle(other)
    other.get_by_text("Accuracy against cost per 1,000 questions").first.wait_for()
    assert state_of(other) == (rec, arms)
    captions = '[data-testid="stCaptionContainer"]'
    planner = [c for c in page.locator(captions).all_inner_texts() if "costs about" in c]
    assert planner and "$0.00" not in planner[0]  # priced as gpt-4o-mini, not as the free loopback model
    assert [c for c in other.locator(captions).all_inner_texts() if "costs about" in c] == planner
    assert "price=openai%3Agpt-4o-mini" in other.url  # the reopened view keeps the price in its own URL

    with page.expect_download() as info:
        page.get_by_role("button", name=re.compile("Download report")).click()
    report = tmp_path / "report.html"
    info.value.save_as(report)
    text = report.read_text(encoding="utf-8")
    assert "Reprompt · r=400 · loop-model" in text and "Pareto" in text and "Prices" in text
    viewer = new_page(1440, 900)
    viewer.goto(report.as_uri())
    viewer.locator(".js-plotly-plot").first.wait_for()
    assert viewer.locator(".js-plotly-plot").count() == 3  # drawn offline: plotly.js is inside the file
    if shots():
        viewer.screenshot(path=str(shots() / "compare-report.png"))
        viewer.screenshot(path=str(shots() / "compare-report-full.png"), full_page=True)

    # the planner fills the Experiments grid with the pair's strategies and parameters
    page.get_by_role("button", name=re.compile("Plan this sweep in Experiments")).click()
    settle(page)
    page.get_by_role("heading", name="Experiments").first.wait_for()
    settle(page)
    box = page.locator('[data-testid="stMultiSelect"]').filter(has_text="r (tokens)")
    box.locator("[data-tag]").first.wait_for(timeout=30_000)
    tags = box.locator("[data-tag]")
    values = [tags.nth(i).get_attribute("aria-label") for i in range(tags.count())]
    assert values and set(values) <= {"200", "400"}, values  # r takes a list now: the pair's values
