"""Keyboard use in a real browser (Debian chromium via playwright): Tab through Home, a chart's toolbar
costs at most three Tab stops (download, reset axes, full screen; it had eight), and a page link reached
by the keyboard has a visible ring (3 px, dark blue: webapp/ui/presenter.py COMMON_CSS)."""

from __future__ import annotations

import pytest

from tests.e2e.appserver import settle

pytestmark = pytest.mark.browser

WHERE = """() => {
    const e = document.activeElement;
    const chart = e.closest('[data-testid="stPlotlyChart"], .js-plotly-plot');
    const style = getComputedStyle(e);
    return {chart: chart ? [...document.querySelectorAll('.js-plotly-plot')].indexOf(chart.closest('.js-plotly-plot') || chart) : -1,
            text: (e.innerText || e.getAttribute('data-title') || '').trim().slice(0, 40),
            outline: style.outlineStyle + ' ' + style.outlineWidth, tag: e.tagName};
}"""


def test_a_chart_is_three_tab_stops_and_a_focused_link_shows_a_ring(page, app_url):
    page.goto(app_url)
    settle(page)
    page.wait_for_selector(".js-plotly-plot .main-svg")
    page.locator("h1").first.click()
    stops = []
    for _ in range(60):
        page.keyboard.press("Tab")
        stops.append(page.evaluate(WHERE))
    per_chart: dict[int, int] = {}
    end = next((i for i, s in enumerate(stops) if s["tag"] == "BODY"), len(stops))  # one pass of the page
    for s in stops[:end]:
        if s["chart"] >= 0:
            per_chart[s["chart"]] = per_chart.get(s["chart"], 0) + 1
    assert per_chart and max(per_chart.values()) <= 3, per_chart
    decide = next(s for s in stops if "Decide" in s["text"])
    assert decide["outline"] == "solid 3px", decide
