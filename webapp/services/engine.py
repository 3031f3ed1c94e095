"""Engine calls the pages repeat on every rerun, cached on hashable inputs.

The cache is shared by all sessions, so its keys are only document text and settings (never a key,
never a session's results). A Prompt is identified by (recipe, strategy, params, question), `params`
being a sorted tuple of (name, value) pairs and the recipe a tuple that says how the document is built.
"""

from __future__ import annotations

import streamlit as st

from components.core.documents import Document, find_pages, paginate
from components.core.prompts import Prompt
from components.core.tokens import DEFAULT_ENCODING
from components.report import promptmap
from components.run.estimate import estimate_trial
from components.strategies import get_strategy
from webapp.ui import render

Params = tuple[tuple[str, int], ...]


@st.cache_data(max_entries=8, show_spinner="Splitting the document into pages…")
def document(text: str, spec: str, name: str) -> Document:
    return paginate(text, spec, name=name)


@st.cache_data(max_entries=32, show_spinner=False)
def gold_pages(text: str, spec: str, name: str, answers: tuple[str, ...]) -> list[int]:
    doc = document(text, spec, name)
    found: set[int] = set()
    for answer in answers:
        found.update(find_pages(doc, answer))
    return sorted(found)


# A recipe says how the Playground's document is built; a plain tuple, so it is a cache key:
#   ("text", text, spec, name, gold, move): a document of the user's own (or a sample), its gold
#       page(s) `gold`; move None keeps the pages as written, else the gold page(s) go to `move`
#       (<= 1 a fraction of the document's tokens) as a sweep moves them (components.run.moving).
#   ("task", path, index, length, position, documents, gold_index): task `index` of a task file,
#       built exactly as a sweep builds that cell (R&R §4.1 tokens, or LITM §3.1 documents).
Recipe = tuple


@st.cache_data(max_entries=8, show_spinner=False)
def task_set(path: str) -> list:
    from components.tasks.importers import read_tasks

    return read_tasks(path).tasks


@st.cache_data(max_entries=32, show_spinner=False)
def built(recipe: Recipe) -> Document:
    """The document of a recipe, gold pages marked; raises ValueError (e.g. too few passages)."""
    from components.run import moving

    if recipe[0] == "text":
        _, text, spec, name, gold, move = recipe
        doc = document(text, spec, name).with_gold(gold)
        return doc if move is None else moving.move_gold(doc, move).document
    _, path, index, length, position, documents, gold_index = recipe
    tasks = task_set(path)
    return moving.cell_document(tasks[index], tasks, encoding=DEFAULT_ENCODING, length=length,
                                position=position, documents=documents, gold_index=gold_index).document


@st.cache_data(max_entries=32, show_spinner=False)
def prompts(recipe: Recipe, strategy: str, params: Params, question: str) -> list[Prompt]:
    """The prompts a strategy builds before any call; raises ParamError (not cached)."""
    doc = built(recipe)
    s = get_strategy(strategy)
    checked = s.check(doc, question, dict(params))
    return s.first_prompts(doc, question, checked)


@st.cache_data(max_entries=32, show_spinner=False)
def figure(recipe: Recipe, strategy: str, params: Params, question: str):
    return promptmap.figure(prompts(recipe, strategy, params, question), built(recipe))


@st.cache_data(max_entries=32, show_spinner=False)
def prompt_view(recipe: Recipe, strategy: str, params: Params, question: str, index: int) -> str:
    return render.prompt_html(prompts(recipe, strategy, params, question)[index])


@st.cache_data(max_entries=32, show_spinner=False)
def usage(recipe: Recipe, strategy: str, params: Params, question: str) -> tuple[int, int, int]:
    """(calls, input tokens, output tokens) of one run; later stages estimated (components.run.estimate)."""
    doc = built(recipe)
    checked = get_strategy(strategy).check(doc, question, dict(params))
    return estimate_trial(doc, question, strategy, checked)
