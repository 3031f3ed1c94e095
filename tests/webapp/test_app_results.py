"""AppTest of the Results page: empty state, then a filled store, filters, tabs and the drill-down."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.webapp.runs_fixture import fill

PAGE = str(Path(__file__).resolve().parents[2] / "webapp" / "results" / "page.py")


@pytest.fixture
def stores(tmp_path, monkeypatch):
    monkeypatch.setenv("LITM_DB", str(tmp_path / "runs" / "litm.sqlite"))
    monkeypatch.setenv("LITM_SHIPPED_RUNS", str(tmp_path / "shipped"))
    return tmp_path


def run(timeout=60, tab: str | None = None) -> AppTest:
    """Results, run once; `tab`: the tab opened (only the open tab's view is computed)."""
    at = AppTest.from_file(PAGE, default_timeout=timeout)
    if tab:
        at.session_state["res_tab"] = tab
    at.run()
    assert not at.exception, at.exception
    return at


def texts(at) -> str:
    parts = [e.value for e in (*at.info, *at.warning, *at.error, *at.success, *at.caption, *at.markdown)]
    return "\n".join(str(p) for p in parts)


def test_empty_state_points_to_experiments(stores):
    at = run()
    assert "No runs yet" in at.info[0].value and "Experiments" in at.info[0].value
    assert not at.error


def test_with_runs_shows_curves_counts_and_errors(stores):
    fill(stores / "runs" / "litm.sqlite")
    at = run()
    assert not at.error, [e.value for e in at.error]
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Trials"] == "108" and metrics["Errors (not scored)"] == "2"
    assert "2 trials ended in an error" in texts(at)
    assert [t.label for t in at.tabs][:2] == ["U-curve", "Length × position"]
    assert at.get("plotly_chart")
    # the numbers table has n and a CI per point
    frames = [d.value for d in at.dataframe]
    curve = next(f for f in frames if "95% CI low" in f.columns)
    assert set(curve["series"]) == {
        "Baseline · fake-model · this app",
        "Reprompt · fake-model · this app",
        "R&R · fake-model · this app",
    }  # every line names its model and source
    assert curve["n"].sum() == 106


def test_filters_and_series(stores):
    fill(stores / "runs" / "litm.sqlite")
    at = run()
    at.multiselect(key="res_strategies").set_value(["rr"]).run()
    assert not at.exception
    assert {m.label: m.value for m in at.metric}["Trials"] == "36"
    at.radio(key="res_u_series").set_value("strategy and model").run()
    curve = next(d.value for d in at.dataframe if "95% CI low" in d.value.columns)
    assert set(curve["series"]) == {"R&R · fake-model · this app"}
    at.selectbox(key="res_metric").set_value("subspan_em").run()
    assert not at.exception


def test_shipped_runs_are_labelled(stores):
    fill(stores / "runs" / "litm.sqlite")
    fill(stores / "shipped" / "gpt.sqlite", name="shipped sweep", model="gpt-4o-mini", errors=0)
    at = run()
    sweeps = next(d.value for d in at.dataframe if "settings" in d.value.columns)
    shipped = sweeps[sweeps["store"] != "your runs"]
    assert shipped["label"].iloc[0].startswith("shipped: shipped sweep · gpt-4o-mini")
    assert "strategies Baseline, Reprompt, R&R" in shipped["settings"].iloc[0]
    # the page opens on the newest sweep of the user's store, not on everything
    assert at.multiselect(key="res_sweeps").value == ["your runs#1"]
    assert {m.label: m.value for m in at.metric}["Trials"] == "108"
    at.multiselect(key="res_sweeps").set_value([]).run()  # all sweeps: both stores
    assert {m.label: m.value for m in at.metric}["Trials"] == "216"


def test_results_opens_on_the_newest_sweep_of_the_users_store(stores):
    """A sweep just run (from the app or the command line) is where a researcher looks: the first visit
    selects the newest sweep of the user's store; a link's own sweeps stand."""
    fill(stores / "runs" / "litm.sqlite", name="older")
    fill(stores / "runs" / "litm.sqlite", name="newer", model="other-model")
    at = run()
    assert at.multiselect(key="res_sweeps").value == ["your runs#2"]
    assert set(next(d.value for d in at.dataframe if "95% CI low" in d.value.columns)["series"]) == {
        f"{s} · other-model · this app" for s in ("Baseline", "Reprompt", "R&R")
    }
    linked = AppTest.from_file(PAGE, default_timeout=60)
    linked.query_params["sweep"] = "your runs#1"
    linked.run()
    assert linked.multiselect(key="res_sweeps").value == ["your runs#1"]


def test_trial_drill_down_shows_prompt_and_response(stores):
    fill(stores / "runs" / "litm.sqlite")
    at = run(tab="Trials")
    options = at.selectbox(key="res_trial").options
    assert len(options) == 108
    at.selectbox(key="res_trial").set_value(at.selectbox(key="res_trial").options[5]).run()
    assert not at.exception
    html = "\n".join(str(h.proto.body) for h in at.get("html"))
    assert "PAGE" in html and "Answer:" in html  # the prompt and the raw response
    assert "Prompt map" in texts(at)
    assert any("gold page" in str(c.proto.spec) for c in at.get("plotly_chart"))


def test_failed_trial_shows_its_error(stores):
    fill(stores / "runs" / "litm.sqlite")
    at = run(tab="Trials")
    at.multiselect(key="res_strategies").set_value(["rr"]).run()
    box = at.selectbox(key="res_trial")
    failed = [o for o in box.options if "task-0" in o]
    at.selectbox(key="res_trial").set_value(failed[0]).run()
    assert any("Error (not scored): RateLimited" in e.value for e in at.error)


def test_broken_store_is_reported_not_raised(stores):
    (stores / "shipped").mkdir()
    (stores / "shipped" / "broken.sqlite").write_bytes(b"not a database at all" * 100)
    at = run()
    assert any("Could not read a run store: broken.sqlite" in w.value.replace("\\", "") for w in at.warning)


def test_a_browser_sees_its_own_runs_never_another_workspace(stores):
    """Sharing model (webapp/services/sharing.py): the command line's runs (no owner) and this workspace's runs
    are listed; another workspace's sweep, with its prompts and answers, is not."""
    import sqlite3

    db = stores / "runs" / "litm.sqlite"
    fill(db, name="cli sweep")
    fill(db, name="their sweep", seed=1)
    fill(db, name="my sweep", seed=2)
    mine, theirs = "a" * 16, "b" * 16
    with sqlite3.connect(db) as c:
        c.execute("UPDATE sweeps SET owner = ? WHERE name = 'their sweep'", (f"{theirs}.{'c' * 16}",))
        c.execute("UPDATE sweeps SET owner = ? WHERE name = 'my sweep'", (f"{mine}.{'d' * 16}",))
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.query_params["run"] = mine
    at.run()
    assert not at.exception, at.exception
    assert at.multiselect(key="res_sweeps").value == ["your runs#3"]  # opens on my newest sweep
    at.multiselect(key="res_sweeps").set_value([]).run()
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Trials"] == "216"  # 2 sweeps of 108: the command line's and mine
    options = " ".join(str(o) for o in at.multiselect(key="res_sweeps").options)
    assert "my sweep" in options and "cli sweep" in options and "their sweep" not in options
    # the same store seen from the other workspace: theirs and the command line's
    other = AppTest.from_file(PAGE, default_timeout=60)
    other.query_params["run"] = theirs
    other.run()
    options = " ".join(str(o) for o in other.multiselect(key="res_sweeps").options)
    assert "their sweep" in options and "my sweep" not in options


def test_the_pages_hold_summary_columns_and_fetch_texts_for_the_rows_shown(stores):
    """Results and Compare keep no prompts or answers in memory (a 100k-trial store loads in about a
    second); a page of the trial table, a drill-down and an export read them from the store."""
    import io

    import pandas as pd

    from components.report.sweeps import combine_stores
    from components.run.reader import BROWSE_COLUMNS, browse
    from webapp.services import stores as runs

    path = fill(stores / "runs" / "litm.sqlite")
    trials, sweeps = browse(path, readonly=False)
    assert list(trials.columns) == BROWSE_COLUMNS
    assert not {"question", "answer", "answers", "prompts", "raw_answer"} & set(trials.columns)
    assert trials["retrieved_pages"].map(lambda v: isinstance(v, list)).all()  # decoded lists
    combined, _ = combine_stores([("your runs", False, str(path), trials, sweeps)])
    page = combined.iloc[10:15]
    full = runs.whole(page)
    assert list(full.index) == list(page.index) and list(full["trial_id"]) == list(page["trial_id"])
    assert set(full["question"]) == {"Where?"} and set(full["answer"]) <= {"Paris", "London"}
    assert set(full["store"]) == {"your runs"}  # the page's own columns are kept
    exported = pd.read_csv(io.BytesIO(runs.export(combined, "csv")))
    assert len(exported) == 108 and exported["question"].eq("Where?").all()
    assert "store_path" not in exported and exported["answer"].notna().sum() == 106


def test_the_trial_table_pages_a_big_selection(stores):
    fill(stores / "runs" / "litm.sqlite", n_tasks=30, errors=0)  # 540 trials: two pages of 500
    at = run(tab="Trials")
    assert {m.label: m.value for m in at.metric}["Trials"] == "540"
    assert len(at.selectbox(key="res_trial").options) == 500
    at.number_input(key="res_trial_page").set_value(2).run()
    assert not at.exception
    options = at.selectbox(key="res_trial").options
    assert len(options) == 40
    assert "trials 501–540 shown" in texts(at)
    at.selectbox(key="res_trial").set_value(options[-1]).run()
    assert not at.exception and "Prompt map" in texts(at)


def test_the_cost_table_shows_money_as_money(stores):
    import re

    fill(stores / "runs" / "litm.sqlite")
    at = run(tab="Accuracy vs cost")
    cost = next(d.value for d in at.dataframe if "$ per 1,000 questions" in d.value.columns)
    money = re.compile(r"^\$\d{1,3}(,\d{3})*(\.\d+)?$")
    assert all(money.match(v) for v in cost["$ per 1,000 questions"]), list(cost["$ per 1,000 questions"])
    assert all(money.match(v) for v in cost["$ in all"])
    by = dict(zip(cost["setting"], cost["$ per 1,000 questions"], strict=True))
    assert by["Baseline"] == "$0.10"  # 0.0001 dollars a trial (one call) is $0.10 per 1,000 questions
    assert all(re.match(r"^\d{1,3}(,\d{3})*$", v) for v in cost["input tokens / question"])  # no "3729.6633"
    assert not any("ran free" in c.value for c in at.caption)


def test_free_trials_are_priced_at_the_reference_model_up_front(stores):
    import sqlite3

    db = stores / "runs" / "litm.sqlite"
    fill(db)
    with sqlite3.connect(db) as con:  # as a local model's trials: free
        con.execute("UPDATE trials SET cost_usd = 0 WHERE cost_usd IS NOT NULL")
    at = run(tab="Accuracy vs cost")
    toggle = at.toggle(key="res_cost_reference")
    assert toggle.value is True and toggle.label == "Price as gpt-4o-mini"  # offered up front, on
    cost = next(d.value for d in at.dataframe if "$ per 1,000 questions" in d.value.columns)
    by = dict(zip(cost["setting"], cost["$ per 1,000 questions"], strict=True))
    assert by["Baseline"] == "$0.023"  # 120 input and 8 output tokens at $0.15 and $0.60 per 1M, x 1,000
    at.toggle(key="res_cost_reference").set_value(False).run()
    cost = next(d.value for d in at.dataframe if "$ per 1,000 questions" in d.value.columns)
    assert set(cost["$ per 1,000 questions"]) == {"$0"}


def test_chart_titles_keep_a_metrics_capitals(stores):
    """'best subspan EM' heads a chart as 'Best subspan EM', not 'Best subspan em' (str.capitalize)."""
    import json

    from webapp.ui.render import upper_first

    assert upper_first("best subspan EM") == "Best subspan EM" and upper_first("") == ""
    fill(stores / "runs" / "litm.sqlite")
    at = run()
    at.selectbox(key="res_metric").set_value("subspan_em").run()
    titles = [
        json.loads(c.proto.spec)["layout"].get("title", {}).get("text", "") for c in at.get("plotly_chart")
    ]
    assert any(t.startswith("Best subspan EM by answer position") for t in titles), titles
    assert not any("subspan em" in t for t in titles), titles


def test_an_exported_u_curve_names_its_sweep_model_sizes_n_and_date(stores):
    """The camera button's file is not 'litm-u-curve-position' for every chart: it names the sweep, the
    model, the lengths, n and the date; the note inside the chart names the sweep and says when lengths
    are pooled (n then counts a question once per length)."""
    import json

    fill(stores / "runs" / "litm.sqlite", name="my sweep")
    at = run()
    charts = at.get("plotly_chart")
    configs = [json.loads(c.proto.config) for c in charts]
    names = [c["toImageButtonOptions"]["filename"] for c in configs if "toImageButtonOptions" in c]
    day = __import__("datetime").date.today().isoformat()
    want = "litm-u-curve-position-my-sweep-fake-model-"
    assert any(n.startswith(want) and "-n6-" in n and n.endswith(day) for n in names), names
    subtitles = " ".join(
        json.loads(c.proto.spec)["layout"].get("title", {}).get("subtitle", {}).get("text", "")
        for c in at.get("plotly_chart")
    ).replace("<br>", " ")
    assert f"Sweep my sweep, {day}." in subtitles, subtitles


def test_a_curve_over_several_lengths_says_it_pools_them():
    import pandas as pd

    from webapp.results.ucurve import pooled_sizes

    two = pd.DataFrame({"length": [2000, 4000, 2000], "documents": [None, None, None]})
    assert pooled_sizes(two, "length", False) == (
        " Pooled over 2 lengths (2,000, 4,000 tokens): n counts a question once per length."
    )
    assert pooled_sizes(two[two["length"] == 2000], "length", False) == ""
    assert pooled_sizes(pd.DataFrame({"documents": [10, 20]}), "documents", True) == ""  # one line per N


def test_the_trial_table_filters_right_wrong_and_failed(stores):
    """A pass/fail filter on the trials: right (the metric is 1), wrong (below 1), failed (an error)."""
    import pandas as pd

    from webapp.results.trials import by_outcome

    fill(stores / "runs" / "litm.sqlite")
    at = run(tab="Trials")
    at.selectbox(key="res_metric").set_value("subspan_em").run()
    assert at.radio(key="res_outcome").options == ["all", "right", "wrong", "failed (an error, not scored)"]

    def frame():  # the trial table
        return next(d.value for d in at.dataframe if "trial_id" in d.value.columns)

    total = len(frame())
    at.radio(key="res_outcome").set_value("right").run()
    right = len(frame())
    at.radio(key="res_outcome").set_value("wrong").run()
    wrong = len(frame())
    at.radio(key="res_outcome").set_value("failed").run()
    failed = len(frame())
    assert failed == 2 and right > 0 and wrong > 0 and right + wrong + failed == total == 108
    df = pd.DataFrame(
        {"m": [1.0, 0.0, None], "error": [None, None, "boom"], "error_kind": [None, None, "bug"]}
    )
    assert list(by_outcome(df, "m", "right").index) == [0] and list(by_outcome(df, "m", "wrong").index) == [1]
