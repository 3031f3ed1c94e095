"""Browser test (Debian chromium via playwright): Results draws the likelihood measure as its own curve
under accuracy, its y axis in plain words, with a shape sentence under each chart; the metric
select offers the likelihood, and choosing it draws that curve alone. Shipped runs here are small
fixture stores named like the real ones (tests/webapp/test_app_results_shape.py builds them)."""

from __future__ import annotations

import pytest

from components.core.metrics import LIKELIHOOD
from tests.e2e.appserver import select, settle, streamlit_app
from tests.webapp.test_app_results_shape import litm_store, lp

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def app_url(tmp_path_factory):
    home = tmp_path_factory.mktemp("e2e-likelihood")
    shipped = home / "shipped"
    shipped.mkdir()
    litm_store(shipped / "local-qwen-nq-litm.sqlite", {0: 5, 9: 3, 19: 4}, 8)
    litm_store(
        shipped / "local-qwen-nq-likelihood20.sqlite",
        {},
        8,
        logprob=lp,
        measure_only=True,
        name="nq likelihood",
    )
    with streamlit_app(env={"LITM_DB": str(home / "runs.sqlite"), "LITM_SHIPPED_RUNS": str(shipped)}) as url:
        yield url


def charts_named(page) -> list[str]:
    """The y-axis titles of the plotly charts on the page, in order (spaces dropped: a title on two
    lines is two text spans)."""
    return page.evaluate("""() => [...document.querySelectorAll('.js-plotly-plot')].map(
        p => ((p.querySelector('.g-ytitle') || {}).textContent || '').replace(/\\s/g, ''))""")


LABEL = LIKELIHOOD.label.replace(" ", "")


def test_results_draws_the_likelihood_curve_with_accuracy(new_page, app_url):
    page = new_page(1440, 900)
    page.goto(f"{app_url}/results")
    settle(page, 90_000)
    page.wait_for_selector(".js-plotly-plot .main-svg")
    page.wait_for_function(
        f"""() => [...document.querySelectorAll('.js-plotly-plot .g-ytitle')]
        .some(t => t.textContent.replace(/\\s/g, '') === {LABEL!r})""",
        timeout=30_000,
    )
    titles = charts_named(page)
    assert titles[:2] == ["bestsubspanEM", LABEL], titles
    lik = page.locator(".js-plotly-plot").nth(1)
    assert lik.locator(".scatterlayer .trace").count() >= 2  # the band and the line
    assert "· 7 questions" in lik.inner_text()
    boxes = [page.locator(".js-plotly-plot").nth(i).bounding_box() for i in (0, 1)]
    assert boxes[1]["y"] > boxes[0]["y"] + boxes[0]["height"]  # under accuracy, as wide
    assert page.get_by_text("Shape of each curve").count() == 2
    assert page.get_by_text("1 question not scored at every position").count() == 1
    select(page, "Metric", LIKELIHOOD.label)
    page.wait_for_selector(".js-plotly-plot .main-svg")
    assert charts_named(page)[0] == LABEL
    assert "Traceback" not in page.content()
