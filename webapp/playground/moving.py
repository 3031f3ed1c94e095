"""The Playground's "move the answer": a task set as the document, the position control, and the
"run at 5 positions" mini U-curve. Documents come from the sweep builders (services.engine.built), so
what is drawn is exactly what a sweep sends (R&R §4.1, LITM §3.1)."""

from __future__ import annotations

import streamlit as st

from webapp.playground import likely, running
from webapp.services import engine, figures, logprob
from webapp.services.engine import NQ_SET, Recipe, where
from webapp.services.live import ProviderError
from webapp.session import State
from webapp.ui import charts, render

MOVE_STEPS = tuple(i / 10 for i in range(11))
DOCUMENT_COUNTS = (5, 10, 20, 30)
LENGTHS = (500, 1_000, 2_000, 4_000, 8_000)
LAYOUTS = {
    "documents": "N documents, gold at index i (LITM §3.1)",
    "tokens": "about d tokens, gold at x (R&R §4.1)",
}


def task_set_input(state: State) -> tuple[Recipe | None, object | None]:
    """The bundled task set, the task and the layout: (recipe without the position, the task)."""
    sets = engine.task_sets()
    if not sets:
        st.info("No bundled task sets are installed.")
        return None, None
    if state.pg_set not in sets:
        state.pg_set = NQ_SET if NQ_SET in sets else next(iter(sets))
    st.selectbox(
        "Task set", list(sets), key=State.pg_set.key, format_func=lambda n: f"{n} ({sets[n].n} tasks)"
    )
    info = sets[state.pg_set]
    st.caption(info.description)
    tasks = engine.task_set(info.path)
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
    index = int(state.pg_task) - 1
    if state.pg_layout == "documents":
        st.select_slider(
            "N documents",
            DOCUMENT_COUNTS,
            key=State.pg_documents.key,
            help="the gold document and N - 1 distractors in their given order (LITM §3.1)",
        )
        return Recipe.of_task(info.path, index, documents=int(state.pg_documents)), task
    st.select_slider(
        "Document length (tokens)", LENGTHS, key=State.pg_length.key, format_func=lambda v: f"{v:,}"
    )
    return Recipe.of_task(info.path, index, length=int(state.pg_length)), task


def position_control(state: State, base: Recipe) -> Recipe:
    """The position control; returns the full recipe (base + where the gold page goes)."""
    if base.by_index:
        n = int(base.cell.documents)
        state.pg_gold_index = min(int(state.pg_gold_index), n - 1)
        st.slider(
            f"Move the answer: gold document index (0 = first, {n - 1} = last of {n})",
            0,
            n - 1,
            key=State.pg_gold_index.key,
        )
        return base.at(int(state.pg_gold_index))
    if base.kind == "task":
        st.select_slider(
            "Move the answer: gold page at", MOVE_STEPS, key=State.move_to.key, format_func=where
        )
        return base.at(float(state.move_to))
    st.toggle(
        "Move the answer",
        key=State.move.key,
        help="Move the gold page(s) through the document, the other pages kept in order, as a sweep "
        "places it (R&R §4.1)",
    )
    if not state.move:
        st.caption(
            "The gold page sits where the document has it. Turn on *Move the answer* to place it "
            "at the start, the middle or the end."
        )
        return base
    st.select_slider("Move the answer: gold page at", MOVE_STEPS, key=State.move_to.key, format_func=where)
    return base.at(float(state.move_to))


MEASURES = {"likelihood": "How likely the right answer is (ours)", "answer": "Right or wrong"}


def measure_input(state: State, choice, strategy: str) -> str:
    """The 5-position run's measure: the likelihood where the model can score it and the strategy has one
    stage (its default), else right/wrong, with the reason in one line."""
    if choice is None:
        return "answer"
    if not logprob.can_score(choice.spec):
        st.caption(
            f"Measure: right or wrong. {render.md(running.model_name(choice))} cannot score an answer's "
            "likelihood (its API returns no log-probabilities of a given text)."
        )
        return "answer"
    if not logprob.single_stage(strategy):
        st.caption(
            "Measure: right or wrong. The likelihood scores a single-stage prompt (this strategy's later "
            "stages depend on the model's replies)."
        )
        return "answer"
    if state.pg_measure not in MEASURES:
        state.pg_measure = "likelihood"
    st.radio(
        "Measure at 5 positions",
        list(MEASURES),
        key=State.pg_measure.key,
        horizontal=True,
        format_func=MEASURES.get,
        help="Likelihood: the log-probability the model gives the right answer after the prompt (nothing is "
        "generated; ours, not the papers'). Right or wrong: the model answers and the answer is scored.",
    )
    return state.pg_measure


def mini_curve_section(
    state: State, recipe: Recipe, question: str, answers: tuple, strategy: str, params: dict, inputs: tuple
) -> None:
    """A button that runs the same question with the gold page at five places and draws the result:
    right/wrong, or how likely the model finds the right answer (playground/likely.py)."""
    choice = state.choice
    spread = recipe.cell.spread()
    measure = measure_input(state, choice, strategy)
    signature = (inputs, recipe.at(spread[0]), measure)  # everything but the position itself
    if measure == "likelihood":
        likely.section(state, recipe, question, answers, strategy, params, signature, choice)
        return
    if choice is not None and st.button(
        f"Run at {len(spread)} positions",
        icon=":material/show_chart:",
        key=State.positions_go.key,
        help="The same question, strategy and model with the gold page at "
        "the start, a quarter, the middle, three quarters and the end "
        "(each call cached).",
    ):
        rows = run_positions(state, recipe, question, answers, strategy, params, choice)
        if rows is not None:
            state.mini_curve = {"for": signature, "measure": "answer", "rows": rows}
    last = state.mini_curve
    if not last or last.get("measure", "answer") != "answer":
        return
    if last["for"] != signature:
        st.info(
            "The settings changed since the 5-position run: its curve is cleared. Run it again.",
            icon=":material/history:",
        )
        state.mini_curve = None
        return
    rows = last["rows"]
    model = rows[0].get("model", "") if rows else ""
    fig = figures.mini_curve(rows, x_title=recipe.cell.x_title, title=f"One question, {len(rows)} positions")
    charts.show(
        fig,
        "mini-u-curve",
        "Each point is one run: 1 = correct, 0 = wrong. A U (high at both "
        "ends, low in the middle) is the lost-in-the-middle effect; one question is an anecdote, "
        "a sweep on the Experiments page gives n and intervals.",
        note=f"{model} · this app · one question, one run per position" if model else "",
    )
    weak = sum(1 for r in rows if r["first_pages"])
    if weak:
        st.warning(
            f"{weak} of {len(rows)} runs retrieved just the first pages in order (1, 2, 3, …): what a "
            "weak model answers whatever the question. Counted apart: a hit there says nothing about "
            "retrieval.",
            icon=":material/warning:",
        )


def run_positions(state: State, recipe: Recipe, question, answers, strategy, params, choice) -> list | None:
    rows = []
    xs = recipe.cell.spread()
    tokens = 0
    for x in xs:
        try:
            tokens += engine.usage(recipe.at(x), strategy, tuple(sorted(params.items())), question)[1]
        except (ValueError, engine.ParamError):
            pass
    expected = running.expected_seconds(choice, tokens)
    with st.status(
        f"Running at {len(xs)} positions with {render.md(running.model_name(choice))}…", expanded=True
    ) as status:
        clock = running.Clock(status, expected)
        for x in xs:
            try:
                doc = engine.built(recipe.at(x))
                view = clock.run(
                    lambda d=doc: running.execute(
                        d, question, answers, strategy, params, choice, on_call=clock.on_call
                    )
                )
            except (ProviderError, engine.ParamError, ValueError, OSError) as e:
                status.update(label="The run failed", state="error")
                st.error(render.md(render.short(e, (state.api_key,))), icon=":material/error:")
                return None
            offset = doc.offsets[doc.gold[0] - 1] if doc.gold else None
            rows.append(
                {
                    "x": x,
                    "label": recipe.cell.place(x),
                    "gold_token": offset,
                    "correct": view.correct,
                    "answer": view.answer,
                    "first_pages": view.first_pages,
                    "model": running.model_name(choice),
                }
            )
            status.write(
                f"{rows[-1]['label']}: gold page at token {offset or 0:,}; "
                f"{'correct' if view.correct else 'wrong' if view.correct is False else 'not scored'}"
            )
        status.update(label=f"Done in {clock.elapsed_text()}", state="complete", expanded=False)
    return rows
