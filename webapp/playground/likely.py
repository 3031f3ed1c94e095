"""The Playground's likelihood mini-curve: "Run at 5 positions" scored by how likely the model finds the
right answer (the gold answer's log-probability after the prompt, teacher-forced; nothing generated),
for models that can score (services.logprob.can_score). One question's curve first; for a task set,
"Add 5 more questions" extends it with the mean over questions and its 95% band. Every call is cached
in the user's run store: running again costs nothing. This view is ours, not the papers'.

While it runs the page shows the elapsed time against an estimate (the tokens the model must evaluate,
shared prefixes kept, at the local model's measured speed) and a Stop button: the positions scored so
far are kept."""

from __future__ import annotations

import queue
import threading
import time
from dataclasses import dataclass, replace

import pandas as pd
import streamlit as st

from webapp.playground import running
from webapp.services import engine, figures, logprob, models
from webapp.services.engine import Recipe
from webapp.services.names import count
from webapp.session import State
from webapp.ui import charts, render

MORE = 5  # questions "Add 5 more questions" adds
HOW = (
    "each point is the log-probability the model gives the right answer after the prompt (teacher-forced: "
    "nothing is generated; closer to 0 = more likely), with the answer at that place. Lower in the middle than "
    "at both ends is the lost-in-the-middle effect. One question is an anecdote: add questions for a band."
)


@dataclass(frozen=True)
class LikelyJob:
    """One question to score at every place of the spread."""

    task: int | None  # the task's index in its set (None: a document of one's own)
    question: str
    answers: tuple[str, ...]
    docs: dict  # x -> Document


def jobs_for(recipe: Recipe, indices: list[int]) -> list[LikelyJob]:
    """Questions `indices` of the recipe's task set, each built at every place of the spread."""
    tasks = engine.task_set(recipe.path)
    out = []
    for i in indices:
        r = replace(recipe, index=i)
        out.append(
            LikelyJob(
                i,
                tasks[i].question,
                tuple(tasks[i].answers),
                {x: engine.built(r.at(x)) for x in r.cell.spread()},
            )
        )
    return out


def run(state: State, jobs: list[LikelyJob], strategy: str, params: dict, choice, held: dict) -> None:
    """Score every job at every place, drawing progress; results go into `held` (the session's mini-curve
    record) as they come, so a Stop (or any rerun) keeps the positions scored."""
    evaluated = 0
    for job in jobs:
        try:
            evaluated += logprob.estimate(
                job.docs, job.question, job.answers, strategy, params, choice.spec
            ).evaluated
        except (ValueError, engine.ParamError):
            pass
    expected = running.expected_seconds(choice, evaluated)
    total = sum(len(j.docs) for j in jobs)
    what = "1 question" if len(jobs) == 1 else f"{len(jobs)} questions"
    with st.status(
        f"Scoring {what} at {len(jobs[0].docs)} positions with {render.md(running.model_name(choice))}…",
        expanded=True,
    ) as status:
        st.button(
            "Stop scoring",
            icon=":material/stop:",
            key=State.positions_stop.key,
            help="Stops after the call in hand; the positions scored so far are kept (and cached).",
        )
        status.write(
            f"{evaluated:,} prompt tokens to evaluate (the prefix consecutive prompts share is kept)."
        )
        ahead = running.local_queue(choice.spec)
        if ahead:
            status.write(
                f"The local model has {count(ahead, 'run')} ahead of yours (it answers one "
                "at a time, for every session): yours starts after them."
            )
        slot = status.empty()
        events: queue.Queue = queue.Queue()
        cancel = threading.Event()

        def work() -> None:
            try:
                for n, job in enumerate(jobs):
                    if cancel.is_set():
                        break
                    logprob.score_positions(
                        job.docs,
                        job.question,
                        job.answers,
                        strategy,
                        params,
                        choice,
                        progress=lambda d, t, x, s, n=n: events.put(("scored", n, x, s)),
                        cancel=cancel,
                    )
            except Exception as e:  # shown in the page's thread as one line, never a traceback
                events.put(("error", e))
            events.put(("end",))

        started = time.monotonic()
        held["stopped"] = True  # until the worker says it ended
        thread = threading.Thread(target=work, name="litm-likelihood-run", daemon=True)
        thread.start()
        error = None
        try:
            done = 0
            while True:
                for event in drain(events):
                    if event[0] == "scored" and event[3] is not None:
                        done += 1
                        line = keep(held, jobs[event[1]], event[2], event[3])
                        status.write(line)
                    elif event[0] == "error":
                        error = event[1]
                    elif event[0] == "end":
                        held["stopped"] = False
                text = f"Elapsed {models.duration(time.monotonic() - started)}; {done} of {total} scored"
                if expected:
                    late = time.monotonic() - started > expected
                    text += (
                        f"; longer than the {models.duration(expected)} estimated (the machine is busier, or the "
                        "model is loading)"
                        if late
                        else f"; about {models.duration(expected)} in all (the model's measured speed on this machine)"
                    )
                slot.markdown(f"**{text}**")
                if not thread.is_alive() and events.empty():
                    break
                thread.join(0.5)
        finally:
            if thread.is_alive():  # Stop, or the page left: the worker ends after the call in hand
                cancel.set()
                for event in drain(events):
                    if event[0] == "scored" and event[3] is not None:
                        keep(held, jobs[event[1]], event[2], event[3])
        held["seconds"] = held.get("seconds", 0.0) + time.monotonic() - started
        if error is not None:
            held["error"] = render.md(render.short(error, (state.api_key,)))
            status.update(label="The run failed", state="error", expanded=False)
        else:
            status.update(
                label=f"Done in {models.duration(time.monotonic() - started)}",
                state="complete",
                expanded=False,
            )


def drain(events: queue.Queue) -> list:
    out = []
    while not events.empty():
        out.append(events.get_nowait())
    return out


def keep(held: dict, job: LikelyJob, x, scored) -> str:
    """Record one position's score in the session's record; the line the progress shows."""
    q = next((q for q in held["questions"] if q["task"] == job.task and q["question"] == job.question), None)
    if q is None:
        q = {"task": job.task, "question": job.question, "values": {}, "errors": {}}
        held["questions"].append(q)
    where = held["labels"].get(x, str(x))
    if scored.error:
        q["errors"][x] = scored.error
        return f"{render.md(where)}: {render.md(render.short(scored.error, ()))[:300]}"
    q["values"][x] = scored.logprob
    source = "from the cache" if scored.cached else f"in {scored.seconds:.1f} s"
    return f"{render.md(where)}: {scored.logprob:.2f} nats ({count(scored.tokens, 'answer token')}, {source})"


def section(
    state: State,
    recipe: Recipe,
    question: str,
    answers: tuple,
    strategy: str,
    params: dict,
    signature: tuple,
    choice,
) -> None:
    """The likelihood variant of "Run at 5 positions": the button, the run, the curve."""
    spread = recipe.cell.spread()
    labels = {x: recipe.cell.place(x) for x in spread}
    if choice is not None and st.button(
        f"Run at {len(spread)} positions",
        icon=":material/show_chart:",
        key=State.positions_go.key,
        help="The same question and model, the gold page at the start, a quarter, "
        "the middle, three quarters and the end: how likely the model finds "
        "the right answer at each (every call cached).",
    ):
        held = {
            "for": signature,
            "measure": "likelihood",
            "labels": labels,
            "questions": [],
            "model": running.model_name(choice),
        }
        state.mini_curve = held
        docs = {}
        try:
            docs = {x: engine.built(recipe.at(x)) for x in spread}
        except ValueError as e:
            held["error"] = render.md(render.short(e))
        if docs:
            run(
                state,
                [LikelyJob(recipe.index if recipe.kind == "task" else None, question, answers, docs)],
                strategy,
                params,
                choice,
                held,
            )
    held = state.mini_curve
    if not held or held.get("measure") != "likelihood":
        return
    if held["for"] != signature:
        st.info(
            "The settings changed since the 5-position run: its curve is cleared. Run it again.",
            icon=":material/history:",
        )
        state.mini_curve = None
        return
    first_whole = bool(held["questions"]) and all(x in held["questions"][0]["values"] for x in spread)
    if (
        recipe.kind == "task"
        and choice is not None
        and first_whole
        and st.button(
            f"Add {MORE} more questions",
            icon=":material/add:",
            key=State.positions_more.key,
            help="The next questions of this task set at the same places: the mean over questions, with a 95% "
            "band (every call cached).",
        )
    ):
        held.pop("error", None)
        n_tasks = len(engine.task_set(recipe.path))
        asked = {q["task"] for q in held["questions"]}
        following = [(recipe.index + k) % n_tasks for k in range(1, n_tasks)]
        fresh = [i for i in following if i not in asked][:MORE]
        try:
            jobs = jobs_for(recipe, fresh)
        except ValueError as e:
            held["error"] = render.md(render.short(e))
            jobs = []
        if jobs:
            run(state, jobs, strategy, params, choice, held)
    show(held, recipe)


def show(held: dict, recipe: Recipe) -> None:
    if held.get("error"):
        st.error(held["error"], icon=":material/error:")
    questions = held["questions"]
    if held.get("stopped"):
        scored = sum(len(q["values"]) for q in questions)
        st.info(
            "Stopped: the positions scored so far are kept (and cached: running again asks only for the "
            "rest)."
            if scored
            else "Stopped before any position was scored. A call the model had begun "
            "still finishes, and is cached.",
            icon=":material/stop_circle:",
        )
    if not questions or not any(q["values"] for q in questions):
        return
    labels = held["labels"]
    order = list(labels)
    first = questions[0]
    line = [(labels[x], first["values"][x]) for x in order if x in first["values"]]
    whole = [q for q in questions if all(x in q["values"] for x in order)]
    mean = None
    if len(whole) >= 2:
        matrix = pd.DataFrame([[q["values"][x] for x in order] for q in whole], columns=order)
        mean = logprob.points(matrix, "position")
    n = len(whole)
    title = "One question" if mean is None else f"{n} questions"
    places = (
        f"{len(order)} positions"
        if mean is not None or len(line) == len(order)
        else f"{len(line)} of {len(order)} positions"
    )
    fig = figures.likelihood_curve(
        line,
        mean,
        x_title=recipe.cell.x_title,
        title=f"{title}, {places}",
        x="position",
        labels=labels,
        mean_name=f"mean over {n} questions, 95% band",
        categories=[labels[x] for x in order],
        model=held.get("model", ""),
    )
    model = held.get("model", "")
    charts.show(
        fig, "mini-likelihood-curve", HOW, note=f"{model} · this app · ours, not the papers'", note_width=60
    )
    if mean is not None:
        st.caption(logprob.brief(logprob.shape_of(matrix, "position")))
    errors = [e for q in questions for e in q["errors"].values()]
    if errors:
        st.warning(
            f"{count(len(errors), 'position')} could not be scored: {render.md(render.short(errors[0], ()))}",
            icon=":material/warning:",
        )
    if held.get("seconds"):
        st.caption(
            f"{count(len(questions), 'question')} scored in {models.duration(held['seconds'])} in all."
        )
