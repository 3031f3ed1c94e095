"""Browser test (Debian chromium via playwright): Results shows the LLM judge's audit of a judged sweep
(tests/webapp/judge_store.py: 12 trials, kappa 2/3 against both string metrics, 3 trials to check) with
its agreement table, the disagreements with every verdict, hostile markup shown as text, and a download."""

from __future__ import annotations

import pytest

from tests.e2e.appserver import settle, streamlit_app
from tests.webapp.judge_store import HOSTILE_ANSWER, HOSTILE_QUESTION, judged_store

pytestmark = pytest.mark.browser

TITLE = "LLM judge: its agreement with best subspan EM and fuzzy match, 3 disagreements to check"


@pytest.fixture(scope="module")
def app_url(tmp_path_factory):
    home = tmp_path_factory.mktemp("e2e-judge")
    shipped = home / "shipped"
    shipped.mkdir()
    judged_store(home / "runs.sqlite")
    with streamlit_app(env={"LITM_DB": str(home / "runs.sqlite"), "LITM_SHIPPED_RUNS": str(shipped)}) as url:
        yield url


def cells(box, i: int) -> list[str]:
    """The cells of the i-th data grid in `box`, row by row: the grid draws them on a canvas and keeps an
    accessible table of what is in view beside it."""
    grid = box.locator('[data-testid="stDataFrame"] table').nth(i)
    return [c.text_content() for c in grid.locator('[role="gridcell"]').all()]


def test_results_shows_the_judge_audit_and_its_disagreements(new_page, app_url):
    page = new_page(1440, 900)
    page.goto(f"{app_url}/results")
    settle(page, 90_000)
    page.get_by_text(TITLE).click()
    settle(page)
    box = page.locator('[data-testid="stExpander"]').filter(has=page.get_by_text(TITLE))
    box.locator('[data-testid="stDataFrame"] table').nth(1).wait_for(state="attached")
    summary, wrong = (cells(box, i) for i in (0, 1))
    for row, label in zip((summary[:6], summary[6:]), ("best subspan EM", "fuzzy match"), strict=True):
        assert row[1:3] == [label, "12"] and row[5] == "2", summary  # against, n, disagreements
        assert [float(v) for v in row[3:5]] == pytest.approx([10 / 12, 2 / 3]), summary  # raw, kappa
    assert box.get_by_text("Disagreements to check (3 trials)").count() == 1
    assert HOSTILE_QUESTION in wrong and HOSTILE_ANSWER in wrong, wrong
    assert wrong.count("incorrect") >= 2 and "Shakespeare; William Shakespeare" in wrong
    assert page.locator("script:has-text('alert(1)')").count() == 0  # text, not markup
    assert page.locator("img[src='x']").count() == 0
    with page.expect_download() as got:
        page.get_by_role("button", name="Download the disagreements (CSV)").click()
    text = open(got.value.path(), encoding="utf-8").read()
    assert text.splitlines()[0].startswith("question,gold answers,model answer,judge,best subspan EM")
    assert len(text.strip().splitlines()) == 4 and "alert(2)" in text
    assert "Traceback" not in page.content()
