"""AppTest of the Compare page: arms from a store, the tables, the recommendation, the state in the URL,
session-edited prices and the report."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from components.report import compare
from components.run.store import RunStore
from tests.webapp.runs_fixture import fill

PAGE = str(Path(__file__).resolve().parents[2] / "webapp" / "compare" / "page.py")
ARMS = ["baseline · fake-model", "reprompt r=1000 · fake-model", "rr r=1000 · fake-model"]


@pytest.fixture
def stores(tmp_path, monkeypatch):
    monkeypatch.setenv("LITM_DB", str(tmp_path / "runs" / "litm.sqlite"))
    monkeypatch.setenv("LITM_SHIPPED_RUNS", str(tmp_path / "shipped"))
    return tmp_path


def run(at: AppTest | None = None, timeout=90) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=timeout) if at is None else at
    at.run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    return at


def test_empty_store(stores):
    at = run()
    assert "No runs yet" in at.info[0].value


def test_arms_pairs_recommendation_and_url(stores):
    db = fill(stores / "runs" / "litm.sqlite") or stores / "runs" / "litm.sqlite"
    at = run()
    chosen = at.multiselect(key="cmp_arms").value
    assert sorted(chosen) == ARMS  # three arms: all chosen by default, most accurate first
    frames = [d.value for d in at.dataframe]
    arms = next(f for f in frames if "arm" in f.columns)
    expected = compare.compare(RunStore(db).trials_frame(), chosen)
    assert list(arms["arm"]) == chosen and list(arms["n"]) == list(expected["arms"]["n"])
    pairs = next(f for f in frames if "matched" in f.columns)
    assert list(pairs["p"]) == pytest.approx([p["p_value"] for p in expected["pairs"]])
    assert list(pairs["matched"]) == [p["n_matched"] for p in expected["pairs"]]
    rec = at.info[0].value.replace("\\", "")
    assert rec == expected["recommendation"]
    assert len(at.get("plotly_chart")) == 3  # Pareto, U-curves, differences
    # the view is in the URL
    at.multiselect(key="cmp_arms").set_value(ARMS[:2]).run()
    assert at.query_params["arm"] == ARMS[:2]
    link = at.code[0].value
    assert "arm=baseline" in link and "reprompt+r%3D1000" in link


def test_url_opens_the_same_view(stores):
    fill(stores / "runs" / "litm.sqlite")
    at = AppTest.from_file(PAGE, default_timeout=90)
    at.query_params["arm"] = ARMS[1:]
    at.query_params["length"] = "2000"
    at.query_params["batch"] = "1"
    run(at)
    assert at.multiselect(key="cmp_arms").value == ARMS[1:]
    assert at.selectbox(key="cmp_length").value == "2000" and at.toggle(key="cmp_batch").value is True
    arms = next(d.value for d in at.dataframe if "arm" in d.value.columns)
    assert list(arms["n"]) == [18, 16]  # length 2000 only: 6 tasks x 3 positions; rr lost 2 to errors


def test_repricing_and_session_prices(stores):
    fill(stores / "runs" / "litm.sqlite")
    at = run()
    at.selectbox(key="cmp_price_model").set_value("openai:gpt-4o-mini").run()
    arms = next(d.value for d in at.dataframe if "arm" in d.value.columns)
    # the fixture stores 120 input and 8 output tokens per call; baseline makes 1 call
    cost = arms.set_index("arm")["$ per 1,000 questions"]
    assert cost["baseline · fake-model"] == pytest.approx(1000 * (120 * 0.15 + 8 * 0.6) / 1e6)
    assert cost["rr r=1000 · fake-model"] == pytest.approx(2 * 1000 * (120 * 0.15 + 8 * 0.6) / 1e6)  # two calls
    at.toggle(key="cmp_batch").set_value(True).run()
    arms = next(d.value for d in at.dataframe if "arm" in d.value.columns)
    cost = arms.set_index("arm")["$ per 1,000 questions"]
    assert cost["baseline · fake-model"] == pytest.approx(1000 * (120 * 0.15 + 8 * 0.6) / 1e6 / 2)
    assert any("dated" in c.value for c in at.caption)
    # prices edited for the session re-price the arms
    at.session_state["cmp_prices"] = {"openai": {"gpt-4o-mini": {"input": 1.0, "output": 0.0, "source": "me",
                                                                 "checked": "today"}}}
    at.run()
    arms = next(d.value for d in at.dataframe if "arm" in d.value.columns)
    cost = arms.set_index("arm")["$ per 1,000 questions"]
    assert cost["baseline · fake-model"] == pytest.approx(1000 * 120 * 1.0 / 1e6 / 2)


def test_report_is_one_self_contained_escaped_file(stores):
    from components.report import report_html
    from webapp.compare import parts as compareview

    fill(stores / "runs" / "litm.sqlite")
    t = compare.prepare(RunStore(stores / "runs" / "litm.sqlite").trials_frame())
    t.loc[t["arm"] == ARMS[0], "answer"] = "<script>alert(1)</script>"
    result = compare.compare(t, ARMS)
    result["trials"] = t
    figures = [compareview.pareto(result["arms"]), compareview.u_curves(t, ARMS)]
    page = report_html.build(result, figures=figures, failures=compare.failures(t, ARMS[0], ARMS[1]),
                             pair=(ARMS[0], ARMS[1]), sources=["demo <sweep>"])
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "demo &lt;sweep&gt;" in page and page.count("<html") == 1
    import html
    import re

    assert not re.search(r"<script[^>]*\bsrc=", page)  # plotly.js is inlined: the file opens offline
    assert "Plotly.newPlot" in page and len(page) > 1_000_000
    assert html.escape(result["recommendation"]) in page


@pytest.mark.parametrize("page, key", [("results", "res_sweeps"), ("compare", "cmp_sweeps")])
def test_a_sweep_link_opens_results_and_compare_filtered(stores, page, key):
    """Experiments' "See the results" and "Compare its arms" links carry ?sweep=<key>."""
    db = stores / "runs" / "litm.sqlite"
    fill(db)
    fill(db, name="second sweep", model="other-model", seed=1)
    at = AppTest.from_file(str(Path(PAGE).parents[1] / page / "page.py"), default_timeout=90)
    at.query_params["sweep"] = "your runs#2"
    run(at)
    assert at.multiselect(key=key).value == ["your runs#2"]
    if key == "cmp_sweeps":  # only the second sweep's arms are offered
        assert set(at.multiselect(key="cmp_arms").options) == {a.replace("fake-model", "other-model") for a in ARMS}


def test_planner_fills_the_experiments_grid(stores):
    fill(stores / "runs" / "litm.sqlite")
    at = run()
    at.selectbox(key="cmp_pair").set_value("rr r=1000 · fake-model  vs  baseline · fake-model")
    run(at)
    tasks = int(next(m.value for m in at.metric if m.label == "Tasks needed").replace(",", ""))
    at.button(key="cmp_to_experiments").click()
    run(at)
    plan = at.session_state["sweep_plan"]  # handed to Experiments, which applies it once
    assert plan["strategies"] == ["baseline", "rr"] and plan["params"] == {"r": [1000]}
    experiments = AppTest.from_file(str(Path(PAGE).parents[1] / "experiments" / "page.py"), default_timeout=90)
    experiments.session_state["sweep_plan"] = plan
    experiments.run()
    assert not experiments.exception, experiments.exception
    ss = experiments.session_state
    assert ss["exp_strategies"] == ["baseline", "rr"] and ss["exp_param_r"] == [1000]
    assert ss["exp_lengths"] == [2000, 4000] and ss["exp_positions"] == [0.0, 0.5, 1.0] and plan["n_tasks"] == tasks
    available = int(next(c.value for c in experiments.caption if c.value.endswith("tasks available.")).split()[0]
                    .replace(",", ""))
    assert ss["exp_n_tasks"] == min(tasks, available)  # capped at the task set's size


def test_results_view_is_in_its_url(stores):
    fill(stores / "runs" / "litm.sqlite")
    at = AppTest.from_file(str(Path(PAGE).parents[1] / "results" / "page.py"), default_timeout=90)
    at.run()
    assert not at.exception
    at.multiselect(key="res_strategies").set_value(["rr"])
    at.run()
    assert not at.exception
    assert "strategy=rr" in at.code[0].value and "sweep=" not in at.code[0].value
    again = AppTest.from_file(str(Path(PAGE).parents[1] / "results" / "page.py"), default_timeout=90)
    again.query_params["strategy"] = ["rr"]
    again.query_params["metric"] = "subspan_em"
    again.run()
    assert not again.exception
    assert again.multiselect(key="res_strategies").value == ["rr"]
    assert again.selectbox(key="res_metric").value == "subspan_em"


def test_failures_read_their_texts_from_the_stores(stores):
    """The page holds summary columns only (components.run.reader.browse): a pair's failures fetch
    the question, gold answers and both answers by trial id, the first `limit` of them."""
    from components.report import report_html
    from components.report.sweeps import combine_stores
    from components.run.reader import browse
    from webapp.compare import parts as compareview

    path = fill(stores / "runs" / "litm.sqlite")
    trials, sweeps = browse(path, readonly=False)
    assert "answer" not in trials
    t = compare.prepare(combine_stores([("your runs", False, str(path), trials, sweeps)])[0])
    everything = compare.failures(compare.prepare(RunStore(path).trials_frame()), ARMS[0], ARMS[1])
    fail, total = compareview.failures(t, (ARMS[0], ARMS[1]), limit=3)
    assert total == len(everything) > 3 and len(fail) == 3
    assert list(fail["answer_a"]) == list(everything["answer_a"].head(3))
    assert list(fail["answer_b"]) == list(everything["answer_b"].head(3))
    assert set(fail["question"]) == {"Where?"} and all(a == ["Paris"] for a in fail["answers"])
    assert not [c for c in fail if c.startswith(("trial_id_", "store_path_", "shipped_"))]
    result = compare.compare(t, ARMS)
    page = report_html.build(result, figures=[], failures=fail, failures_total=total, pair=(ARMS[0], ARMS[1]))
    assert f"First 3 of {total}." in page


def test_a_pair_with_no_matched_trials_is_said_not_shown_as_none(stores):
    db = stores / "runs" / "litm.sqlite"
    fill(db)
    fill(db, name="other sweep", model="other-model", lengths=(8000,))  # no cell in common with the first
    at = run()
    a, b = "baseline · fake-model", "baseline · other-model"
    at.multiselect(key="cmp_arms").set_value([a, b]).run()
    assert not at.exception
    said = [c.value.replace("\\", "") for c in at.caption]
    assert any("No matched trials" in c and f"{a} vs {b}" in c for c in said), said
    assert not any("matched" in d.value.columns for d in at.dataframe)  # no table of empty (None) numbers
