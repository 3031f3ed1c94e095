"""AppTest of the Compare page: arms from a store, the tables, the recommendation, the state in the URL,
session-edited prices and the report."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from components.report import charts, compare, verdict
from components.run.store import RunStore
from tests.webapp.runs_fixture import fill

PAGE = str(Path(__file__).resolve().parents[2] / "webapp" / "compare" / "page.py")
ARMS = ["Baseline · fake-model", "Reprompt · r=1,000 · fake-model", "R&R · r=1,000 · fake-model"]


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


def verdict_text(at: AppTest) -> str:
    """The verdict box (a success when confident, else an info), markdown escapes removed."""
    boxes = [b.value for b in [*at.success, *at.info] if b.value.startswith("**")]
    assert len(boxes) == 1, boxes
    return boxes[0].replace("\\", "")


def test_empty_store(stores):
    at = run()
    assert "No runs yet" in at.info[0].value


def test_arms_pairs_recommendation_and_url(stores):
    db = fill(stores / "runs" / "litm.sqlite") or stores / "runs" / "litm.sqlite"
    at = run()
    chosen = at.multiselect(key="cmp_arms").value
    assert sorted(chosen) == sorted(ARMS)  # three arms: all chosen by default, most accurate first
    frames = [d.value for d in at.dataframe]
    arms = next(f for f in frames if "arm" in f.columns)
    expected = compare.compare(RunStore(db).trials_frame(), chosen)
    numbers = charts.arm_numbers(expected.arms)  # the table is ranked as the chart numbers the arms
    assert list(arms["#"]) == sorted(numbers.values()) and list(arms["arm"]) == sorted(
        numbers, key=numbers.get
    )
    assert dict(zip(arms["arm"], arms["n"], strict=True)) == dict(
        zip(expected.arms["label"], expected.arms["n"], strict=True)
    )
    pairs = next(f for f in frames if "matched" in f.columns)
    assert list(pairs["p"]) == pytest.approx([p.p_value for p in expected.pairs])
    assert list(pairs["matched"]) == [p.n_matched for p in expected.pairs]
    rec = verdict_text(at)
    v = expected.verdict
    assert rec.startswith(f"**{v.line}**") and v.reasons in rec  # the one line first, then the reasons
    assert len(at.get("plotly_chart")) == 3  # Pareto, U-curves, differences
    # the view is in the URL
    at.multiselect(key="cmp_arms").set_value(ARMS[:2]).run()
    assert at.query_params["arm"] == ARMS[:2]
    link = at.code[0].value
    assert "arm=Baseline" in link and "Reprompt+%C2%B7+r%3D1%2C000" in link  # the names the page shows


def test_an_older_link_naming_arms_by_raw_ids_opens_them(stores):
    fill(stores / "runs" / "litm.sqlite")
    at = AppTest.from_file(PAGE, default_timeout=90)
    at.query_params["arm"] = ["reprompt r=1000 · fake-model", "rr r=1000 · fake-model"]
    run(at)
    assert at.multiselect(key="cmp_arms").value == ARMS[1:]


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
    n = dict(zip(arms["arm"], arms["n"], strict=True))
    assert [n[a] for a in ARMS[1:]] == [
        18,
        16,
    ]  # length 2000 only: 6 tasks x 3 positions; rr lost 2 to errors


def test_repricing_and_session_prices(stores):
    fill(stores / "runs" / "litm.sqlite")
    at = run()
    at.selectbox(key="cmp_price_model").set_value("openai:gpt-4o-mini").run()
    arms = next(d.value for d in at.dataframe if "arm" in d.value.columns)
    # the fixture stores 120 input and 8 output tokens per call; baseline makes 1 call
    cost = arms.set_index("arm")["$ per 1,000 questions"]
    assert cost["Baseline · fake-model"] == verdict.money(
        1000 * (120 * 0.15 + 8 * 0.6) / 1e6
    )  # money: "$0.023"
    assert cost["R&R · r=1,000 · fake-model"] == verdict.money(
        2 * 1000 * (120 * 0.15 + 8 * 0.6) / 1e6
    )  # two calls
    at.toggle(key="cmp_batch").set_value(True).run()
    arms = next(d.value for d in at.dataframe if "arm" in d.value.columns)
    cost = arms.set_index("arm")["$ per 1,000 questions"]
    assert cost["Baseline · fake-model"] == verdict.money(1000 * (120 * 0.15 + 8 * 0.6) / 1e6 / 2)
    assert any("dated" in c.value for c in at.caption)
    # prices edited for the session re-price the arms
    at.session_state["cmp_prices"] = {
        "openai": {"gpt-4o-mini": {"input": 1.0, "output": 0.0, "source": "me", "checked": "today"}}
    }
    at.run()
    arms = next(d.value for d in at.dataframe if "arm" in d.value.columns)
    cost = arms.set_index("arm")["$ per 1,000 questions"]
    assert cost["Baseline · fake-model"] == verdict.money(1000 * 120 * 1.0 / 1e6 / 2)


def test_report_is_one_self_contained_escaped_file(stores):
    from components.report import report_html
    from webapp.compare import parts as compareview

    fill(stores / "runs" / "litm.sqlite")
    t = compare.prepare(RunStore(stores / "runs" / "litm.sqlite").trials_frame())
    t.loc[t["arm"] == ARMS[0], "answer"] = "<script>alert(1)</script>"
    result = compare.compare(t, ARMS)
    figures = [compareview.pareto(result.arms), compareview.u_curves(t, ARMS)]
    page = report_html.build(
        result,
        figures=figures,
        failures=compare.failures(t, ARMS[0], ARMS[1]),
        pair=(ARMS[0], ARMS[1]),
        sources=["demo <sweep>"],
    )
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "demo &lt;sweep&gt;" in page and page.count("<html") == 1
    import html
    import re

    assert not re.search(r"<script[^>]*\bsrc=", page)  # plotly.js is inlined: the file opens offline
    assert "Plotly.newPlot" in page and len(page) > 1_000_000
    v = result.verdict
    assert f"<b>{html.escape(v.line)}</b>" in page and html.escape(v.reasons) in page
    assert "p (Holm)" in page


def test_report_names_what_was_measured_and_escapes_once(stores):
    """The report's header names the task set, lengths, positions, metric and n; "R&R" is escaped once
    for plotly ("R&amp;R", shown as "R&R"), never twice ("R&amp;amp;R", shown as "R&amp;R")."""
    from components.report import report_html
    from webapp.compare import parts as compareview

    fill(stores / "runs" / "litm.sqlite")
    t = compare.prepare(RunStore(stores / "runs" / "litm.sqlite").trials_frame()).assign(
        task_set="facts.jsonl"
    )
    result = compare.compare(t, ARMS)
    names = [tr.name for tr in compareview.u_curves(t, ARMS).data if tr.name]
    assert any(n.startswith("R&amp;R · r=1,000") for n in names) and not any("amp;amp;" in n for n in names)
    page = compareview.report(result, (ARMS[0], ARMS[1]), ["demo"]).decode()
    assert "amp;amp;" not in page
    head = dict(report_html.scope(result.trials, ARMS))
    assert head["task set"] == "facts.jsonl"
    lengths = sorted({int(x) for x in t["length"].dropna()})
    assert (
        head["length" if len(lengths) == 1 else "lengths"] == f"{', '.join(f'{v:,}' for v in lengths)} tokens"
    )
    assert head["positions"].split(", ")[0] == "0%" and "fuzzy match" in head["metric"]
    scored = int(t[t["arm"].isin(ARMS)]["ok"].notna().sum())
    assert head["n"].startswith(f"{scored:,} scored trials of ") and head["n"].endswith("over 3 arms")
    assert '<p class="scope"><b>task set</b> facts.jsonl' in page


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
        assert set(at.multiselect(key="cmp_arms").options) == {
            a.replace("fake-model", "other-model") for a in ARMS
        }


def test_planner_fills_the_experiments_grid(stores):
    fill(stores / "runs" / "litm.sqlite")
    at = run()
    at.selectbox(key="cmp_pair").set_value("R&R · r=1,000 · fake-model  vs  Baseline · fake-model")
    run(at)
    tasks = int(next(m.value for m in at.metric if m.label == "Tasks needed").replace(",", ""))
    at.button(key="cmp_to_experiments").click()
    run(at)
    plan = at.session_state["sweep_plan"]  # handed to Experiments, which applies it once
    assert plan["strategies"] == ["baseline", "rr"] and plan["params"] == {"r": [1000]}
    experiments = AppTest.from_file(
        str(Path(PAGE).parents[1] / "experiments" / "page.py"), default_timeout=90
    )
    experiments.session_state["sweep_plan"] = plan
    experiments.run()
    assert not experiments.exception, experiments.exception
    ss = experiments.session_state
    assert ss["exp_strategies"] == ["baseline", "rr"] and ss["exp_param_r"] == [1000]
    assert (
        ss["exp_lengths"] == [2000, 4000]
        and ss["exp_positions"] == [0.0, 0.5, 1.0]
        and plan["n_tasks"] == tasks
    )
    available = int(
        next(c.value for c in experiments.caption if c.value.endswith("tasks available."))
        .split()[0]
        .replace(",", "")
    )
    assert ss["exp_n_tasks"] == min(tasks, available)  # capped at the task set's size


def test_results_view_is_in_its_url(stores):
    fill(stores / "runs" / "litm.sqlite")
    at = AppTest.from_file(str(Path(PAGE).parents[1] / "results" / "page.py"), default_timeout=90)
    at.run()
    assert not at.exception
    at.multiselect(key="res_strategies").set_value(["rr"])
    at.run()
    assert not at.exception
    assert (
        "strategy=rr" in at.code[0].value and "sweep=your+runs%231" in at.code[0].value
    )  # opened on the newest sweep
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
    a, b = "Baseline · fake-model", "Baseline · other-model"
    at.multiselect(key="cmp_arms").set_value([a, b]).run()
    assert not at.exception
    said = [c.value.replace("\\", "") for c in at.caption]
    assert any("No matched trials" in c and f"{a} vs {b}" in c for c in said), said
    assert not any("matched" in d.value.columns for d in at.dataframe)  # no table of empty (None) numbers


def test_holm_p_values_sit_beside_the_raw_ones_and_equal_statsmodels(stores):
    from statsmodels.stats.multitest import multipletests

    fill(stores / "runs" / "litm.sqlite")
    at = run()
    pairs = next(d.value for d in at.dataframe if "matched" in d.value.columns)
    assert list(pairs.columns).index("p (Holm)") == list(pairs.columns).index("p") + 1
    assert len(pairs) == 3  # three arms: three pairs, one family
    expected = multipletests(list(pairs["p"]), method="holm")[1]
    assert list(pairs["p (Holm)"]) == pytest.approx(list(expected))
    assert (pairs["p (Holm)"] >= pairs["p"]).all() and (pairs["p (Holm)"] > pairs["p"]).any()


def test_the_verdict_leads_and_follows_the_margin_and_the_minimum_saving(stores):
    db = fill(stores / "runs" / "litm.sqlite") or stores / "runs" / "litm.sqlite"
    at = run()
    assert (
        at.number_input(key="cmp_margin").value == 5.0 and at.number_input(key="cmp_min_saving").value == 10.0
    )
    assert any("a margin of 5 points and a minimum saving of 10% of cost" in c.value for c in at.caption)
    at.selectbox(key="cmp_price_model").set_value("openai:gpt-4o-mini").run()  # rr costs twice the others
    trials = RunStore(db).trials_frame()

    def expected(margin, saving):
        return compare.compare(
            trials, ARMS, price_model="openai:gpt-4o-mini", margin=margin, min_saving=saving
        ).verdict

    strict = expected(0.05, 0.10)
    assert verdict_text(at).startswith(f"**{strict.line}**") and strict.line.endswith("not yet")
    # rr is the most accurate, but not significantly: a tie, so the cheaper reprompt, not yet
    assert (strict.recommend, strict.versus, strict.kind) == (
        "Reprompt · r=1,000 · fake-model",
        "R&R · r=1,000 · fake-model",
        "tie",
    )
    at.number_input(key="cmp_margin").set_value(
        30.0
    ).run()  # reprompt is within 30 points of rr, half the cost
    loose = expected(0.30, 0.10)
    assert loose.recommend == "Reprompt · r=1,000 · fake-model" and loose.confidence == "confident"
    text = verdict_text(at)
    assert (
        text.startswith(f"**{loose.line}**")
        and "· saves $0.023 per 1,000 questions against R&R · r=1,000 · fake-model · confident" in text
    )
    assert at.success, "a confident verdict is shown as a success"
    assert at.query_params["margin"] == "30"
    at.number_input(key="cmp_min_saving").set_value(60.0).run()  # a 50% saving is not enough now
    assert verdict_text(at).startswith(f"**{expected(0.30, 0.60).line}**")
    assert expected(0.30, 0.60).confidence == "not yet" and not at.success  # a tie again: not confident
    assert at.query_params["saving"] == "60"


def test_margin_and_saving_come_from_the_link(stores):
    fill(stores / "runs" / "litm.sqlite")
    at = AppTest.from_file(PAGE, default_timeout=90)
    at.query_params["margin"] = "30"
    at.query_params["saving"] = "20"
    at.query_params["price"] = "openai:gpt-4o-mini"
    run(at)
    assert (
        at.number_input(key="cmp_margin").value == 30.0
        and at.number_input(key="cmp_min_saving").value == 20.0
    )
    assert verdict_text(at).startswith("**Recommend Reprompt · r=1,000 · fake-model · saves")


def test_arms_that_carry_the_likelihood_get_its_curve_and_every_curve_its_shape(stores):
    import json

    from components.core.metrics import LIKELIHOOD

    store = RunStore(stores / "runs" / "litm.sqlite")
    sid = store.open_sweep(
        "both",
        {
            "name": "both",
            "strategies": ["litm", "baseline"],
            "documents": [20],
            "gold_index": [0, 9, 19],
            "n_tasks": 10,
        },
    )
    for strategy, drop in (("litm", 1.5), ("baseline", 0.5)):
        for index in (0, 9, 19):
            for t in range(10):
                hit = float((t + index) % 3 != 0)
                store.put_trial(
                    sid,
                    {
                        "trial_key": f"{strategy}-{index}-{t}",
                        "task": f"q{t}",
                        "question": "who?",
                        "answers": ["x"],
                        "strategy": strategy,
                        "params": "{}",
                        "model": "fake-model",
                        "documents": 20,
                        "gold_index": index,
                        "answer": "x",
                        "score": hit,
                        "subspan_em": hit,
                        "metric": "subspan-em",
                        "calls": 1,
                        "input_tokens": 100,
                        "output_tokens": 5,
                        "cost_usd": 0.0,
                        "latency_s": 0.1,
                        "answer_logprob": -4.0 - 0.2 * t - (drop if index == 9 else 0.0),
                    },
                )
    store.finish_sweep(sid, "done")
    store.close()
    at = run()
    charts = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    titles = [c["layout"]["yaxis"]["title"]["text"].replace("<br>", " ") for c in charts]
    assert LIKELIHOOD.label in titles
    said = [m.value.replace("\\", "") for m in at.markdown if m.value.startswith("**Shape of each curve**")]
    assert len(said) == 2 and "(accuracy, primary metric)" in said[0] and LIKELIHOOD.label in said[1]
    for text in said:
        assert "**Baseline · fake-model.**" in text and "**LITM QA · fake-model.**" in text
    assert "edges minus middle +1.50 nats" in said[1] and "edges minus middle +0.50 nats" in said[1]


def test_an_arm_that_only_scored_the_likelihood_reads_not_measured_not_nan(stores):
    store = RunStore(stores / "runs" / "litm.sqlite")
    sid = store.open_sweep(
        "lik",
        {
            "name": "lik",
            "strategies": ["litm", "baseline"],
            "documents": [20],
            "gold_index": [0, 19],
            "n_tasks": 4,
            "measure": "likelihood",
        },
    )
    for strategy in ("litm", "baseline"):
        for index in (0, 19):
            for t in range(4):
                store.put_trial(
                    sid,
                    {
                        "trial_key": f"{strategy}-{index}-{t}",
                        "task": f"q{t}",
                        "question": "who?",
                        "answers": ["x"],
                        "strategy": strategy,
                        "params": "{}",
                        "model": "fake-model",
                        "documents": 20,
                        "gold_index": index,
                        "calls": 1,
                        "input_tokens": 100,
                        "output_tokens": 0,
                        "cost_usd": 0.0,
                        "latency_s": 0.1,
                        "answer_logprob": -4.0 - t,
                    },
                )
    store.finish_sweep(sid, "done")
    store.close()
    at = run()
    table = next(d.value for d in at.dataframe if "arm" in d.value.columns)
    assert list(table["n"]) == [0, 0] and list(table["accuracy (95% CI)"]) == ["not measured"] * 2
    said = [c.value.replace("\\", "") for c in at.caption if "no answer was generated" in c.value]
    assert len(said) == 1 and "Baseline · fake-model" in said[0] and "LITM QA · fake-model" in said[0]
    assert "its curve is under the accuracy charts below" in said[0]  # the likelihood chart follows the table
    assert not [c for c in at.caption if "no task and cell in common" in c.value]  # not the reason here
    assert not at.exception


def test_arms_on_the_gold_index_axis_are_offered_the_published_curves(stores):
    """LITM's curves and the later papers' (same NQ experiment) for the arms' N; one chosen is drawn,
    its legend naming model, method and paper, the chart's note saying it is as published."""
    import json

    store = RunStore(stores / "runs" / "litm.sqlite")
    sid = store.open_sweep(
        "idx",
        {
            "name": "idx",
            "strategies": ["litm", "baseline"],
            "documents": [20],
            "gold_index": [0, 9, 19],
            "n_tasks": 4,
        },
    )
    for strategy in ("litm", "baseline"):
        for index in (0, 9, 19):
            for t in range(4):
                hit = float(t % 2 == 0)
                store.put_trial(
                    sid,
                    {
                        "trial_key": f"{strategy}-{index}-{t}",
                        "task": f"q{t}",
                        "question": "who?",
                        "answers": ["x"],
                        "strategy": strategy,
                        "params": "{}",
                        "model": "fake-model",
                        "documents": 20,
                        "gold_index": index,
                        "answer": "x",
                        "score": hit,
                        "subspan_em": hit,
                        "metric": "subspan-em",
                        "calls": 1,
                        "input_tokens": 100,
                        "output_tokens": 5,
                        "cost_usd": 0.0,
                        "latency_s": 0.1,
                    },
                )
    store.finish_sweep(sid, "done")
    store.close()
    at = run()
    picker = at.multiselect(key="cmp_u_overlay")
    assert picker.value == []  # none drawn until chosen
    title = "Mistral-7B · Pos2Distill · 20 documents · Pos2Distill Table 1 (2025)"
    assert title in picker.options and "GPT-3.5-Turbo · 20 documents · LITM Table 6 (2023)" in picker.options
    assert not any("10 documents" in o for o in picker.options)
    picker.set_value(["published (pos2distill2025, Table 1, Mistral-7B, Pos2Distill, 20 documents)"])
    run(at)
    spec = next(
        json.loads(c.proto.spec)
        for c in at.get("plotly_chart")
        if "Accuracy by position" in json.dumps(json.loads(c.proto.spec)["layout"].get("title", ""))
    )
    names = [t.get("name", "") for t in spec["data"]]
    assert title in names, names
    note = " ".join(json.dumps(spec["layout"]["title"], ensure_ascii=False).replace("<br>", " ").split())
    assert "as published" in note and "Pos2Distill Table 1 (2025)" in note


def test_opened_directly_it_shows_the_decision_run_home_decide_opens(tmp_path, monkeypatch):
    """No link, no sweep of this browser, the shipped runs only: Compare opens on the run Home's Decide
    door names (Baseline, Reprompt and R&R of the facts run), not on every sweep's arms (the multi-question
    arms of the SQuAD run ranked first)."""
    from webapp.services import shipped

    monkeypatch.setenv("LITM_DB", str(tmp_path / "runs" / "litm.sqlite"))
    monkeypatch.setenv("LITM_SHIPPED_RUNS", str(Path(__file__).resolve().parents[2] / "sample_docs" / "runs"))
    at = run(timeout=180)
    key = shipped.sweep_key(shipped.DECISION_RUN)
    assert key and at.multiselect(key="cmp_sweeps").value == [key]
    arms = at.multiselect(key="cmp_arms").value
    assert sorted(a.split(" · ")[0] for a in arms) == ["Baseline", "R&R", "Reprompt"], arms
