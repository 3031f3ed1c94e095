"""Playground: one document, one question, one strategy. See the prompt before any call, then run it.

A document of one's own asks first where the answer is: the answer's words find the gold page. A new
pasted or uploaded document starts on Baseline, where the gold page sits where the text has it."""

from __future__ import annotations

import hashlib

import streamlit as st

from webapp import session
from webapp.playground import moving, multiq, running
from webapp.playground.strategy import strategy_input
from webapp.services import engine, figures, models
from webapp.services.engine import Recipe
from webapp.session import State
from webapp.ui import charts, render, sidebar

OWN = "✎ my own question"
SOURCES = ("Sample", "Paste", "Upload", "Task set")
PAGINATIONS = {"paragraph": "by paragraph", "sentence": "by sentence", "tokens": "by token budget"}
OWN_TEXT = ("Paste", "Upload")


def split_answers(text: str) -> tuple[str, ...]:
    """Gold answers typed as 'Paris | the French capital' (or one per line)."""
    return tuple(a.strip() for a in text.replace("\n", "|").split("|") if a.strip())


# ---------------------------------------------------------------- document


def document_input(state: State) -> tuple[str, str, list]:
    """(text, name, suggested questions) of the chosen document; text "" when there is none yet."""
    all_samples = engine.samples()
    if state.source == "Sample":
        if not all_samples:
            st.info("No bundled samples are installed. Paste text or upload a file.")
            return "", "", []
        names = [s.name for s in all_samples]
        if state.sample not in names:
            state.sample = names[0]
        st.selectbox(
            "Sample",
            names,
            key=State.sample.key,
            on_change=_new_sample,
            format_func=lambda n: next(s.title for s in all_samples if s.name == n),
        )
        sample = next(s for s in all_samples if s.name == state.sample)
        st.caption(f"{sample.description} Source: {sample.source}")
        return sample.text, sample.name, list(sample.questions)
    if state.source == "Task set":
        return "", "", []
    if state.source == "Paste":
        st.text_area(
            "Paste a document",
            key=State.pasted.key,
            height=140,
            placeholder="Paste text here. Blank lines separate paragraphs.",
        )
        st.button(
            "Use this text",
            icon=":material/check:",
            help="applies the text (so does clicking anywhere outside the box)",
        )
        return state.pasted, "pasted text", []
    return upload_input(state), state.upload_name, []


def upload_input(state: State) -> str:
    limit_mb = engine.MAX_UPLOAD_BYTES // (1024 * 1024)
    file = st.file_uploader(
        f"Upload a document ({', '.join(engine.EXTENSIONS)}; up to {limit_mb} MB)",
        type=[e.lstrip(".") for e in engine.EXTENSIONS],
        max_upload_size=limit_mb,
        key=State.upload.key,
    )
    if file is not None and file.file_id != state.upload_id:
        state.upload_id = file.file_id
        try:
            text = engine.read_upload(file.name, file.getvalue())
            if not text.strip():
                raise engine.DocumentError(f"{file.name} has no text in it")
            state.upload_text, state.upload_name, state.upload_error = text, file.name, ""
        except engine.DocumentError as e:
            state.upload_text, state.upload_name, state.upload_error = "", "", render.short(e)
    if state.upload_error:
        st.error(state.upload_error, icon=":material/description:")
    elif state.upload_text and file is None:
        st.caption(f"Using the earlier upload: {render.md(state.upload_name)}")
    return state.upload_text


def _new_source() -> None:
    """Another kind of document: the sample's question does not belong to it."""
    state = State()
    state.question, state.answers, state.question_pick = "", "", ""


def _new_sample() -> None:
    State().question_pick = ""  # the first question of the new sample is picked below


def pagination_input(state: State) -> str:
    cols = st.columns([3, 2])
    cols[0].selectbox(
        "Pages",
        list(PAGINATIONS),
        key=State.pagination.key,
        format_func=PAGINATIONS.get,
        help="A page is the unit of retrieval and of position (R&R §3.1).",
    )
    if state.pagination == "tokens":
        cols[1].number_input(
            "Tokens per page", min_value=20, max_value=20_000, step=50, key=State.page_tokens.key
        )
        return f"tokens:{int(state.page_tokens)}"
    return state.pagination


# ---------------------------------------------------------------- task

ANSWER_HELP = (
    "The words of the answer, as the document has them (several forms: separate them with |). "
    "They find the gold page and score the model's answer."
)


def question_input(state: State, questions: list) -> tuple[str, tuple[str, ...]]:
    if questions:
        picks = [q for q, _ in questions] + [OWN]
        if state.question_pick not in picks:
            state.question_pick = picks[0]
            _apply_pick(questions)
        st.selectbox(
            "Suggested question", picks, key=State.question_pick.key, on_change=_apply_pick, args=(questions,)
        )
        st.text_input("Question", key=State.question.key, placeholder="What do you want to ask?")
        st.text_input("Answer", key=State.answers.key, help=ANSWER_HELP)
    else:  # a document of one's own: where is the answer? (it finds the gold page)
        st.text_input(
            "Where is the answer? Type its words as the document has them",
            key=State.answers.key,
            placeholder="e.g. 4711",
            help=ANSWER_HELP,
        )
        st.text_input("Question", key=State.question.key, placeholder="What do you want to ask?")
    return state.question.strip(), split_answers(state.answers)


def _apply_pick(questions: list) -> None:
    state = State()
    for q, answers in questions:
        if q == state.question_pick:
            state.question, state.answers = q, " | ".join(answers)


def gold_input(
    state: State, text: str, spec: str, name: str, answers: tuple[str, ...], n_pages: int
) -> tuple:
    signature = hashlib.sha256(repr((text, spec, name, answers)).encode()).hexdigest()
    if state.gold_for != signature:
        state.gold_for = signature
        state.gold = engine.gold_pages(text, spec, name, answers) if answers else []
    state.gold = [g for g in state.gold if 1 <= g <= n_pages]
    st.multiselect(
        "Gold page(s)",
        list(range(1, n_pages + 1)),
        key=State.gold.key,
        format_func=lambda p: f"page {p}",
        help="Pages that hold the answer; found from the answer's words, adjust freely.",
    )
    if answers and not state.gold:
        st.caption("No page contains the answer word for word: mark the gold page by hand.")
    elif not answers:
        st.caption("Type the answer's words to find the gold page, or mark it by hand.")
    return tuple(sorted(state.gold))


# ---------------------------------------------------------------- numbers before the run


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
    cols = st.columns([0.8, 1.1, 1.3, 1.2, 1.0])  # room for "2 (about)" and "Prompt tokens (stage 1)"
    cols[0].metric("Pages", f"{len(doc.pages):,}")
    cols[1].metric("Document tokens", f"{doc.tokens:,}")
    cols[2].metric("Prompt tokens" + (" (stage 1)" if later else ""), f"{sum(p.tokens for p in prompts):,}")
    cols[3].metric(
        "Calls",
        f"{calls:,}" + (" (about)" if later else ""),
        help="Later stages depend on the model's answers: estimated." if later else None,
    )
    cols[4].metric("Estimated cost", cost, help=cost_help)
    places = engine.gold_places(prompts)
    if places:
        text = "; ".join(
            f"gold page {g.page} starts at token {g.start:,} of prompt {g.prompt + 1}"
            + ("" if g.distance is None else f", {engine.n_tokens(g.distance)} from the nearest instruction")
            for g in places[:4]
        )
        st.caption(text + ("…" if len(places) > 4 else ""))


# ---------------------------------------------------------------- page


def text_source(state: State, c_in) -> tuple | None:
    """A document of the user's own (or a sample): (base recipe, id, question, answers), or None."""
    with c_in:
        text, name, questions = document_input(state)
        if state.source == "Task set":
            return None
        spec = pagination_input(state)
    if not text.strip():
        c_in.info("Choose a sample, paste text or upload a file to see its prompt map.")
        return None
    try:
        doc = engine.document(text, spec, name)
    except ValueError as e:
        c_in.error(render.short(e))
        return None
    doc_id = hashlib.sha256(f"{spec}\n{name}\n{text}".encode()).hexdigest()[:16]
    text_id = hashlib.sha256(f"{name}\n{text}".encode()).hexdigest()[:16]  # the same text paginated otherwise
    if state.source in OWN_TEXT and state.doc_seen != text_id:  # a new document of one's own: Baseline
        if state.doc_seen:
            state.strategy = "baseline"
        state.doc_seen = text_id
    with c_in:
        st.markdown("#### 2 · " + ("Question and answer" if questions else "Where is the answer?"))
        question, answers = question_input(state, questions)
        gold = gold_input(state, text, spec, name, answers, len(doc.pages))
    return Recipe.of_text(text, spec, name, gold), doc_id, question, answers


def task_source(state: State, c_in) -> tuple | None:
    """A task of a bundled task set, built as a sweep builds it."""
    with c_in:
        base, task = moving.task_set_input(state)
        if base is None:
            return None
        st.markdown("#### 2 · Question")
        st.html(render.labelled("Question:", task.question))
        st.html(render.labelled("Gold answer(s):", " · ".join(task.answers)))
    doc_id = hashlib.sha256(repr(base).encode()).hexdigest()[:16]
    return base, doc_id, task.question.strip(), tuple(task.answers)


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
        on_change=_new_source,
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
        running.run_section(
            state, doc, question, answers, strategy, dict(params), inputs, input_tokens=usage[1]
        )
        moving.mini_curve_section(state, recipe, question, answers, strategy, dict(params), inputs[1:])
    prompt_section(state, inputs, doc, prompts, map_slot)


with render.guard("the Playground"):
    main()
