"""The Lesson's step "why the middle is lost" (AppTest): the shipped attention curve (the gold document's
share of the last prompt token's attention, n per point, "so far" while the run is short of its config)
beside the accuracy U of the shipped 20-document run, each point as the stores hold it; then the live
strip of where the bundled model looks in one prompt (a local double below the app), or one line saying
why not for any other choice."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from components.core.resources import sample_path
from components.providers import factory
from components.report.lesson import STEPS
from components.report.promptmap import COLORS
from components.run.store import RunStore
from tests.webapp.test_app_lesson import APP, LESSON, calm
from tests.webapp.test_app_looks import LocalDouble, chart
from tests.webapp.test_app_playground import texts

WHY = next(i for i, s in enumerate(STEPS, 1) if s.key == "why")


@pytest.fixture(autouse=True)
def _own_store(tmp_path, monkeypatch):
    monkeypatch.setenv("LITM_DB", str(tmp_path / "runs.sqlite"))
    yield
    factory.uninstall()


def by_gold(name: str, column: str) -> pd.DataFrame:
    """The shipped run's trials of 20 documents, scored, straight from its store: mean and n by gold index."""
    with RunStore.for_reading(sample_path("runs", f"{name}.sqlite")) as store:
        trials = store.trials_frame(name)
    trials = trials[(pd.to_numeric(trials["documents"]) == 20) & trials["error"].isna()]
    values = pd.to_numeric(trials[column], errors="coerce")
    return trials.assign(v=values).dropna(subset=["v"]).groupby("gold_index")["v"].agg(["mean", "count"])


def test_why_comes_after_move_and_rests_on_found_in_the_middle():
    keys = [s.key for s in STEPS]
    assert keys.index("why") == keys.index("move") + 1
    s = STEPS[WHY - 1]
    assert s.title == "Why the middle is lost" and "Found in the Middle §2" in s.source
    assert "U-shaped positional attention bias" in s.text and s.link.page == "papers"


def test_the_attention_curve_beside_the_accuracy_u_as_the_stores_hold_them():
    at = AppTest.from_file(LESSON, default_timeout=120)
    at.query_params["step"] = str(WHY)
    at.run()
    calm(at)
    assert at.title[0].value == f"Lesson · {WHY}. Why the middle is lost"
    fig = chart(at, "lesson-why-the-middle-is-lost")
    accuracy = next(t for t in fig["data"] if t.get("xaxis") == "x2")
    ours = by_gold("local-qwen-nq-litm20", "subspan_em")
    assert accuracy["x"] == [0, 4, 9, 14, 19]
    assert accuracy["y"] == pytest.approx([100 * ours.loc[g, "mean"] for g in accuracy["x"]])
    assert [c[0] for c in accuracy["customdata"]] == [int(ours.loc[g, "count"]) for g in accuracy["x"]]
    title = fig["layout"]["title"]
    note = " ".join([a["text"] for a in fig["layout"].get("annotations", [])] + [title["subtitle"]["text"]])
    note = note.replace("<br>", " ")
    if not sample_path("runs", "local-qwen-nq-attention20.sqlite").is_file():
        assert "the attention run is not shipped" in note
        return
    attention = next(t for t in fig["data"] if t.get("xaxis", "x") == "x")
    held = by_gold("local-qwen-nq-attention20", "attention_gold")
    assert attention["y"] == pytest.approx([100 * held.loc[g, "mean"] for g in attention["x"]])
    assert [c[0] for c in attention["customdata"]] == [int(held.loc[g, "count"]) for g in attention["x"]]
    with RunStore.for_reading(sample_path("runs", "local-qwen-nq-attention20.sqlite")) as store:
        config = json.loads(store.sweeps_frame()["config"].iloc[0])
        questions = store.trials_frame("local-qwen-nq-attention20")["task"].nunique()
    unfinished = questions < config["n_tasks"]
    said = texts(at) + note
    assert (f"{questions} questions so far (of {config['n_tasks']} planned)" in said) == unfinished
    assert "Attention on the gold document:" in texts(at)


def test_the_live_strip_reads_where_the_bundled_model_looks_once():
    double = LocalDouble()
    factory.install(double)
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["provider"] = "local"
    at.session_state["model"] = double.spec.model
    at.query_params["step"] = str(WHY)
    at.run()
    at.switch_page("lesson/page.py").run()
    at.segmented_control(key="lesson_why_view").set_value("live").run()
    calm(at)
    at.select_slider(key="lesson_why_gold").set_value(19).run()
    assert any(c.value.startswith("The gold document, index 19 (the 20th)") for c in at.caption)
    next(b for b in at.button if b.label.startswith("Show where")).click().run()
    calm(at)
    assert double.calls == 1
    bars = chart(at, "lesson-where-the-model-looks")["data"][0]
    gold = [d[1] == "gold page" for d in bars["customdata"]]
    assert gold == [False] * 19 + [True]  # the gold document last, in the gold colour
    assert [c == COLORS["gold"] for c in bars["marker"]["color"]] == gold


def test_without_the_bundled_model_one_line_says_why_not():
    at = AppTest.from_file(LESSON, default_timeout=120)
    at.query_params["step"] = str(WHY)
    at.run()
    at.segmented_control(key="lesson_why_view").set_value("live").run()
    calm(at)
    assert not [b for b in at.button if b.label.startswith("Show where")]
    assert "Choose the bundled local model in the sidebar" in texts(at)
