"""The one-file HTML report (components/report/report_html.py) stays as wide as the window whatever its
strings: a task id of 2,000 characters without a space, a long arm label, a long answer. Measured in a
real browser (Debian chromium driven by playwright): the page's scroll width at a 1,280 px window."""

from __future__ import annotations

import pandas as pd
import pytest

from components.report import compare as cmp
from components.report import report_html
from tests.e2e.appserver import CHROMIUM, CHROMIUM_ARGS

LONG = "x" * 2000  # one unbroken string
WIDTH = 1280


def report() -> str:
    rows = []
    for arm, scores in (("A" + "a" * 300, [1, 0, 1, 1]), ("B", [0, 1, 1, 0])):
        for i, s in enumerate(scores):
            rows.append(
                {
                    "task": f"{LONG}-{i}",
                    "length": 1000,
                    "position": 0.5,
                    "strategy": arm,
                    "params": "{}",
                    "model": "openai:gpt-4o-mini",
                    "metric": "fuzzy",
                    "score": s,
                    "error": None,
                    "calls": 1,
                    "input_tokens": 1000,
                    "output_tokens": 10,
                    "latency_s": 0.5,
                    "question": "q" * 3000,
                    "answers": ["z" * 2500],
                    "answer": "y" * 4000,
                }
            )
    t = cmp.prepare(pd.DataFrame(rows))
    labels = list(t["arm"].unique())
    result = cmp.compare(t, labels)
    return report_html.build(
        result,
        figures=[],
        failures=cmp.failures(t, labels[0], labels[1]),
        pair=(labels[0], labels[1]),
        sources=["s" * 2000],
    )


def test_long_unbroken_strings_wrap_inside_the_window(tmp_path):
    sync_playwright = pytest.importorskip("playwright.sync_api").sync_playwright
    page_file = tmp_path / "report.html"
    page_file.write_text(report(), encoding="utf-8")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": WIDTH, "height": 900})
            page.goto(page_file.as_uri())
            width = page.evaluate("document.documentElement.scrollWidth")
            widest = page.evaluate(
                "Math.max(...[...document.querySelectorAll('table')].map(t => t.scrollWidth))"
            )
            text = page.inner_text("body")
            # each Pareto word ("dominated", "on the front") on one line of its cell: never broken mid-word
            lines = page.evaluate(
                "[...document.querySelectorAll('td.word')].map(td => { const r = document.createRange();"
                " r.selectNodeContents(td); return new Set([...r.getClientRects()].map(x => x.top)).size; })"
            )
        finally:
            browser.close()
    assert LONG in text.replace("\n", "")  # the whole id is there, wrapped, not cut
    assert width <= WIDTH and widest <= WIDTH, (width, widest)
    assert lines and all(n == 1 for n in lines), lines
