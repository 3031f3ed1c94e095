"""A decision you can read, in chromium (Debian's, driven by playwright): Compare opened on the shipped
sweeps leads with "Recommend <arm> · saves ... per 1,000 questions", no two texts of its accuracy-cost
chart overlap (the svg text elements' bounding boxes: point labels, ticks, titles, legend), its dollar
axis starts at $0, never below; the same for Results' accuracy-cost chart. At a laptop's 1440x900 and a
projector's 1024x576 in presenter mode. Screenshots go to $LITM_SHOTS when set."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.e2e.appserver import settle

pytestmark = pytest.mark.browser

SIZES = [(1440, 900, ""), (1024, 576, "?present=1")]

TEXT_BOXES = """el => [...el.querySelectorAll('svg text')]
    .filter(t => t.textContent.trim() && getComputedStyle(t).visibility !== 'hidden'
                 && getComputedStyle(t).opacity !== '0')
    .map(t => { const r = t.getBoundingClientRect();
                return {text: t.textContent, left: r.left, top: r.top, right: r.right, bottom: r.bottom}; })
    .filter(b => b.right - b.left > 0 && b.bottom - b.top > 0)"""


def chart(page, title: str):
    plot = page.locator(".js-plotly-plot").filter(has=page.locator("text.gtitle", has_text=title)).first
    plot.wait_for()
    plot.scroll_into_view_if_needed()
    page.wait_for_timeout(500)
    return plot


def overlaps(boxes: list[dict], slack: float = 1.0) -> list[tuple[str, str]]:
    """Pairs of texts whose boxes overlap by more than `slack` pixels each way."""
    out = []
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            w = min(a["right"], b["right"]) - max(a["left"], b["left"])
            h = min(a["bottom"], b["bottom"]) - max(a["top"], b["top"])
            if w > slack and h > slack:
                out.append((a["text"], b["text"]))
    return out


def first_x_tick(plot) -> str:
    return plot.locator(".xtick text").first.text_content().strip()


def shot(page, name: str) -> None:
    folder = os.environ.get("LITM_SHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / name))


@pytest.mark.parametrize("width, height, query", SIZES)
def test_compare_leads_with_the_recommendation_and_its_chart_reads(new_page, app_url, width, height, query):
    page = new_page(width, height)
    page.goto(app_url)
    settle(page, 120_000)
    page.goto(f"{app_url}/compare{query}")
    settle(page, 120_000)
    verdict = page.locator('[data-testid="stAlert"]').filter(has_text="per 1,000 questions").first
    verdict.wait_for()
    text = verdict.locator('[data-testid="stMarkdownContainer"]').first.inner_text().strip()
    assert text.startswith("Recommend "), text
    first = text.split("\n", 1)[0]
    assert " · saves " in first or " · costs " in first, first
    assert first.endswith(("· confident", "· not yet")), first
    plot = chart(page, "Accuracy against cost per 1,000 questions")
    shot(page, f"decision-compare-{width}x{height}.png")
    boxes = plot.evaluate(TEXT_BOXES)
    labels = [b["text"] for b in boxes]
    assert any(t.strip() in {"1", "1, 2", "1, 2, 3"} or t.startswith("1, ") for t in labels), labels
    assert not overlaps(boxes), overlaps(boxes)
    tick = first_x_tick(plot)
    assert tick == "$0" and not tick.startswith(("-", "\u2212")), tick
    assert plot.bounding_box()["width"] > 0.6 * width  # full width, not half the page


@pytest.mark.parametrize("width, height, query", SIZES)
def test_results_accuracy_against_cost_reads(new_page, app_url, width, height, query):
    page = new_page(width, height)
    page.goto(app_url)
    settle(page, 120_000)
    page.goto(f"{app_url}/results{query}")
    settle(page, 120_000)
    page.get_by_role("tab", name="Accuracy vs cost").click()
    settle(page)
    plot = chart(page, "against dollars per 1,000 questions")
    shot(page, f"decision-results-cost-{width}x{height}.png")
    boxes = plot.evaluate(TEXT_BOXES)
    assert not overlaps(boxes), overlaps(boxes)
    tick = first_x_tick(plot)
    assert tick == "$0", tick
