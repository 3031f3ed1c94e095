"""The Playground's "move the answer": a task set as the document, the position control, and the
"run at 5 positions" mini U-curve. Documents come from the sweep builders (components.run.moving),
so what is drawn is exactly what a sweep sends (R&R §4.1, LITM §3.1)."""

from __future__ import annotations

import streamlit as st

from components.core.documents import Document
from components.providers.base import ProviderError
from components.run import moving
from components.strategies import ParamError
from webapp.playground import run as live
from webapp.services import engine as cached
from webapp.session.state import State
from webapp.ui import charts as chartview
from webapp.ui import render

NQ_SET = "nq-open-30docs"  # real questions with 29 distractors each (sample_docs/tasks/NQ-OPEN.md)
MOVE_STEPS = tuple(i / 10 for i in range(11))
DOCUMENT_COUNTS = (5, 10, 20, 30)
LENGTHS = (500, 1_000, 2_000, 4_000, 8_000)
LAYOUTS = {"documents": "N documents, gold at index i (LITM §3.1)",
           "tokens": "about d tokens, gold at x (R&R §4.1)"}


def where(x: float) -> str:
    return "start" if x == 0 else "end" if x == 1 else "middle" if x == 0.5 else f"{x:.0%}"


@st.cache_data(show_spinner=False)
def task_sets() -> dict:
    from components.tasks.samples import list_task_sets

    return {s.name: s for s in list_task_sets() if "kv" not in s.name}


def task_set_input(state: State) -> tuple[tuple | None, object | None]:
    """The bundled task set, the task and the layout: (recipe without the position, the task)."""
    sets = task_sets()
    if not sets:
        st.info("No bundled task sets are installed.")
        return None, None
    if state.pg_set not in sets:
        state.pg_set = NQ_SET if NQ_SET in sets else next(iter(sets))
    st.selectbox("Task set", list(sets), key=State.pg_set.key,
                 format_func=lambda n: f"{n} ({sets[n].n} tasks)")
    info = sets[state.pg_set]
    st.caption(info.description)
    tasks = cached.task_set(info.path)
    if not tasks:
        st.warning("No task could be read from this set.")
        return None, None
    state.pg_task = min(max(1, int(state.pg_task)), len(tasks))
    c1, c2 = st.columns([1, 2])
    c1.number_input("Task", min_value=1, max_value=len(tasks), step=1, key=State.pg_task.key)
    c2.radio("Build", list(LAYOUTS), key=State.pg_layout.key, format_func=LAYOUTS.get)
    task = tasks[int(state.pg_task) - 1]
    if state.pg_documents not in DOCUMENT_COUNTS:  # e.g. from a link: the nearest offered
        state.pg_documents = min(DOCUMENT_COUNTS, key=lambda v: abs(v - int(state.pg_documents)))
    if state.pg_length not in LENGTHS:
        state.pg_length = min(LENGTHS, key=lambda v: abs(v - int(state.pg_length)))
    if state.move_to not in MOVE_STEPS:
        state.move_to = min(MOVE_STEPS, key=lambda v: abs(v - float(state.move_to)))
    if state.pg_layout == "documents":
        st.select_slider("N documents", DOCUMENT_COUNTS, key=State.pg_documents.key,
                         help="the gold document and N - 1 distractors in their given order (LITM §3.1)")
        return ("task", info.path, int(state.pg_task) - 1, None, None, int(state.pg_documents)), task
    st.select_slider("Document length (tokens)", LENGTHS, key=State.pg_length.key, format_func=lambda v: f"{v:,}")
    return ("task", info.path, int(state.pg_task) - 1, int(state.pg_length)), task


def position_control(state: State, base: tuple) -> tuple:
    """The position control; returns the full recipe (base + where the gold page goes)."""
    if base[0] == "task" and len(base) == 6:  # N documents: the gold index
        n = base[5]
        state.pg_gold_index = min(int(state.pg_gold_index), n - 1)
        st.slider(f"Move the answer: gold document index (0 = first, {n - 1} = last of {n})", 0, n - 1,
                  key=State.pg_gold_index.key)
        return (*base[:3], None, None, n, int(state.pg_gold_index))
    if base[0] == "task":
        st.select_slider("Move the answer: gold page at", MOVE_STEPS, key=State.move_to.key, format_func=where)
        return (*base[:4], float(state.move_to), None, None)
    st.toggle("Move the answer", key=State.move.key,
              help="Move the gold page(s) through the document, the other pages kept in order, as a sweep "
                   "places it (R&R §4.1)")
    if not state.move:
        st.caption("The gold page sits where the document has it. Turn on *Move the answer* to place it "
                   "at the start, the middle or the end.")
        return (*base, None)
    st.select_slider("Move the answer: gold page at", MOVE_STEPS, key=State.move_to.key, format_func=where)
    return (*base, float(state.move_to))


def recipe_at(recipe: tuple, x) -> tuple:
    """The same recipe with the gold page at x (a fraction, or a gold index for N documents)."""
    if recipe[0] == "text":
        return (*recipe[:5], float(x))
    if recipe[5] is not None:  # N documents
        return (*recipe[:5], recipe[5], int(x))
    return (*recipe[:4], float(x), None, None)


def five(recipe: tuple) -> list:
    if recipe[0] == "task" and recipe[5] is not None:
        return moving.spread_indices(recipe[5])
    return list(moving.FIVE_POSITIONS)


def x_title(recipe: tuple) -> str:
    if recipe[0] == "task" and recipe[5] is not None:
        return f"gold document index (of {recipe[5]})"
    return "gold page position (fraction of the document)"


def mini_curve_section(state: State, recipe: tuple, question: str, answers: tuple, strategy: str,
                       params: dict, inputs: tuple) -> None:
    """A button that runs the same question with the gold page at five places and draws the result."""
    choice = state.choice
    signature = (inputs, recipe_at(recipe, 0))  # everything but the position itself
    if choice is not None and st.button(f"Run at {len(five(recipe))} positions", icon=":material/show_chart:",
                                        help="The same question, strategy and model with the gold page at "
                                             "the start, a quarter, the middle, three quarters and the end "
                                             "(each call cached)."):
        rows = run_positions(state, recipe, question, answers, strategy, params, choice)
        if rows is not None:
            state.mini_curve = {"for": signature, "rows": rows}
    last = state.mini_curve
    if not last:
        return
    if last["for"] != signature:
        st.info("The settings changed since the 5-position run: its curve is cleared. Run it again.",
                icon=":material/history:")
        state.mini_curve = None
        return
    rows = last["rows"]
    from components.report import charts

    fig = charts.mini_curve(rows, x_title=x_title(recipe), title=f"One question, {len(rows)} positions")
    chartview.show(fig, "mini-u-curve", "Each point is one run: 1 = correct, 0 = wrong. A U (high at both "
                   "ends, low in the middle) is the lost-in-the-middle effect; one question is an anecdote, "
                   "a sweep on the Experiments page gives n and intervals.", key="mini_curve_chart")
    weak = sum(1 for r in rows if r["first_pages"])
    if weak:
        st.warning(f"{weak} of {len(rows)} runs retrieved just the first pages in order (1, 2, 3, …): what a "
                   "weak model answers whatever the question. Counted apart: a hit there says nothing about "
                   "retrieval.", icon=":material/warning:")


def run_positions(state: State, recipe: tuple, question, answers, strategy, params, choice) -> list | None:
    rows = []
    xs = five(recipe)
    with st.status(f"Running at {len(xs)} positions with {choice.spec.label}…", expanded=True) as status:
        for x in xs:
            try:
                doc: Document = cached.built(recipe_at(recipe, x))
                view = live.execute(doc, question, answers, strategy, params, choice)
            except (ProviderError, ParamError, ValueError, OSError) as e:
                status.update(label="The run failed", state="error")
                st.error(render.md(render.short(e, (state.api_key,))), icon=":material/error:")
                return None
            offset = doc.offsets[doc.gold[0] - 1] if doc.gold else None
            rows.append({"x": x, "label": where(x) if isinstance(x, float) else str(x), "gold_token": offset,
                         "correct": view.correct, "answer": view.answer,
                         "first_pages": moving.first_pages(view.retrieved)})
            status.write(f"{rows[-1]['label']}: gold page at token {offset or 0:,}; "
                         f"{'correct' if view.correct else 'wrong' if view.correct is False else 'not scored'}")
        status.update(label="Done", state="complete", expanded=False)
    return rows
