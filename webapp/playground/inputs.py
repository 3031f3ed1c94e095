"""Playground's inputs: the document (a sample, pasted, uploaded or a task of a task set), its pages, the
question and its answers, and the gold page(s) the answer's words find."""

from __future__ import annotations

import hashlib

import streamlit as st

from webapp.playground import moving
from webapp.services import engine
from webapp.services.engine import Recipe
from webapp.session import State
from webapp.ui import render

OWN = "✎ my own question"


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


def new_source() -> None:
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
