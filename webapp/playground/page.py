"""Playground: one document, one question, one strategy. See the prompt before any call, then run it.

A document of one's own asks first where the answer is: the answer's words find the gold page. A new
pasted or uploaded document starts on Baseline, where the gold page sits where the text has it."""

from __future__ import annotations

import streamlit as st

from webapp import session
from webapp.playground import moving, multiq, running
from webapp.playground.inputs import new_source, task_source, text_source
from webapp.playground.strategy import strategy_input
from webapp.services import engine, figures, models
from webapp.session import State
from webapp.ui import charts, looks, render, sidebar

SOURCES = ("Sample", "Paste", "Upload", "Task set")


# ---------------------------------------------------------------- numbers before the run

# what the prompt holds beyond the page text: one line under the numbers (the run counts the same prompts)
PROMPT_LINE = (
    "Prompt tokens = text + page tags + instructions + question + reminders (where the strategy has "
    "them), in GPT-4 tokens (cl100k_base): the prompt map's count. A run reports the model's own count."
)


def before_run(doc, prompts: list, usage: tuple[int, int, int], strategy: str) -> None:
    """Pages, tokens, calls and the estimated cost, before any call."""
    calls, tin, tout = usage
    later = engine.get_strategy(strategy).stages > 1
    spec = sidebar.current_spec()
    if spec is None:
        cost, cost_help = "no model", "Choose a provider and model in the sidebar to see their price."
    else:
        cost = render.usd(models.cost_usd(spec.provider, spec.model, tin, tout))
        cost_help = (
            f"{spec.label}: {tin:,} input and {tout:,} output tokens at list prices ({models.PRICES_DATE})."
        )
    cols = st.columns(
        [0.8, 1.1, 1.3, 1.2, 1.0]
    )  # values short (a label wraps, a value is cut): "about" in the label
    cols[0].metric("Pages", f"{len(doc.pages):,}")
    cols[1].metric(
        "Text tokens", f"{doc.tokens:,}", help="The page text alone: no tags, instructions or question."
    )
    cols[2].metric("Prompt tokens" + (" (stage 1)" if later else ""), f"{sum(p.tokens for p in prompts):,}")
    cols[3].metric(
        "Calls (about)" if later else "Calls",
        f"{calls:,}",
        help="Later stages depend on the model's answers: estimated." if later else None,
    )
    cols[4].metric("Estimated cost", cost, help=cost_help)
    st.caption(PROMPT_LINE)
    places = engine.gold_places(prompts)
    if places:
        text = "; ".join(
            f"gold page {g.page} starts at token {g.start:,} of prompt {g.prompt + 1}"
            + ("" if g.distance is None else f", {engine.n_tokens(g.distance)} from the nearest instruction")
            for g in places[:4]
        )
        st.caption(text + ("…" if len(places) > 4 else ""))


# ---------------------------------------------------------------- page


def prompt_section(state: State, inputs: tuple, doc, prompts: list, map_slot) -> None:
    recipe, strategy, params, question, _answers = inputs
    last = state.last_run
    view = last["view"] if last and last["inputs"] == inputs else None
    after = view is not None and len(view.prompts) > len(prompts)  # after an ICR/R&R run: every stage
    with map_slot:
        if after:
            fig = engine.map_of(view.prompts, doc, retrieved=view.retrieved)
            how = (
                f"one row per prompt sent, stage 1 then stage 2; on stage 1, a {figures.map_colour('hit')} dot marks "
                f"a retrieved gold page (hit), a {figures.map_colour('miss')} cross a retrieved page that is not gold "
                "(miss)."
            )
        else:
            fig = engine.figure(recipe, strategy, params, question)
            how = (
                f"each row is one prompt along its tokens: {figures.colour_key()}; below, each page's distance to the "
                "nearest instruction."
            )
        charts.show(fig, f"prompt-map-{strategy}", how, series=False)
    sent = view.prompts if after else prompts
    st.subheader("The exact prompt" + ("s" if len(sent) > 1 else ""))
    index = 0
    if len(sent) > 1:
        labels = [f"{i + 1}. {p.label} ({p.tokens:,} tokens)" for i, p in enumerate(sent)]
        if not 0 <= state.view_prompt < len(sent):
            state.view_prompt = 0
        index = st.selectbox(
            "Prompt", range(len(sent)), key=State.view_prompt.key, format_func=labels.__getitem__
        )
    st.caption(
        f"Stage {sent[index].stage} prompt {index + 1} of {len(sent)}: {sent[index].tokens:,} tokens, exactly "
        "as sent; hover a region to see what it is."
    )
    st.html(render.legend_html())
    st.html(
        render.prompt_html(sent[index])
        if after
        else render.prompt_view(recipe, strategy, params, question, index)
    )


def main() -> None:
    state = session.start("playground")
    st.title("Playground")
    if not state.present:  # on a projector the map needs the room
        st.caption(
            "Pick a document, say where the answer is, choose a strategy, move the answer: see where the "
            "instructions, reminders and the gold page land in the prompt, then run it."
        )
    c_in, c_map = st.columns([1, 1.9], gap="large")
    c_in.markdown("#### 1 · Document")
    c_in.radio(
        "Source",
        SOURCES,
        key=State.source.key,
        horizontal=True,
        label_visibility="collapsed",
        on_change=new_source,
    )
    got = task_source(state, c_in) if state.source == "Task set" else text_source(state, c_in)
    if got is None:
        return
    base, doc_id, question, answers = got
    with c_map:
        recipe = moving.position_control(state, base)
        try:
            doc = engine.built(recipe)
        except ValueError as e:
            st.error(render.md(render.short(e)))  # task ids come from files
            return
        if recipe.moved and tuple(doc.gold) != tuple(base.gold):
            st.caption(
                f"Moved: gold page {', '.join(map(str, base.gold))} as written is page "
                f"{', '.join(map(str, doc.gold))} in this prompt; the other pages keep their order."
            )
    with c_in:
        st.markdown("#### 3 · Strategy")
        strategy, params = strategy_input(state, doc, doc_id)
    multiq.section(state, doc)  # many questions at once (Context Overloading §4), folded
    if not question:
        c_map.info("Type a question (or pick a suggested one) to build the prompt.")
        return
    try:
        prompts = engine.prompts(recipe, strategy, params, question)
        usage = engine.usage(recipe, strategy, params, question)
    except engine.ParamError as e:
        c_map.warning(render.short(e), icon=":material/tune:")
        return
    with c_map:
        st.subheader("The prompt map")
        map_slot = st.container()
        before_run(doc, prompts, usage, strategy)
        inputs = (recipe, strategy, params, question, answers)
        looks.section(state, prompts, engine.get_strategy(strategy).stages, inputs, usage[1])
        running.run_section(
            state, doc, question, answers, strategy, dict(params), inputs, input_tokens=usage[1]
        )
        moving.mini_curve_section(state, recipe, question, answers, strategy, dict(params), inputs[1:])
    prompt_section(state, inputs, doc, prompts, map_slot)


with render.guard("the Playground"):
    main()
