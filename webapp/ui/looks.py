"""The strip "where the model looks" (the Playground, under the prompt map; the Lesson's step "why the
middle is lost"): each page's share of the bundled local model's attention along the prompt's token axis,
the gold page marked (services.attention). Measured on request (a call of about a minute on 2 cores;
cached: again costs nothing), with the usual wait and progress; for other providers, one line saying why
not."""

from __future__ import annotations

import streamlit as st

from webapp.services import attention, figures
from webapp.session import State
from webapp.ui import charts, render
from webapp.ui.clock import Clock, expected_seconds, model_name


def section(
    state: State,
    prompts: list,
    strategy_stages: int,
    signature: tuple,
    input_tokens: int,
    *,
    heading: bool = True,
    height: int | None = None,
    name: str = "where-the-model-looks",
) -> None:
    """The button, the wait and the strip for `prompts` (one prompt of one stage), held in the session
    for `signature` (the inputs it was read for); `height`: the strip's (presenter mode), `name` the
    chart's export name."""
    if heading:
        st.markdown("##### Where the model looks")
    choice = state.choice
    if choice is None or not attention.can_attend(choice.spec):
        spec = choice.spec if choice is not None else None
        st.caption(
            attention.why_not(spec)  # our words and a provider of the fixed list: nothing to escape
            if spec is not None
            else "Choose the bundled local model in the sidebar to see where it looks in this prompt."
        )
        return
    if len(prompts) != 1 or strategy_stages != 1:
        st.caption("Where the model looks is shown for a prompt of one stage (LITM QA, baseline, ...).")
        return
    held = state.looks
    if held and held.get("for") != signature:
        state.looks = held = None
    if st.button(
        f"Show where {render.md(model_name(choice))} looks",
        icon=":material/visibility:",
        key=State.looks_go.key,
        help="Reads the model's attention from the last prompt token, by page (one cached call; nothing is "
        "generated).",
    ):
        with st.status(f"Reading the attention of {render.md(model_name(choice))}…", expanded=True) as status:
            clock = Clock(status, expected_seconds(choice, input_tokens))
            try:
                got = clock.run(lambda: attention.measure(prompts[0], choice))
                state.looks = held = {"for": signature, **got}
                status.update(label=f"Done in {clock.elapsed_text()}", state="complete", expanded=False)
            except Exception as e:  # one line (a provider's error, a refusal), never a traceback
                state.looks = held = {"for": signature, "error": render.short(e, (state.api_key,))}
                status.update(label="The attention could not be read", state="error", expanded=False)
    if not held:
        return
    if held.get("error"):
        st.error(held["error"], icon=":material/error:")
        return
    fig = attention.strip_figure(prompts[0], held["masses"], held["other"])
    charts.show(fig, name, attention.MEANING, series=False, height=height)
    source = "from the cache" if held.get("cached") else f"in {held['seconds']:.0f} s"
    st.caption(
        f"{render.md(held['model'])}, read {source}; the gold page in {figures.map_colour('gold')}, as on the map."
    )
