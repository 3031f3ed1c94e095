"""The multi-question design ("Context Overloading in RAG Based Systems", seed 004) for Results and Compare:
its tables and charts (components.report.multiq) and the paper's §5.3 numbers (components.report.published_004,
loaded once per server), each series named by its model and source (services/names.py)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from components.report import multiq as report_mq
from webapp.services import views
from webapp.services.names import THIS_APP, model_title

K, Q, CATEGORIES = report_mq.K, report_mq.Q, report_mq.CATEGORY_LABELS
PAPER = report_mq.PAPER
WHO = f" · {THIS_APP}"

__all__ = [
    "CATEGORIES",
    "K",
    "MAX_QUESTIONS",
    "PAPER",
    "Q",
    "STRATEGIES",
    "WHO",
    "accuracy_figure",
    "beside",
    "categories_figure",
    "chunks",
    "citation",
    "cost_figure",
    "is_multi",
    "parse_questions",
    "plan",
    "published",
    "run",
    "table",
    "trials",
]

is_multi = views.kept(report_mq.is_multi)
trials = views.kept(report_mq.trials)


@views.kept
def table(df: pd.DataFrame, metric: str = "mq_match") -> pd.DataFrame:
    """components.report.multiq.table, each model by its title and each arm by it ('mq-full · Qwen2.5 Coder 0.5B')."""
    out = report_mq.table(df, metric)
    if len(out):
        out["model"] = [model_title(m) or m for m in out["model"]]
        out["arm"] = [f"{s} · {m}" for s, m in zip(out["setting"], out["model"], strict=True)]
    return out


@st.cache_data(show_spinner=False)
def published() -> pd.DataFrame:
    """The paper's §5.3 counts, one row per (strategy, K, Q) (report.multiq.published)."""
    from components.report.published_004 import load_published_004

    return report_mq.published(load_published_004())


def citation() -> str:
    from components.report.published_004 import CITATION_004

    return CITATION_004


@views.kept
def beside(ours: pd.DataFrame, every_k: bool = False) -> pd.DataFrame:
    return report_mq.beside(ours, published(), every_k=every_k)


@views.kept
def accuracy_figure(tab: pd.DataFrame, metric_label: str):
    return report_mq.accuracy_figure(tab, metric_label=metric_label, who=WHO)


@views.kept
def categories_figure(tab: pd.DataFrame, with_paper: bool = True):
    return report_mq.categories_figure(tab, published() if with_paper else None, who=WHO)


@views.kept
def cost_figure(tab: pd.DataFrame):
    return report_mq.cost_figure(tab, who=WHO)


# --- the Playground: one document, several questions -----------------------------------------------------

STRATEGIES = ("mq-full", "mq-chunked", "mq-keyword")
MAX_QUESTIONS = 200  # questions one pasted list may ask (the paper's largest run asked 157)


def parse_questions(text: str) -> tuple[list[tuple[str, tuple[str, ...]]], list[str]]:
    """([(question, gold answers)], problems) from pasted lines: one question a line, its gold answers after
    a tab or a `|` (several answers apart by `|`); blank lines skipped; a line with no question is a problem
    (one line each, numbered from 1)."""
    out, problems = [], []
    for number, line in enumerate((text or "").splitlines(), 1):
        if not line.strip():
            continue
        question, sep, rest = line.replace("\t", "|", 1).partition("|")
        question = question.strip()
        if not question:
            problems.append(f"line {number}: no question before the answers")
            continue
        answers = tuple(a.strip() for a in rest.split("|") if a.strip()) if sep else ()
        out.append((question, answers))
    if len(out) > MAX_QUESTIONS:
        problems.append(
            f"{len(out)} questions: at most {MAX_QUESTIONS} are asked at once; the rest are left out"
        )
        out = out[:MAX_QUESTIONS]
    return out, problems


def plan(doc, questions: list[str], strategy: str, params: dict):
    """The prompts the strategy sends for these questions (components.strategies.multiq: each MQPrompt has
    .prompt, .questions (indices from 0) and .chunk); ParamError for a bad parameter."""
    from components.strategies import get_strategy

    return get_strategy(strategy).plan(doc, questions, params)


def chunks(doc, chunk_tokens: int) -> list[tuple[int, int]]:
    """The document's chunks of whole pages: [(first page index, end index exclusive)]."""
    from components.strategies.multiq import context_chunks

    return context_chunks(doc, chunk_tokens)


def run(
    doc, asked: list[tuple[str, tuple[str, ...]]], strategy: str, params: dict, choice, on_call=None
) -> dict:
    """Ask the questions with the strategy's prompts, one after the other, through the model the sidebar
    chose, every call cached in the user's run store; read each answer from its `An:` line (the first that
    is not "Not specified", in chunk order) and score it (the paper's two-way match and category, where
    gold answers were given). Plain values: {"rows": [...], "calls", "input_tokens", "output_tokens",
    "cached", "responses": [(label, text)]}. Raises ProviderError (a missing key, a refused call)."""
    import asyncio

    from components.core.scoring import mq_category, mq_match
    from components.providers.base import Settings
    from components.providers.factory import make_provider
    from components.run.caller import Caller
    from components.run.store import RunStore
    from components.strategies import get_strategy
    from webapp.services.stores import user_db

    questions = [q for q, _ in asked]
    mq = get_strategy(strategy)
    prompts = mq.plan(doc, questions, params)

    async def go(store) -> list:
        provider = make_provider(choice.spec, choice.api_key)
        caller = Caller(provider, store, concurrency=1)
        try:
            done = []
            for ask in prompts:  # one after the other, as §4.4 sends them
                if on_call is not None:
                    on_call(ask.prompt, None)
                completion, _ = await caller.ask(
                    ask.prompt.messages, Settings(max_tokens=ask.prompt.max_tokens)
                )
                if on_call is not None:
                    on_call(ask.prompt, completion)
                done.append(completion)
            return done
        finally:
            if hasattr(provider, "aclose"):
                await provider.aclose()

    store = RunStore(user_db())
    try:
        completions = asyncio.run(go(store))
    finally:
        store.close()
    answered = mq.combine(prompts, [c.text for c in completions], len(questions))
    rows = []
    for i, ((question, answers), got) in enumerate(zip(asked, answered, strict=True), 1):
        chunk = prompts[got.prompt].chunk if got.prompt is not None else None
        rows.append(
            {
                "Q": i,
                "question": question,
                "answer": got.answer or "(no answer line)",
                "from chunk": chunk,
                "gold": " | ".join(answers),
                "two-way match": None if not answers else bool(mq_match(got.answer, answers)),
                "category": None if not answers else mq_category(got.answer, answers),
            }
        )
    return {
        "rows": rows,
        "calls": len(completions),
        "cached": sum(bool(c.cached) for c in completions),
        "input_tokens": sum(c.input_tokens for c in completions),
        "output_tokens": sum(c.output_tokens for c in completions),
        "responses": [(a.prompt.label, c.text) for a, c in zip(prompts, completions, strict=True)],
    }
