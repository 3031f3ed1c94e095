"""Engine calls the pages repeat on every rerun, cached on hashable inputs.

The cache is shared by all sessions, so its keys are only document text and settings (never a key,
never a session's results). A Prompt is identified by (text, spec, name, gold, strategy, params,
question), `params` being a sorted tuple of (name, value) pairs.
"""

from __future__ import annotations

import streamlit as st

from components.core.documents import Document, find_pages, paginate
from components.core.prompts import Prompt
from components.report import promptmap
from components.run.estimate import estimate_trial
from components.strategies import get_strategy
from webapp import render

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


@st.cache_data(max_entries=32, show_spinner=False)
def prompts(text: str, spec: str, name: str, gold: tuple[int, ...], strategy: str, params: Params,
            question: str) -> list[Prompt]:
    """The prompts a strategy builds before any call; raises ParamError (not cached)."""
    doc = document(text, spec, name).with_gold(gold)
    s = get_strategy(strategy)
    checked = s.check(doc, question, dict(params))
    return s.first_prompts(doc, question, checked)


@st.cache_data(max_entries=32, show_spinner=False)
def figure(text: str, spec: str, name: str, gold: tuple[int, ...], strategy: str, params: Params,
           question: str):
    doc = document(text, spec, name).with_gold(gold)
    return promptmap.figure(prompts(text, spec, name, gold, strategy, params, question), doc)


@st.cache_data(max_entries=32, show_spinner=False)
def prompt_view(text: str, spec: str, name: str, gold: tuple[int, ...], strategy: str, params: Params,
                question: str, index: int) -> str:
    return render.prompt_html(prompts(text, spec, name, gold, strategy, params, question)[index])


@st.cache_data(max_entries=32, show_spinner=False)
def usage(text: str, spec: str, name: str, gold: tuple[int, ...], strategy: str, params: Params,
          question: str) -> tuple[int, int, int]:
    """(calls, input tokens, output tokens) of one run; later stages estimated (components.run.estimate)."""
    doc = document(text, spec, name).with_gold(gold)
    checked = get_strategy(strategy).check(doc, question, dict(params))
    return estimate_trial(doc, question, strategy, checked)
