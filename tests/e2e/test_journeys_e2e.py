"""The journeys in a real browser (Debian chromium via playwright): Home tells the story above the fold; a
projector (1024x576, presenter mode) shows every Lesson step without scrolling and Results' chart on the
first screen; an exported SVG of the Results U-curve says whose the curve is; Compare, opened from the
sidebar after a sweep in the same browser, lists that sweep's arms; a 2,000-character task id never
widens a page."""

from __future__ import annotations

import re
import sqlite3

import pytest

from components.report.lesson import STEPS
from tests.e2e.appserver import calm, llm_server, settle, streamlit_app
from tests.webapp.runs_fixture import fill

pytestmark = pytest.mark.browser

OVERFLOW = """() => {
  const els = [document.scrollingElement, ...document.querySelectorAll(
      '[data-testid="stMain"], [data-testid="stAppViewContainer"], [data-testid="stApp"], section')];
  let worst = 0;
  for (const e of els) { if (e) worst = Math.max(worst, e.scrollHeight - e.clientHeight); }
  return worst;
}"""
WIDTH = """() => {
  const els = [document.scrollingElement, ...document.querySelectorAll('[data-testid="stMain"]')];
  return Math.max(...els.map(e => e.scrollWidth - e.clientWidth));
}"""


CONTRAST = """() => {
  const lum = c => { const v = c / 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
  const rgb = s => (s.match(/[\\d.]+/g) || []).map(Number);
  const L = ([r, g, b]) => 0.2126 * lum(r) + 0.7152 * lum(g) + 0.0722 * lum(b);
  const bg = el => { for (let e = el; e; e = e.parentElement) { const c = rgb(getComputedStyle(e).backgroundColor);
      if (c.length >= 3 && (c.length < 4 || c[3] > 0.5)) return c; } return [255, 255, 255]; };
  let worst = [99, ''];
  for (const el of document.querySelectorAll('[data-testid="stMain"] *')) {
    if (el.closest('svg, button[disabled], [aria-disabled="true"], input, textarea')) continue;
    const own = [...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
    const r = el.getBoundingClientRect();
    if (!own || !r.width || r.top > innerHeight || r.bottom < 0) continue;
    const st = getComputedStyle(el); if (st.visibility === 'hidden' || +st.opacity < 0.5) continue;
    // a slider's value label floats above its thumb (a red dot that is its parent): it is read on white
    const fg = rgb(st.color), b = el.closest('[data-testid="stSliderThumbValue"]') ? [255, 255, 255] : bg(el);
    const a = fg.length > 3 ? fg[3] : 1;
    const mix = [0, 1, 2].map(i => a * fg[i] + (1 - a) * b[i]);
    const [hi, lo] = [L(mix), L(b)].sort((x, y) => y - x);
    const ratio = (hi + 0.05) / (lo + 0.05);
    if (ratio < worst[0]) worst = [ratio, el.textContent.trim().slice(0, 40) + ' <' + el.tagName + ' ' +
      (el.closest('[data-testid]') || el).getAttribute('data-testid') + ' ' + st.color + ' on ' + b + '>'];
  }
  return worst;
}"""
SIZES = """() => [...document.querySelectorAll('[data-testid="stSliderThumbValue"], [data-testid="stMetricLabel"] p')]
  .map(e => [parseFloat(getComputedStyle(e).fontSize), e.scrollWidth <= e.clientWidth + 1, e.textContent])"""


def readable(page) -> None:
    """Text at 4.5:1 contrast or more; slider values and metric labels at 16 px or more, never cut."""
    ratio, text = page.evaluate(CONTRAST)
    assert ratio >= 4.5, f"{ratio:.2f}:1 contrast: {text!r}"
    for size, whole, text in page.evaluate(SIZES):
        assert size >= 16 and whole, (size, whole, text)


@pytest.mark.parametrize("width,height", [(1024, 576), (1440, 900)])
def test_home_draws_the_published_u_and_this_apps_curve_above_the_fold(new_page, app_url, width, height):
    page = new_page(width, height)
    page.goto(app_url + ("/?present=1" if width == 1024 else ""))
    settle(page, 90_000)
    page.wait_for_selector(".js-plotly-plot .main-svg")
    page.wait_for_timeout(500)
    calm(page)
    legend = " ".join(
        page.eval_on_selector_all(".js-plotly-plot .legendtext", "els => els.map(e => e.textContent)")
    )
    assert "GPT-3.5-Turbo" in legend and "LITM Table 6" in legend, legend
    assert "Qwen2.5 Coder 0.5B" in legend and "this app" in legend, legend
    assert page.locator(".js-plotly-plot .scatterlayer .trace").count() >= 2
    box = page.locator(".js-plotly-plot").first.bounding_box()
    assert box and box["y"] + box["height"] <= height + 1, box  # the whole chart on the first screen
    for door in ("Teach it", "Try it on your text", "Decide"):
        link = page.get_by_role("link", name=door).bounding_box()
        assert link and link["y"] + link["height"] <= height, door


def test_decide_opens_the_shipped_comparison_of_baseline_reprompt_and_rr(new_page, app_url):
    """Home's Decide door: Compare on the shipped run of Baseline, Reprompt and R&R, not any other sweep."""
    page = new_page(1440, 900)
    page.goto(app_url)
    settle(page, 90_000)
    page.get_by_role("link", name="Decide").click()
    page.get_by_text("Recommend").first.wait_for(timeout=90_000)
    assert "sweep=shipped+local-qwen-facts" in page.url, page.url
    arms = page.locator('[data-testid="stMultiSelect"]').nth(1).inner_text()
    for arm in ("Baseline", "Reprompt", "R&R"):
        assert arm in arms, arms


def test_the_lessons_last_link_opens_the_shipped_150_question_run(new_page, app_url):
    page = new_page(1440, 900)
    page.goto(f"{app_url}/lesson?step={len(STEPS)}")
    settle(page, 90_000)
    page.get_by_role("link", name="See real curves").click()
    page.wait_for_selector(".js-plotly-plot .main-svg", timeout=90_000)
    sweeps = page.locator('[data-testid="stMultiSelect"]').first.inner_text()
    assert "local-qwen-nq-litm20" in sweeps and "sweep=shipped+local-qwen-nq-litm20" in page.url, sweeps


def test_every_lesson_step_fits_a_projector_in_presenter_mode(new_page, app_url):
    page = new_page(1024, 576)
    page.goto(f"{app_url}/lesson?present=1&step=1")
    settle(page, 90_000)
    for n in range(1, len(STEPS) + 1):
        page.get_by_text(f"Lesson · {n}. {STEPS[n - 1].title}").wait_for()
        page.wait_for_selector(".js-plotly-plot .main-svg")
        page.wait_for_timeout(600)
        calm(page)
        assert page.evaluate(OVERFLOW) <= 1, f"step {n} scrolls by {page.evaluate(OVERFLOW)} px"
        readable(page)
        question = page.get_by_text("Question for the room:").bounding_box()
        assert question and question["y"] + question["height"] <= 576, f"step {n}: the question is cut"
        if n < len(STEPS):
            page.get_by_role("button", name="Next →").first.click()
            settle(page)


def test_results_chart_comes_first_on_a_projector(new_page, app_url):
    page = new_page(1024, 576)
    page.goto(f"{app_url}/results?present=1")
    settle(page, 90_000)
    page.wait_for_selector(".js-plotly-plot .main-svg")
    calm(page)
    box = page.locator(".js-plotly-plot").first.bounding_box()
    assert box and box["y"] < 576 * 0.6, box  # starts within the first screen, well above its bottom
    readable(page)
    page.mouse.wheel(0, 3000)  # the summary under the chart: its metric labels whole and large
    page.wait_for_timeout(500)
    assert page.evaluate(SIZES), "the summary's metrics are on the page"
    readable(page)


def test_an_exported_svg_of_the_results_u_curve_says_whose_it_is(new_page, app_url, tmp_path):
    page = new_page(1440, 900)
    page.goto(f"{app_url}/results")
    settle(page, 90_000)
    page.locator('[data-testid="stSidebar"]').get_by_text("SVG", exact=True).click()
    settle(page)
    chart = page.locator(".js-plotly-plot").first
    chart.wait_for()
    chart.hover()
    with page.expect_download() as info:
        chart.locator('.modebar-btn[data-title^="Download plot"]').click()
    svg = tmp_path / "u-curve.svg"
    info.value.save_as(svg)
    text = svg.read_text(encoding="utf-8")
    assert info.value.suggested_filename.endswith(".svg")
    assert "Qwen2.5 Coder 0.5B" in text and "this app" in text  # the legend names the model and the source
    assert "Measured by this app with Qwen2.5 Coder 0.5B" in text  # the note travels with the image
    assert "LITM Table" in text


def test_compare_from_the_sidebar_lists_the_arms_of_this_browsers_sweep(tmp_path, new_page):
    with (
        llm_server() as v1,
        streamlit_app(
            env={"LITM_DB": str(tmp_path / "runs.sqlite"), "LITM_SHIPPED_RUNS": str(tmp_path / "none")}
        ) as url,
    ):
        fill(tmp_path / "runs.sqlite", name="a teacher's sweep")  # someone else's, made with `litm`
        tab = new_page(1440, 900)
        tab.goto(url)
        settle(tab)
        sidebar = tab.locator('[data-testid="stSidebar"]')
        sidebar.locator('[data-testid="stSelectbox"]').filter(has_text="Provider").click()
        tab.get_by_role("option", name=re.compile("OpenAI-compatible")).click()
        settle(tab)
        for label, value in (("Model", "loop"), ("Base URL", v1)):
            box = sidebar.get_by_role("textbox", name=label, exact=True)
            box.fill(value)
            box.press("Enter")
            settle(tab)
        sidebar.get_by_role("link", name="Experiments").first.click()
        settle(tab)
        tasks = tab.get_by_role("spinbutton", name="Tasks (the first n of the set)")
        tasks.fill("1")
        tasks.press("Enter")
        settle(tab)
        tab.get_by_role("button", name=re.compile("Run the sweep")).click()
        tab.get_by_text(re.compile(r"· finished ·")).first.wait_for(timeout=120_000)
        sidebar.get_by_role("link", name="Compare").first.click()  # no ?run= link needed
        settle(tab)
        tab.get_by_text("Accuracy against cost per 1,000 questions").first.wait_for(timeout=60_000)
        tags = tab.locator('[data-testid="stMultiSelect"]').nth(1).locator("[data-tag]")
        arms = [
            tags.nth(i).get_attribute("aria-label") or tags.nth(i).inner_text() for i in range(tags.count())
        ]
        assert len(arms) >= 2 and all("loop" in a for a in arms), arms  # this sweep's arms, not the teacher's
        assert "Your sweeps" in sidebar.inner_text()
        calm(tab)


def test_a_long_unbroken_task_id_never_widens_a_page(tmp_path, new_page):
    db = fill(tmp_path / "runs.sqlite", lengths=(2000,), positions=(0.0, 1.0), n_tasks=2, errors=0)
    long_id = "x" * 2000
    with sqlite3.connect(db) as c:
        c.execute("UPDATE trials SET task = ?", (long_id,))
    with streamlit_app(env={"LITM_DB": str(db), "LITM_SHIPPED_RUNS": str(tmp_path / "none")}) as url:
        page = new_page(1440, 900)
        page.goto(f"{url}/results")
        settle(page, 90_000)
        page.get_by_role("tab", name="Trials", exact=True).click()
        settle(page)
        page.get_by_text(re.compile("^Trial #")).first.wait_for(timeout=60_000)
        assert page.evaluate(WIDTH) <= 1, page.evaluate(WIDTH)
        calm(page)
