"""Presenter mode in a real browser at a projector's 1024x576: entered by each route a teacher has (the
link /?present=1 then "Teach it"; the sidebar's toggle then the Lesson; the URL on any page, also in a
browser that remembers an open sidebar), the sidebar is collapsed; and every Lesson step (step 3 in each
of its three views) fits the screen: every plot at least 200 px tall, no chart text under 16 px, no
chart text cut at the plot's right edge, nothing wider or taller than the window."""

from __future__ import annotations

import pytest

from components.report.lesson import STEPS
from tests.e2e.appserver import settle

pytestmark = pytest.mark.browser
WIDTH, HEIGHT = 1024, 576
OPEN_SIDEBAR = '[data-testid="stSidebar"][data-collapsed="false"]'


def calm(page) -> None:
    text = page.inner_text("body")
    assert "Traceback" not in text and "Something went wrong" not in text, text[-600:]


def sidebar_open(page) -> bool:
    return page.locator(OPEN_SIDEBAR).count() > 0


def assert_collapsed(page, where: str) -> None:
    """The sidebar is collapsed and the main area has the width: waits (up to 15 s) for that state, since
    the sidebar slides shut over a transition after its attribute flips, then asserts it."""
    settled = (
        f"() => {{ if (document.querySelector('{OPEN_SIDEBAR}')) return false;"
        " const m = document.querySelector('[data-testid=\"stMain\"]');"
        f" if (!m) return false; const b = m.getBoundingClientRect(); return b.x < 5 && b.width > {WIDTH - 5}; }}"
    )
    try:
        page.wait_for_function(settled, timeout=15_000)
    except Exception:  # the assertions below name the route and what was seen
        pass
    assert not sidebar_open(page), f"sidebar open after {where}"
    main = page.locator('[data-testid="stMain"]').bounding_box()
    assert main and main["x"] < 5 and main["width"] > WIDTH - 5, f"main area {main} after {where}"


def open_sidebar(page) -> None:
    page.locator('[data-testid="stExpandSidebarButton"]').click()
    page.wait_for_selector(OPEN_SIDEBAR)


# Every text of every chart: its font size, and how far it reaches past its own chart's right edge.
CHART_TEXTS = """() => [...document.querySelectorAll('.js-plotly-plot')].flatMap((plot, i) => {
    const edge = plot.getBoundingClientRect().right;
    return [...plot.querySelectorAll('svg text')].filter(t => t.textContent.trim() && t.getClientRects().length)
        .map(t => ({plot: i, text: t.textContent.trim().slice(0, 40),
                    size: parseFloat(getComputedStyle(t).fontSize),
                    past: t.getBoundingClientRect().right - edge}));
})"""


# The plot area inside each chart (its panels, top of the first to bottom of the last), not its frame.
PLOT_AREAS = """() => [...document.querySelectorAll('.js-plotly-plot')].map(plot => {
    const boxes = [...plot.querySelectorAll('.draglayer .nsewdrag')].map(r => r.getBoundingClientRect());
    return boxes.length ? Math.round(Math.max(...boxes.map(b => b.bottom)) - Math.min(...boxes.map(b => b.top))) : 0;
})"""
MIN_AREA = 150


def assert_fits(page, where: str) -> None:
    try:
        page.wait_for_function(
            "() => [...document.querySelectorAll('.js-plotly-plot .main-svg')]"
            ".some(e => e.getBoundingClientRect().height > 0)",
            timeout=60_000,
        )
    except Exception as e:  # named below
        raise AssertionError(f"{where}: no chart drawn") from e
    page.wait_for_timeout(600)
    calm(page)
    plots = page.locator(".js-plotly-plot")
    assert plots.count() >= 1, where
    for i in range(plots.count()):
        box = plots.nth(i).bounding_box()
        assert box and box["height"] >= 200, f"{where}: plot {i} is {box and round(box['height'])} px tall"
        assert box["x"] + box["width"] <= WIDTH + 1, f"{where}: plot {i} reaches past the window ({box})"
        assert box["y"] + box["height"] <= HEIGHT + 1, f"{where}: plot {i} ends below the screen ({box})"
    areas = page.evaluate(PLOT_AREAS)
    assert all(a >= MIN_AREA for a in areas), (
        f"{where}: plot areas {areas} px tall (legend or notes crowd them)"
    )
    texts = page.evaluate(CHART_TEXTS)
    assert texts, f"{where}: no chart text found"
    small = [t for t in texts if t["size"] < 16]
    assert not small, f"{where}: chart text under 16 px: {small[:5]}"
    cut = [t for t in texts if t["past"] > 1]
    assert not cut, f"{where}: chart text cut at the right: {cut[:5]}"
    wide = page.evaluate(
        "() => [document.documentElement.scrollWidth, "
        "document.querySelector('[data-testid=\"stMain\"]').scrollWidth]"
    )
    assert max(wide) <= WIDTH, f"{where}: the page is {wide} px wide in a {WIDTH} px window"
    lower = page.evaluate(
        "() => Math.max(...[document.scrollingElement, ...document.querySelectorAll("
        '\'[data-testid="stMain"], [data-testid="stAppViewContainer"]\')]'
        ".map(e => e.scrollHeight - e.clientHeight))"
    )
    assert lower <= 1, f"{where}: the step is {lower} px taller than the screen"


def test_link_then_teach_it_opens_the_lesson_with_the_sidebar_collapsed(new_page, app_url):
    page = new_page(WIDTH, HEIGHT)
    page.goto(f"{app_url}/?present=1")
    settle(page, 90_000)
    assert_collapsed(page, "/?present=1")
    page.get_by_role("link", name="Teach it").click()
    settle(page, 90_000)
    page.get_by_text("Lesson · 1.").first.wait_for()
    assert "present=1" in page.url
    assert_collapsed(page, '"Teach it"')


def test_sidebar_toggle_then_lesson_collapses_the_sidebar_on_each_page(new_page, app_url):
    page = new_page(WIDTH, HEIGHT)
    page.goto(app_url)
    settle(page, 90_000)
    assert sidebar_open(page), "at 1024 px the sidebar starts open in normal mode"
    page.locator('[data-testid="stSidebar"]').get_by_text("Presenter mode").click()
    settle(page)
    assert_collapsed(page, "the sidebar's toggle")
    assert "present=1" in page.url
    open_sidebar(page)  # the sidebar's own page links: the page opened collapses it again
    page.locator('[data-testid="stSidebarNav"]').get_by_role("link", name="Lesson").click()
    settle(page, 90_000)
    page.get_by_text("Lesson · 1.").first.wait_for()
    assert_collapsed(page, "the sidebar's link to the Lesson")
    open_sidebar(page)  # opened by hand on the same page: it stays open through a rerun
    page.get_by_role("button", name="Next →").first.click()
    settle(page)
    assert sidebar_open(page), "a sidebar the presenter opened stays open on the same page"
    page.locator('[data-testid="stSidebar"]').get_by_text("Presenter mode").click()  # off again
    settle(page)
    assert sidebar_open(page) and "present=1" not in page.url


@pytest.mark.parametrize("path", ["lesson?step=2", "playground", "results", "papers"])
def test_the_url_on_any_page_collapses_the_sidebar(new_page, app_url, path):
    page = new_page(WIDTH, HEIGHT)
    page.goto(app_url)  # a browser that has opened the sidebar by hand remembers it open
    settle(page, 90_000)
    page.locator('[data-testid="stSidebarCollapseButton"] button').evaluate("b => b.click()")
    page.wait_for_function(f"() => !document.querySelector('{OPEN_SIDEBAR}')")
    open_sidebar(page)
    sep = "&" if "?" in path else "?"
    page.goto(f"{app_url}/{path}{sep}present=1")
    settle(page, 90_000)
    calm(page)
    assert_collapsed(page, f"/{path}{sep}present=1")


def test_every_lesson_step_fits_a_projector(new_page, app_url):
    page = new_page(WIDTH, HEIGHT)
    page.goto(f"{app_url}/lesson?present=1&step=1")
    settle(page, 90_000)
    for n in range(1, len(STEPS) + 1):
        page.get_by_text(f"Lesson · {n}. {STEPS[n - 1].title}").wait_for()
        assert_collapsed(page, f"step {n}")
        assert_fits(page, f"step {n}")
        if n == 3:
            for view in ("Accuracy", "Likelihood (ours)", "The prompt"):
                page.locator('[data-testid="stButtonGroup"]').get_by_text(view, exact=True).click()
                settle(page)
                assert_fits(page, f"step 3, {view}")
        if n < len(STEPS):
            page.get_by_role("button", name="Next →").first.click()
            settle(page)
    assert page.get_by_role("button", name="Next →").first.is_disabled()
