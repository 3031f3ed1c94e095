"""The live widget of each Lesson step (components/report/lesson.py names them): published curves,
prompt maps built by the engine, and the engine's cost estimates. Every chart goes through
webapp/chartview.py (theme, export, how to read)."""

from __future__ import annotations

import streamlit as st

from components.report import lessonfigs
from components.report.promptmap import gold_places, n_tokens
from webapp.playground import moving
from webapp.services import engine as cached
from webapp.session.state import State
from webapp.ui import charts as chartview

SAMPLE = "harrowmere_history"
N_DOCS = 20


@st.cache_data(show_spinner=False)
def published():
    from components.report.published import load_published

    return load_published()


def sample_recipe() -> tuple[tuple, str]:
    """The lesson's sample document with its first question: (recipe, question)."""
    from components.tasks.samples import list_samples

    samples = list_samples()
    s = next((x for x in samples if x.name == SAMPLE), samples[0])
    question, answers = s.questions[0]
    gold = tuple(cached.gold_pages(s.text, "paragraph", s.name, tuple(answers)))
    return ("text", s.text, "paragraph", s.name, gold, None), question


def nq_recipe(index: int) -> tuple[tuple, str]:
    info = moving.task_sets()[moving.NQ_SET]
    tasks = cached.task_set(info.path)
    return ("task", info.path, 0, None, None, N_DOCS, index), tasks[0].question


def prompt_map(recipe: tuple, strategy: str, params: tuple, question: str, name: str, how: str) -> list:
    prompts = cached.prompts(recipe, strategy, params, question)
    chartview.show(cached.figure(recipe, strategy, params, question), name, how, key=f"lesson_{name}", series=False)
    return prompts


MAP_HOW = ("each row is a prompt along its tokens: blue instructions, orange reminders, grey pages, the red star "
           "the gold page; below, each page's distance in tokens to the nearest instruction.")


def published_litm() -> None:
    chartview.show(lessonfigs.litm_curves(published(), N_DOCS), "lesson-litm-20-documents",
                   "one line per model, accuracy (y) against where the answer document sits among 20 (x); "
                   "the dashed line is answering with no documents at all.", key="lesson_litm")


def one_prompt() -> None:
    recipe, question = sample_recipe()
    prompts = prompt_map(recipe, "baseline", (), question, "lesson-one-prompt", MAP_HOW)
    place_caption(prompts)


def place_caption(prompts) -> None:
    places = gold_places(prompts)
    if places:
        g = places[0]
        st.caption(f"Gold page {g.page} starts at token {g.start:,} of {prompts[0].tokens:,}"
                   + ("" if g.distance is None else f", {n_tokens(g.distance)} from the nearest instruction") + ".")


def move() -> None:
    st.slider(f"Gold document index (0 = first, {N_DOCS - 1} = last)", 0, N_DOCS - 1, key=State.lesson_move.key)
    recipe, question = nq_recipe(int(State().lesson_move))
    st.html(f"<div style='font-size:1.05rem'><b>Question:</b> {_esc(question)}</div>")
    prompts = prompt_map(recipe, "litm", (), question, "lesson-move-the-answer", MAP_HOW)
    place_caption(prompts)


def reminders() -> None:
    st.select_slider("r: a reminder every … tokens", [200, 300, 500, 1000, 2000], key=State.lesson_r.key,
                     format_func=lambda v: f"{v:,}")
    recipe, question = sample_recipe()
    prompts = prompt_map(recipe, "reprompt", (("r", int(State().lesson_r)),), question, "lesson-reminders", MAP_HOW)
    n = sum(1 for s in prompts[0].spans if s.kind == "reminder")
    st.caption(f"{n} reminder block(s) in a {prompts[0].tokens:,}-token prompt.")


def icr() -> None:
    st.slider("k: pages to retrieve", 1, 8, key=State.lesson_k.key)
    k = int(State().lesson_k)
    recipe, question = sample_recipe()
    prompts = prompt_map(recipe, "icr", (("k", k),), question, "lesson-icr-stage-1", MAP_HOW)
    doc = cached.built(recipe)
    biggest = sum(sorted((p.tokens for p in doc.pages), reverse=True)[:k])
    st.caption(f"Stage 1 reads all {doc.tokens:,} document tokens; stage 2 reads at most {k} page(s): "
               f"{biggest:,} tokens or fewer.")
    del prompts


def rr() -> None:
    chartview.show(lessonfigs.rr_positions(published()), "lesson-rr-table-7",
                   "one line per method, fuzzy match (y) against where the answer sits in an 80k-token document "
                   "(x); a line that stays high across x has beaten the lost-in-the-middle effect.", key="lesson_rr")


def chunking() -> None:
    chartview.show(lessonfigs.chunking(published()), "lesson-chunking-tables-2-3",
                   "accuracy (y) against chunk size (x, with the calls m it costs); left is more calls, right is "
                   "fewer; the gap between the lines is what reminders inside chunks buy.", key="lesson_chunking")


CHOICES = (("baseline", "baseline", ()), ("reprompt", "reprompt r=300", (("r", 300),)),
           ("icr", "ICR k=3", (("k", 3),)), ("rr", "R&R r=300 k=3", (("k", 3), ("r", 300))),
           ("chunked-icr", "chunked ICR c=1k", (("c", 1000), ("k", 3))))


def choose() -> None:
    recipe, question = nq_recipe(9)
    rows = []
    for strategy, label, params in CHOICES:
        try:
            calls, tin, _ = cached.usage(recipe, strategy, params, question)
        except ValueError:
            continue
        rows.append({"label": label, "calls": calls, "input_tokens": tin})
    chartview.show(lessonfigs.strategy_costs(rows), "lesson-what-it-costs",
                   "blue bars: calls per question; orange bars: input tokens (right axis), as the engine estimates "
                   "them for the 20-document prompt of step 3 (later stages assume k pages come back).",
                   key="lesson_choose")


def _esc(text: str) -> str:
    import html

    return html.escape(text)


WIDGETS = {"published_litm": published_litm, "one_prompt": one_prompt, "move": move, "reminders": reminders,
           "icr": icr, "rr": rr, "chunking": chunking, "choose": choose}
