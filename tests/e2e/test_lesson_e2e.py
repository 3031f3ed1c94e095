"""The Lesson and "move the answer" in a real browser, at a projector's 1024x576 and a laptop's 1440x900:
walk every lesson step in presenter mode with no error; move the answer in the Playground from start
to end and see the gold page's token offset in the map follow the control. Screenshots of every step
and of the Playground go to $LITM_SHOTS (default /work/notes) as teach-*.png when that folder exists."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from components.report.lesson import STEPS
from tests.e2e.appserver import calm, settle

pytestmark = pytest.mark.browser
SIZES = [(1024, 576), (1440, 900)]
SHOTS = Path(os.environ.get("LITM_SHOTS", "/work/notes"))


def shot(page, name: str) -> None:
    if SHOTS.is_dir():
        page.screenshot(path=str(SHOTS / f"teach-{name}.png"))


def gold_token(page) -> int:
    """The gold page's token offset in prompt 1, as the caption under the prompt map says it."""
    page.wait_for_function("() => /gold page \\d+ starts at token/.test(document.body.innerText)")
    m = re.search(r"gold page (\d+) starts at token ([\d,]+) of prompt 1", page.inner_text("body"))
    assert m
    return int(m.group(2).replace(",", ""))


def mover(page):
    """The thumb of the "Move the answer" control."""
    return page.locator('[data-testid="stSlider"]').filter(has_text="Move the answer").get_by_role("slider")


@pytest.mark.parametrize("width,height", SIZES)
def test_walk_the_lesson_in_presenter_mode(new_page, app_url, width, height):
    page = new_page(width, height)
    page.goto(f"{app_url}/lesson?present=1&step=1")
    settle(page, 90_000)
    for n in range(1, len(STEPS) + 1):
        page.get_by_text(f"Lesson · {n}. {STEPS[n - 1].title}").wait_for()
        page.wait_for_selector(".js-plotly-plot .main-svg")
        page.wait_for_timeout(600)
        calm(page)
        assert f"step={n}" in page.url and "present=1" in page.url
        assert page.locator('[data-testid="stSidebar"][data-collapsed="false"]').count() == 0, (
            "sidebar collapsed"
        )
        ticks = page.locator(".js-plotly-plot .xaxislayer-above text").first
        assert float(ticks.evaluate("e => parseFloat(getComputedStyle(e).fontSize)")) >= 16
        shot(page, f"lesson-{n}-{width}")
        if n < len(STEPS):
            page.get_by_role("button", name="Next →").first.click()
            settle(page)
    assert page.get_by_role("button", name="Next →").first.is_disabled()


@pytest.mark.parametrize("width,height", SIZES)
def test_move_the_answer_from_start_to_end(new_page, app_url, width, height):
    page = new_page(width, height)
    present = "&present=1" if width == 1024 else ""  # a projector's size: presenter mode
    page.goto(f"{app_url}/playground?sample=harrowmere_history&strategy=baseline&move=0{present}")
    settle(page, 90_000)
    page.wait_for_selector(".js-plotly-plot .main-svg")
    start = gold_token(page)
    if width == 1440:  # the prompt map is above the fold on a laptop screen
        box = page.locator(".js-plotly-plot").first.bounding_box()
        assert box and box["y"] < height * 0.6
    shot(page, f"playground-start-{width}")
    thumb = mover(page)
    offsets = [start]
    for _ in range(10):
        thumb.focus()
        thumb.press("ArrowRight")
        settle(page)
        offsets.append(gold_token(page))
    calm(page)
    assert offsets == sorted(offsets) and offsets[-1] > offsets[0]
    assert "gold page" in page.inner_text("body")
    shot(page, f"playground-end-{width}")


def test_move_a_task_sets_gold_document_by_index(new_page, app_url):
    page = new_page(1440, 900)
    page.goto(f"{app_url}/playground?source=task&set=nq-open-30docs&documents=20&gold=0&strategy=litm")
    settle(page, 90_000)
    first = gold_token(page)
    assert "gold page 1 starts" in page.inner_text("body")
    thumb = mover(page)
    thumb.focus()
    thumb.press("End")
    settle(page)
    assert "gold page 20 starts" in page.inner_text("body")
    assert gold_token(page) > first
    calm(page)
    shot(page, "playground-task-set-1440")
