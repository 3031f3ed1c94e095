"""Engine calls the Playground and the Lesson repeat on every rerun, cached on hashable inputs, and the
registries they pick from (samples, task sets, strategies).

The cache is shared by all sessions, so its keys are only document text and settings (never a key,
never a session's results). A prompt is identified by (recipe, strategy, params, question), `params`
being a sorted tuple of (name, value) pairs and the Recipe a frozen dataclass that says how the
document is built.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import streamlit as st

from components.core import positions
from components.core.cells import Cell, fraction_label
from components.core.documents import Document, find_pages, paginate
from components.core.loaders import EXTENSIONS, MAX_UPLOAD_BYTES, DocumentError, read_upload
from components.core.metrics import get_metric
from components.core.prompts import Prompt
from components.core.scoring import retrieval_recall
from components.core.tokens import DEFAULT_ENCODING
from components.report import promptmap
from components.report.promptmap import COLORS as REGION_COLOURS
from components.report.promptmap import LABELS as REGION_LABELS
from components.report.promptmap import gold_places, n_tokens
from components.run.estimate import estimate_trial
from components.strategies import STRATEGIES, ParamError, get_strategy
from components.tasks.samples import NQ_SET as NQ_SET  # re-exported: the pages reach the engine here
from components.tasks.sweepdocs import cell_document, move_gold
from webapp.services import figures, views

__all__ = [
    "EXTENSIONS",
    "MAX_UPLOAD_BYTES",
    "REGION_COLOURS",
    "REGION_LABELS",
    "STRATEGIES",
    "Document",
    "DocumentError",
    "ParamError",
    "Prompt",
    "Recipe",
    "built",
    "document",
    "figure",
    "first_pages",
    "get_metric",
    "get_strategy",
    "gold_pages",
    "gold_places",
    "n_tokens",
    "prompts",
    "read_upload",
    "retrieval_recall",
    "samples",
    "task_set",
    "task_sets",
    "usage",
    "where",
]

Params = tuple[tuple[str, int], ...]
FIVE_POSITIONS = positions.FIVE_POSITIONS


where = fraction_label  # 'start', 'middle', 'end' or '30%': a gold page's place as a fraction


@dataclass(frozen=True)
class Recipe:
    """How the Playground's (and the Lesson's) document is built; hashable, so it is a cache key.

    kind "text": a document of the user's own (or a sample) paginated by `spec`, its gold page(s)
    `gold`; `move` None keeps the pages as written, else the gold page(s) go to `move` (a fraction of
    the document's tokens) as a sweep moves them (R&R §4.1), the other pages kept in order.
    kind "task": task `index` of the task file `path`, built exactly as a sweep builds its `cell`
    (components.core.cells): about `length` tokens with the gold page at `position` (R&R §4.1), or
    `documents` documents with the gold one at 0-based `gold_index` (LITM §3.1). A text recipe's cell is
    empty (its places are fractions of the document)."""

    kind: str
    text: str = ""
    spec: str = "paragraph"
    name: str = ""
    gold: tuple[int, ...] = ()
    move: float | None = None
    path: str = ""
    index: int = 0
    cell: Cell = Cell()

    @classmethod
    def of_text(cls, text: str, spec: str, name: str, gold: tuple[int, ...] = (), move: float | None = None):
        return cls("text", text=text, spec=spec, name=name, gold=tuple(gold), move=move)

    @classmethod
    def of_task(
        cls,
        path: str,
        index: int,
        *,
        length: int | None = None,
        position: float | None = None,
        documents: int | None = None,
        gold_index: int | None = None,
    ):
        return cls(
            "task", path=str(path), index=int(index), cell=Cell(length, position, documents, gold_index)
        )

    @property
    def by_index(self) -> bool:
        """N documents, the gold one at an index (LITM §3.1)."""
        return self.cell.by_documents

    @property
    def moved(self) -> bool:
        return self.kind == "text" and self.move is not None

    def at(self, x) -> Recipe:
        """The same recipe with the gold page at x (a fraction, or a gold index for N documents)."""
        return replace(self, move=float(x)) if self.kind == "text" else replace(self, cell=self.cell.at(x))


def samples() -> list:
    from components.tasks.samples import list_samples

    return list_samples()


@st.cache_data(show_spinner=False)
def task_sets() -> dict:
    """The bundled QA task sets by name (key-value sets left out: no question to read)."""
    from components.tasks.samples import list_task_sets

    return {s.name: s for s in list_task_sets() if "kv" not in s.name}


@st.cache_data(max_entries=8, show_spinner="Splitting the document into pages…")
def document(text: str, spec: str, name: str) -> Document:
    return paginate(text, spec, name=name)


@st.cache_data(max_entries=32, show_spinner=False)
def gold_pages(text: str, spec: str, name: str, answers: tuple[str, ...]) -> list[int]:
    """The pages holding any of the gold answers word for word (components.core.documents.find_pages)."""
    doc = document(text, spec, name)
    found: set[int] = set()
    for answer in answers:
        found.update(find_pages(doc, answer))
    return sorted(found)


@st.cache_data(max_entries=8, show_spinner=False)
def task_set(path: str) -> list:
    from components.tasks.importers import read_tasks

    return read_tasks(path).tasks


@st.cache_data(max_entries=32, show_spinner=False)
def built(recipe: Recipe) -> Document:
    """The document of a recipe, gold pages marked; raises ValueError (e.g. too few passages)."""
    if recipe.kind == "text":
        doc = document(recipe.text, recipe.spec, recipe.name).with_gold(recipe.gold)
        return doc if recipe.move is None else move_gold(doc, recipe.move).document
    tasks = task_set(recipe.path)
    return cell_document(tasks[recipe.index], recipe.cell, encoding=DEFAULT_ENCODING, tasks=tasks).document


@st.cache_data(max_entries=32, show_spinner=False)
def prompts(recipe: Recipe, strategy: str, params: Params, question: str) -> list[Prompt]:
    """The prompts a strategy builds before any call; raises ParamError (not cached)."""
    doc = built(recipe)
    s = get_strategy(strategy)
    checked = s.check(doc, question, dict(params))
    return s.first_prompts(doc, question, checked)


@figures.once
def figure(recipe: Recipe, strategy: str, params: Params, question: str):
    """The prompt map of the prompts before any call; built once per server process (figures.once: each
    caller gets a copy of its own)."""
    return promptmap.figure(prompts(recipe, strategy, params, question), built(recipe))


@views.kept
def map_of(prompts_sent: list, doc: Document, retrieved=None):
    """The prompt map of prompts as sent (every stage, after a run), retrieved pages marked."""
    return promptmap.figure(prompts_sent, doc, retrieved=retrieved)


@st.cache_data(max_entries=32, show_spinner=False)
def usage(recipe: Recipe, strategy: str, params: Params, question: str) -> tuple[int, int, int]:
    """(calls, input tokens, output tokens) of one run; later stages estimated (components.run.estimate)."""
    doc = built(recipe)
    checked = get_strategy(strategy).check(doc, question, dict(params))
    return estimate_trial(doc, question, strategy, checked)


def first_pages(retrieved) -> bool:
    """Retrieval was just pages 1, 2, ..., k in order: what a weak model answers whatever the question."""
    return positions.first_pages(retrieved)
