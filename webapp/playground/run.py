"""The Playground's live run: the run itself (through components.run.runner.run_one) and its result.

The run happens in this session's script thread (Streamlit gives every session its own), so other
sessions are never blocked; its inputs, result and errors live in this session's state only.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import streamlit as st

from components.core.documents import Document
from components.core.metrics import get_metric
from components.core.scoring import retrieval_recall
from components.providers.base import ProviderError
from components.strategies import ParamError, get_strategy
from webapp.session.state import State
from webapp.ui import render


@dataclass
class RunView:
    """What the page shows after a run (plain values: safe to keep in session state)."""

    answer: str
    metric: str
    correct: bool | None
    gold: tuple[int, ...]
    retrieved: tuple[int, ...] | None
    cited: tuple[int, ...]
    calls: int
    input_tokens: int
    output_tokens: int
    latency_s: float
    usd: float | None
    model: str
    raw: list[tuple[str, str]] = field(default_factory=list)  # (prompt label, response text)
    notes: list[str] = field(default_factory=list)
    prompts: list = field(default_factory=list)  # every stage's prompt as sent (the map draws them all)
    first_pages: bool = False  # retrieval was just pages 1, 2, ..., k in order (components.run.moving)


def execute(doc: Document, question: str, answers: tuple[str, ...], strategy_name: str, params: dict,
            choice, on_call=None) -> RunView:
    """One trial, live, through components.run.runner.run_one, cached in the user's run store (a repeated
    run is answered from the cache). Raises ProviderError (e.g. MissingKey) or ParamError."""
    from components.run.runner import run_one
    from components.run.store import RunStore
    from webapp.services import jobs

    strategy = get_strategy(strategy_name)
    checked = strategy.check(doc, question, params)
    spec = choice.spec
    store = RunStore(jobs.user_db())
    try:
        result = run_one(doc, question, list(answers), strategy_name, checked, spec, store=store,
                         api_key=choice.api_key, on_call=on_call)
    finally:
        store.close()
    trial = result.trial
    if trial.error:
        raise ProviderError(trial.error)
    outcome = result.outcome
    raw = [(p.label or f"prompt {i + 1}", c.text)
           for i, (p, c) in enumerate(zip(outcome.prompts, outcome.completions, strict=False))]
    # the verdict is the stored trial's own primary metric: the same value Results reads
    correct = None if not answers or trial.primary is None else bool(trial.primary)
    notes = [f"parse: {trial.parse_error}"] if trial.parse_error else []
    if trial.cached_calls:
        notes.append(f"{trial.cached_calls} of {trial.calls} call(s) answered from the cache")
    from components.run.moving import first_pages

    return RunView(trial.answer, trial.metric, correct, tuple(doc.gold), trial.retrieved_pages,
                   tuple(trial.cited_pages or ()), trial.calls, trial.input_tokens, trial.output_tokens,
                   trial.latency_s, trial.cost_usd, spec.label, raw, notes, list(outcome.prompts),
                   first_pages(trial.retrieved_pages))


def call_line(prompt, completion, ahead: int = 0) -> str:
    """One progress line per call: before it is sent (with the local model's queue ahead of it, when
    other sessions are using it), and when its answer is back."""
    what = prompt.label or f"stage {prompt.stage}"
    if completion is None:
        queue = (f"; the local model is busy with {ahead} other call{'s' if ahead != 1 else ''} first"
                 if ahead else "")
        return f"{what}: sending {prompt.tokens:,} tokens, waiting for the model{queue}…"
    source = "from the cache" if completion.cached else f"in {completion.latency_s:.1f} s"
    return f"{what}: answered {source} ({completion.output_tokens:,} tokens out)."


def local_queue(spec) -> int:
    """Calls ahead of a new one on the in-process local model (0 for any other provider)."""
    if spec.provider != "local":
        return 0
    from components.providers.local import queue_length

    return queue_length()


def run_section(state: State, doc: Document, question: str, answers: tuple[str, ...], strategy: str,
                params: dict, inputs: tuple) -> None:
    st.subheader("Run it")
    choice = state.choice
    if choice is None:
        st.info("No model to call: choose a provider in the sidebar (and enter its key) to run this prompt.",
                icon=":material/key_off:")
    else:
        label = choice.spec.label
        if st.button(f"Run with {render.md(label)}", type="primary", icon=":material/play_arrow:"):
            state.run_error = ""
            with st.status(f"Running {get_strategy(strategy).label} with {render.md(label)}…",
                           expanded=True) as status:
                try:
                    status.write(f"{get_strategy(strategy).label}: {get_strategy(strategy).stages} stage(s).")
                    view = execute(doc, question, answers, strategy, params, choice,
                                   on_call=lambda p, c: status.write(call_line(p, c, local_queue(choice.spec))))
                    state.last_run = {"inputs": inputs, "view": view}
                    status.update(label="Done", state="complete", expanded=False)
                except (ProviderError, ParamError, ValueError, OSError) as e:
                    state.run_error = render.short(e, (state.api_key,))
                    status.update(label="The run failed", state="error", expanded=False)
    if state.run_error:
        st.error(state.run_error, icon=":material/error:")
    last = state.last_run
    if last and last["inputs"] != inputs:  # any input changed: the old answer and verdict would mislead
        st.info("The settings changed since the last run: its result is cleared. Run again to see the new one.",
                icon=":material/history:")
        state.last_run = last = None
    if last:
        show(last["view"], answers)


def show(v: RunView, answers: tuple[str, ...]) -> None:
    metric = get_metric(v.metric).label if v.metric else "no metric"
    verdict = ("no gold answer given" if v.correct is None
               else ":green[**correct**]" if v.correct else ":red[**incorrect**]")
    cols = st.columns([2, 1])
    with cols[0]:
        st.markdown("**Answer**")
        st.html(render.text_box(v.answer or "(no answer parsed)", height_rem=6))
        st.markdown(f"**Score:** {verdict} ({metric})")
        if answers:
            st.html(render.labelled("Gold answer(s):", " · ".join(answers)))
        if v.retrieved is not None:
            st.markdown("**Pages retrieved** (gold pages marked)")
            st.html(render.pages_html(v.retrieved, v.gold))
            recall = retrieval_recall(v.retrieved, v.gold)
            if recall is not None:
                st.caption(f"{'hit' if recall == 1 else 'partial hit' if recall else 'miss'}: "
                           f"{round(recall * len(v.gold))} of {len(v.gold)} gold page(s) retrieved")
            if v.first_pages:
                st.warning("The model retrieved just the first pages in order (1, 2, 3, …): what a weak model "
                           "answers whatever the question. A hit here says nothing about retrieval.",
                           icon=":material/warning:")
        if v.cited:
            st.markdown("**Page(s) the answer cites**")
            st.html(render.pages_html(v.cited, v.gold))
        for note in v.notes:
            st.caption(note)
    with cols[1]:
        a, b = st.columns(2)
        a.metric("Calls", f"{v.calls:,}")
        b.metric("Latency", f"{v.latency_s:,.1f} s")
        a.metric("Input tokens", f"{v.input_tokens:,}")
        b.metric("Output tokens", f"{v.output_tokens:,}")
        a.metric("Cost", render.usd(v.usd))
        st.caption(f"Model: {render.md(v.model)}")
    with st.expander("Raw responses"):
        for label, text in v.raw:
            st.markdown(f"**{label}**")
            st.code(text or "(empty)", language=None, wrap_lines=True)
