"""The Playground's live run: the button, the time it takes (elapsed, and an estimate from the local
model's speed on this machine: measured, or timed by a warm-up), the place in the local
model's queue, a Cancel that stops the call in the worker, and the result. The trial itself is
services.live.execute."""

from __future__ import annotations

import streamlit as st

from webapp.services import engine, models
from webapp.services.live import CallCancelled, LocalRun, ProviderError, RunView, execute, local_queue
from webapp.services.names import count
from webapp.session import State
from webapp.ui import render
from webapp.ui.clock import Clock, expected_seconds, local_speed, model_name

__all__ = ["Clock", "execute", "expected_seconds", "model_name", "run_section", "show"]


def run_section(
    state: State,
    doc,
    question: str,
    answers: tuple[str, ...],
    strategy: str,
    params: dict,
    inputs: tuple,
    input_tokens: int = 0,
) -> None:
    st.subheader("Run it")
    choice = state.choice
    building = models.local_building() if choice is None and state.provider == "local" else ""
    if building:  # make app builds the local model's runtime in the background
        st.info(render.md(building), icon=":material/hourglass_top:")
    elif choice is None:
        st.info(
            "No model to call: choose a provider in the sidebar (and enter its key) to run this prompt.",
            icon=":material/key_off:",
        )
    else:
        label = model_name(choice)  # the model's display name, as charts and tables say it
        local = choice.spec.provider == "local"
        if local and local_speed(choice) is None:
            models.warm(choice.spec)  # the worker loads and times the model: the first run says "of about"
        if st.button(
            f"Run with {render.md(label)}", type="primary", icon=":material/play_arrow:", key=State.run_go.key
        ):
            state.run_error = ""
            s = engine.get_strategy(strategy)
            with st.status(f"Running {s.label} with {render.md(label)}…", expanded=True) as status:
                handle = LocalRun() if local else None
                if handle is not None:
                    state.run_cancelled = True  # until it ends: a rerun meanwhile (Cancel) finds it cancelled
                    st.button(
                        "Cancel",
                        icon=":material/stop:",
                        key=State.run_cancel.key,
                        help="Stops the call in the local model now; nothing of this run is stored.",
                    )
                try:
                    status.write(f"{s.label}: {count(s.stages, 'stage')}.")
                    calls = max(1, s.stages)
                    clock = Clock(status, lambda: expected_seconds(choice, input_tokens, calls), handle)
                    view = clock.run(
                        lambda: execute(
                            doc,
                            question,
                            answers,
                            strategy,
                            params,
                            choice,
                            on_call=lambda p, c: clock.on_call(p, c, local_queue(choice.spec)),
                        )
                    )
                    state.last_run = {"inputs": inputs, "view": view}
                    status.update(label=f"Done in {clock.elapsed_text()}", state="complete", expanded=False)
                except CallCancelled:
                    status.update(label="Cancelled", state="error", expanded=False)
                except (ProviderError, engine.ParamError, ValueError, OSError) as e:
                    state.run_error = render.short(e, (state.api_key,))
                    status.update(label="The run failed", state="error", expanded=False)
                finally:  # cancelled exactly when its LocalRun was (Cancel, or the page left mid-run)
                    state.run_cancelled = handle is not None and handle.cancelled.is_set()
    if state.run_cancelled:
        st.info(CANCELLED, icon=":material/stop_circle:")
        state.run_cancelled = False  # said once
    if state.run_error:
        st.error(state.run_error, icon=":material/error:")
    last = state.last_run
    if last and last["inputs"] != inputs:  # any input changed: the old answer and verdict would mislead
        st.info(
            "The settings changed since the last run: its result is cleared. Run again to see the new one.",
            icon=":material/history:",
        )
        state.last_run = last = None
    if last:
        show(last["view"], answers)


CANCELLED = (
    "The run was cancelled: the local model stopped it, and nothing of it is stored. Run again to start over."
)

# why the run's input tokens are not the prompt map's: one sentence, under the run's figures
TOKENS_NOTE = (
    "Input tokens are the model's own count of what it read: the prompt map's text in the model's "
    "tokenizer, plus the chat template's tokens around each message (role markers), for every call; the "
    "map counts the text alone in GPT-4 tokens (cl100k_base), so the two differ."
)


def show(v: RunView, answers: tuple[str, ...]) -> None:
    metric = engine.get_metric(v.metric).label if v.metric else "no metric"
    verdict = (
        "no gold answer given"
        if v.correct is None
        else ":green[**correct**]"
        if v.correct
        else ":red[**incorrect**]"
    )
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
            recall = engine.retrieval_recall(v.retrieved, v.gold)
            if recall is not None:
                st.caption(
                    f"{'hit' if recall == 1 else 'partial hit' if recall else 'miss'}: "
                    f"{round(recall * len(v.gold))} of {count(len(v.gold), 'gold page')} retrieved"
                )
            if v.first_pages:
                st.warning(
                    "The model retrieved just the first pages in order (1, 2, 3, …): what a weak model "
                    "answers whatever the question. A hit here says nothing about retrieval.",
                    icon=":material/warning:",
                )
        if v.cited:
            st.markdown("**Page(s) the answer cites**")
            st.html(render.pages_html(v.cited, v.gold))
        for note in v.notes:
            st.caption(note)
    with cols[1]:
        a, b = st.columns(2)
        a.metric("Calls", f"{v.calls:,}")
        b.metric("Latency (s)", f"{v.latency_s:,.1f}" if v.latency_s < 100 else f"{v.latency_s:,.0f}")
        a.metric("Input tokens", f"{v.input_tokens:,}")
        b.metric("Output tokens", f"{v.output_tokens:,}")
        a.metric("Cost", render.usd(v.usd))
        mapped = sum(p.tokens for p in v.prompts)
        st.caption(
            f"Model: {render.md(v.model)}. The prompt map counts {mapped:,} prompt tokens for "
            f"{count(len(v.prompts), 'prompt')} sent. {TOKENS_NOTE}"
        )
    with st.expander("Raw responses"):
        for label, text in v.raw:
            st.markdown(f"**{label}**")
            st.code(text or "(empty)", language=None, wrap_lines=True)
