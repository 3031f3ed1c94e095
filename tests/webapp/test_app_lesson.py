"""The Lesson (AppTest): every step draws its widget with no error, in presenter mode too; the step
follows ?step=N; links carry their settings; the Playground applies a lesson link's settings."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from components.report.lesson import STEPS

ROOT = Path(__file__).resolve().parents[2]
LESSON = str(ROOT / "webapp" / "lesson" / "page.py")
APP = str(ROOT / "webapp" / "app.py")


@pytest.fixture(autouse=True)
def _own_store(tmp_path, monkeypatch):
    monkeypatch.setenv("LITM_DB", str(tmp_path / "runs.sqlite"))


def calm(at: AppTest) -> None:
    assert not at.exception, at.exception
    assert not [e.value for e in at.error], [e.value for e in at.error]


def test_the_steps_are_short_and_complete():
    assert 6 <= len(STEPS) <= 10
    for s in STEPS:
        sentences = [x for x in s.text.replace("e.g.", "eg").split(". ") if x.strip()]
        assert 2 <= len(sentences) <= 4, s.key
        assert s.try_this and s.question.endswith("?") and s.source and s.link.label


@pytest.mark.parametrize("present", [False, True])
def test_walk_every_step_with_next(present):
    at = AppTest.from_file(LESSON, default_timeout=60)
    at.session_state["present"] = present
    at.run()
    for n in range(1, len(STEPS) + 1):
        calm(at)
        assert at.title[0].value == f"Lesson · {n}. {STEPS[n - 1].title}"
        assert at.query_params["step"] == [str(n)] or at.query_params["step"] == str(n)
        assert at.get("plotly_chart"), f"step {n} draws a chart"
        body = " ".join(m.value for m in at.markdown)
        assert "Try this:" in body and "Question for the room:" in body
        assert any("How to read this chart" in c.value for c in at.caption)
        if n < len(STEPS):
            at.button(key="lesson_next").click().run()
    assert at.button(key="lesson_next").disabled


def test_step_from_the_url_and_the_move_slider():
    at = AppTest.from_file(LESSON, default_timeout=60)
    at.query_params["step"] = "3"
    at.run()
    calm(at)
    assert at.title[0].value.startswith("Lesson · 3.")
    starts = []
    for i in (0, 9, 19):
        at.slider(key="lesson_move").set_value(i).run()
        calm(at)
        cap = next(c.value for c in at.caption if c.value.startswith("The gold document"))
        place = {0: "1st", 9: "10th", 19: "20th"}[i]  # the index counted from 0, its place from 1
        assert cap.startswith(f"The gold document, index {i} (the {place}), starts")
        starts.append(int(cap.split("token ")[1].split(" ")[0].replace(",", "")))
    assert starts == sorted(starts) and starts[0] < starts[-1]


def test_a_lesson_link_fills_the_playground():
    at = AppTest.from_file(APP, default_timeout=60)
    for k, v in {
        "source": "task",
        "set": "nq-open-30docs",
        "documents": "20",
        "gold": "9",
        "strategy": "litm",
    }.items():
        at.query_params[k] = v
    at.run()
    at.switch_page("playground/page.py").run()
    calm(at)
    assert at.session_state["source"] == "Task set" and at.session_state["strategy"] == "litm"
    assert at.slider(key="pg_gold_index").value == 9
    assert any("gold page 10 starts" in c.value for c in at.caption)
    at.slider(key="pg_gold_index").set_value(2).run()  # the link applies once: the user's change stays
    assert at.slider(key="pg_gold_index").value == 2


def test_a_link_sets_strategy_parameters_once():
    at = AppTest.from_file(APP, default_timeout=60)
    for k, v in {"source": "sample", "strategy": "rr", "r": "300", "k": "2"}.items():
        at.query_params[k] = v
    at.run()
    at.switch_page("playground/page.py").run()
    calm(at)
    assert at.session_state["strategy"] == "rr"
    assert at.select_slider(key="param_r_10000").value == 300
    assert at.slider(key="param_k_5").value == 2


def test_presenter_toggle_is_kept_in_the_url_and_enlarges_charts():
    import json

    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    at.switch_page("playground/page.py").run()
    calm(at)
    normal = json.loads(at.get("plotly_chart")[0].proto.spec)["layout"]["font"]["size"]
    at.toggle(key="present").set_value(True).run()
    calm(at)
    assert at.query_params["present"] in (["1"], "1")
    big = json.loads(at.get("plotly_chart")[0].proto.spec)["layout"]
    assert big["font"]["size"] >= 16 > normal and big["xaxis2"]["tickfont"]["size"] >= 16
    at.radio(key="export_format").set_value("svg").run()
    config = json.loads(at.get("plotly_chart")[0].proto.config)
    assert config["toImageButtonOptions"]["format"] == "svg"
    assert config["toImageButtonOptions"]["filename"].startswith("litm-prompt-map-")
    at.toggle(key="present").set_value(False).run()
    assert "present" not in at.query_params


def test_present_in_the_url_turns_presenter_mode_on():
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["present"] = "1"
    at.run()
    calm(at)
    assert at.session_state["present"] is True
