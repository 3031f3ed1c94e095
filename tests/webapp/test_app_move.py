"""Move the answer in the Playground (AppTest): the position control builds the document as a sweep
does, the map follows it, the 5-position mini U-curve runs, stale results are cleared, both ICR stages
are drawn with hits and misses, and a retrieval of just the first pages is flagged."""

import re

import pytest

from components.providers import factory
from components.providers.fake import FakeProvider
from tests.webapp.test_app_playground import LONG, app, no_trouble, paste, texts


@pytest.fixture(autouse=True)
def _own_store(tmp_path, monkeypatch):
    monkeypatch.setenv("LITM_DB", str(tmp_path / "runs.sqlite"))
    yield
    factory.uninstall()


def gold_token(at) -> int:
    """The gold page's token offset in prompt 1, as the caption under the map tells it."""
    m = re.search(r"gold page (\d+) starts at token ([\d,]+) of prompt 1", texts(at))
    assert m, texts(at)[-2000:]
    return int(m.group(2).replace(",", ""))


def test_moving_the_gold_page_of_a_pasted_document_moves_it_in_the_map():
    at = paste(app(), LONG, "What is the vault code?", "4711")
    as_written = gold_token(at)
    at.toggle(key="move").set_value(True).run()
    offsets = []
    for x in (0.0, 0.5, 1.0):
        at.select_slider(key="move_to").set_value(x).run()
        no_trouble(at)
        offsets.append(gold_token(at))
    assert offsets[0] < offsets[1] < offsets[2]
    assert offsets[0] < as_written < offsets[2]
    assert "gold page 1 starts" in texts(at) or "gold page 30 starts" in texts(at)  # at an edge now
    at.select_slider(key="move_to").set_value(0.0).run()
    assert "gold page 1 starts" in texts(at)
    assert "Moved: gold page 17 as written is page 1 in this prompt" in texts(at)


def test_a_task_set_in_by_index_mode_puts_the_gold_document_at_the_index():
    at = app()
    at.radio(key="source").set_value("Task set").run()
    no_trouble(at)
    at.selectbox(key="pg_set").set_value("nq-open-30docs").run()
    at.radio(key="pg_layout").set_value("documents").run()
    at.select_slider(key="pg_documents").set_value(10).run()
    at.selectbox(key="strategy").set_value("litm").run()
    for i in (0, 4, 9):
        at.slider(key="pg_gold_index").set_value(i).run()
        no_trouble(at)
        assert f"gold page {i + 1} starts" in texts(at)
    assert at.get("plotly_chart")


def test_the_five_position_run_draws_a_mini_curve_and_is_cleared_when_inputs_change():
    fake = FakeProvider()
    at = paste(app(fake), LONG, "What is the vault code?", "4711")
    at.selectbox(key="strategy").set_value("baseline").run()
    at.toggle(key="move").set_value(True).run()
    at.radio(key="pg_measure").set_value("answer").run()  # the fake can score: likelihood is the default
    next(b for b in at.button if b.label.startswith("Run at 5 positions")).click().run()
    no_trouble(at)
    rows = at.session_state["mini_curve"]["rows"]
    assert [r["x"] for r in rows] == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert [r["gold_token"] for r in rows] == sorted(r["gold_token"] for r in rows)
    assert all(r["correct"] for r in rows), "the fake reader finds the vault code anywhere"
    assert len(fake.history) == 5
    assert "How to read this chart" in texts(at)
    at.text_input(key="question").set_value("What is the vault number?").run()
    no_trouble(at)
    assert at.session_state["mini_curve"] is None
    assert "its curve is cleared" in texts(at)


def test_a_changed_input_clears_the_last_answer():
    fake = FakeProvider()
    at = paste(app(fake), LONG, "What is the vault code?", "4711")
    next(b for b in at.button if b.label.startswith("Run with")).click().run()
    assert ":green[**correct**]" in texts(at)
    at.text_input(key="answers").set_value("1234").run()
    no_trouble(at)
    assert ":green[**correct**]" not in texts(at) and "its result is cleared" in texts(at)


def test_after_icr_both_stages_are_drawn_and_first_pages_are_flagged():
    fake = FakeProvider()
    fake.enqueue("Pages: 1, 2, 3, 4, 5").enqueue("Answer: 4711\nPage: 17")
    at = paste(app(fake), LONG, "What is the vault code?", "4711")
    at.selectbox(key="strategy").set_value("icr").run()
    next(b for b in at.button if b.label.startswith("Run with")).click().run()
    no_trouble(at)
    fig = at.get("plotly_chart")[0].proto.spec
    assert "2. answer from retrieved pages" in fig or "answer from retrieved" in fig
    assert "retrieved: not gold (miss)" in fig
    assert "just the first pages in order" in texts(at)
    prompt = at.selectbox(key="view_prompt")
    assert len(prompt.options) == 2  # the stage-2 prompt, as sent, can be read too
    prompt.set_value(1).run()
    assert "Stage 2 prompt 2 of 2" in texts(at)
