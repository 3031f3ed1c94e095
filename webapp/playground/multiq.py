"""The Playground's "many questions at once" part (Context Overloading in RAG Based Systems, §4): the
document's pages are the contexts, several pasted questions are asked of it at once with the whole
document (mq-full), with every chunk (mq-chunked) or each with the chunk sharing most keywords with it
(mq-keyword). Shows the prompts before any call (and which chunk each question goes to), then asks them
with the sidebar's model (services.multiq.run, cached in the user's run store) and scores each answer
where gold answers were given."""

from __future__ import annotations

import hashlib

import pandas as pd
import streamlit as st

from webapp.playground.running import Clock, model_name
from webapp.services import multiq
from webapp.services.engine import ParamError, get_strategy
from webapp.services.live import ProviderError
from webapp.services.names import count
from webapp.session import State
from webapp.ui import render
from webapp.ui.render import guard, md

EXAMPLE = "Who designed the building? | Ada Kerr\nWhen does the river flood?\tevery spring"


def section(state: State, doc) -> None:
    with st.expander("Many questions at once: ask several questions of this document (Context Overloading)"):
        with guard("the many-questions part"):
            body(state, doc)


def body(state: State, doc) -> None:
    st.caption(
        "The document's pages are the contexts (the paper's SQuAD paragraphs). Every question is asked "
        'in one go, numbered Q1, Q2, …; the model answers A1:, A2:, … and may say "Not specified".'
    )
    st.text_area(
        "Questions, one a line; gold answers (optional) after a tab or |",
        key=State.pg_mq_questions.key,
        height=120,
        placeholder=EXAMPLE,
    )
    c1, c2 = st.columns([2, 1])
    c1.radio(
        "Strategy",
        multiq.STRATEGIES,
        key=State.pg_mq_strategy.key,
        horizontal=True,
        format_func=lambda s: get_strategy(s).label.removeprefix("Multi-question: "),
        help="the whole document; every question with every chunk; each question with its keyword chunk",
    )
    strategy = state.pg_mq_strategy
    c2.number_input(
        "chunk_tokens",
        10,
        100_000,
        step=50,
        key=State.pg_mq_chunk.key,
        disabled=strategy == "mq-full",
        help="chunks of whole pages, at most this many tokens (a longer page is a chunk of its own)",
    )
    asked, problems = multiq.parse_questions(state.pg_mq_questions)
    for p in problems:
        st.warning(md(p), icon=":material/warning:")
    if not asked:
        st.info("Type or paste questions, one a line, to see the prompts.")
        return
    params = {} if strategy == "mq-full" else {"chunk_tokens": int(state.pg_mq_chunk)}
    questions = [q for q, _ in asked]
    try:
        prompts = multiq.plan(doc, questions, strategy, params)
    except (ParamError, ValueError) as e:
        st.warning(md(render.short(e)), icon=":material/tune:")
        return
    n_chunks = len(multiq.chunks(doc, params["chunk_tokens"])) if params else 1
    st.caption(
        f"{count(len(questions), 'question')}, {count(len(doc.pages), 'page')} in {count(n_chunks, 'chunk')}: "
        f"{count(len(prompts), 'prompt')}, {sum(a.prompt.tokens for a in prompts):,} tokens in all."
    )
    if strategy == "mq-keyword":
        where = {i: a.chunk for a in prompts for i in a.questions}
        st.dataframe(
            pd.DataFrame(
                {
                    "Q": range(1, len(questions) + 1),
                    "question": questions,
                    "its chunk (most shared keywords)": [where[i] for i in range(len(questions))],
                }
            ),
            hide_index=True,
            width="stretch",
        )
    labels = [f"{i + 1}. {a.prompt.label} ({a.prompt.tokens:,} tokens)" for i, a in enumerate(prompts)]
    if not 0 <= state.pg_mq_view < len(prompts):
        state.pg_mq_view = 0
    index = (
        st.selectbox("Prompt", range(len(prompts)), key=State.pg_mq_view.key, format_func=labels.__getitem__)
        if len(prompts) > 1
        else 0
    )
    st.html(render.prompt_html(prompts[index].prompt, height_rem=18))
    inputs = hashlib.sha256(
        repr((doc.name, [p.text for p in doc.pages], asked, strategy, params)).encode()
    ).hexdigest()
    answers_section(state, doc, asked, strategy, params, inputs)


def answers_section(state: State, doc, asked, strategy: str, params: dict, inputs: str) -> None:
    choice = state.choice
    if choice is None:
        st.caption("Choose a model in the sidebar to ask them.")
        return
    if st.button(f"Ask them with {model_name(choice)}", key=State.pg_mq_go.key, icon=":material/play_arrow:"):
        with st.status("Asking…", expanded=True) as status:
            clock = Clock(status, None)
            try:
                result = clock.run(
                    lambda: multiq.run(doc, asked, strategy, params, choice, on_call=clock.on_call)
                )
            except (ProviderError, ParamError, ValueError) as e:
                status.update(label="Not asked", state="error")
                st.error(md(render.short(e, (choice.api_key,))), icon=":material/error:")
                return
            status.update(label=f"Answered in {clock.elapsed_text()}", state="complete", expanded=False)
        state.pg_mq_result = {"inputs": inputs, **result}
    got = state.pg_mq_result
    if not got or got.get("inputs") != inputs:
        return
    rows = pd.DataFrame(got["rows"])
    scored = rows["category"].notna()
    counts = rows.loc[scored, "category"].value_counts()
    line = (
        ", ".join(f"{int(counts.get(c, 0))} {label}" for c, label in multiq.CATEGORIES.items())
        if scored.any()
        else "no gold answers given, so nothing scored"
    )
    st.caption(
        f"{count(got['calls'], 'call')} ({got['cached']} from the cache), {got['input_tokens']:,} tokens in, "
        f"{got['output_tokens']:,} out. {line}."
    )
    st.dataframe(rows.dropna(axis=1, how="all"), hide_index=True, width="stretch")
    with st.expander("The model's responses, as written"):
        for label, text in got["responses"]:
            st.html(render.labelled(f"{label}:", ""))
            st.code(text, language=None, wrap_lines=True)
