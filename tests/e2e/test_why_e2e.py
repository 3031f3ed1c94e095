"""The Lesson's step "why the middle is lost" and the Papers tab of Found in the Middle in a real browser:
on a projector (1024x576, presenter mode) the attention curve beside the accuracy U fits the screen with
its text, and its live view (the gold index, the question, the button or the line why not) does too; at
1440x900 the Papers tab shows Table 5 beside our run, the fixes "not run yet" and the command that runs
them. Nothing here calls a model."""

from __future__ import annotations

import pytest

from components.report.lesson import STEPS
from tests.e2e.appserver import calm, settle
from tests.e2e.test_presenter_e2e import HEIGHT, WIDTH, assert_fits

pytestmark = pytest.mark.browser
WHY = next(i for i, s in enumerate(STEPS, 1) if s.key == "why")
TALLER = (
    "() => Math.max(...[document.scrollingElement, ...document.querySelectorAll("
    '\'[data-testid="stMain"], [data-testid="stAppViewContainer"]\')]'
    ".map(e => e.scrollHeight - e.clientHeight))"
)


def test_why_the_middle_is_lost_fits_a_projector_in_both_views(new_page, app_url):
    page = new_page(WIDTH, HEIGHT)
    page.goto(f"{app_url}/lesson?present=1&step={WHY}")
    settle(page, 90_000)
    page.get_by_text(f"Lesson · {WHY}. Why the middle is lost").wait_for()
    assert_fits(page, "why, curves")
    body = page.inner_text("body")
    assert "Attention on the gold document" in body and "Accuracy" in body
    question = page.get_by_text("Question for the room:").bounding_box()
    assert question and question["y"] + question["height"] <= HEIGHT, "the question is cut"
    page.locator('[data-testid="stButtonGroup"]').get_by_text("One prompt, live", exact=True).click()
    settle(page)
    calm(page)
    page.get_by_text("Gold document index (0 = first, 19 = last)").wait_for()
    shown = page.get_by_role("button", name="Show where")
    line = page.get_by_text("see it", exact=False)
    target = shown if shown.count() else line.first
    box = target.bounding_box()
    assert box and box["y"] + box["height"] <= HEIGHT, f"the button or the line why not is cut ({box})"
    assert page.evaluate(TALLER) <= 1, "the live view is taller than the screen"


def test_found_in_the_middle_tab_shows_table_5_beside_ours(new_page, app_url):
    page = new_page(1440, 900)
    page.goto(f"{app_url}/papers")
    settle(page, 90_000)
    page.get_by_role("tab", name="Found in the Middle (Hsieh et al., 2024)").click()
    page.get_by_text("20 documents: vanilla, calibrated attention and attention sorting (Table 5)").wait_for()
    calm(page)
    panel = page.get_by_role("tabpanel").filter(has_text="Rerun its experiments").last
    # the tab's code blocks are drawn after its tables: wait for the last of them
    panel.locator('[data-testid="stCode"]').filter(has_text="papers-hsieh-nq10").wait_for()
    text = " ".join(panel.inner_text().split())
    codes = " ".join(" ".join(c.split()) for c in panel.locator('[data-testid="stCode"]').all_inner_texts())
    assert "litm sweep papers-hsieh-nq20 --db papers.sqlite" in codes, codes
    assert "litm sweep papers-hsieh-nq10 --db papers.sqlite" in codes, codes
    assert "prints no table of it" in text and "What cannot be rerun here" in text
    grids = panel.locator('[data-testid="stDataFrame"]')
    assert grids.count() >= 4  # Table 5 twice, ours twice (and the attention run's, where it ships)
