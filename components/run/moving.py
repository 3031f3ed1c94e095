"""Move the answer: the document a sweep would build with the gold page at another place, for one
task or for a document of the user's own, and the few positions a "mini U-curve" visits.

Every document here comes from the sweep builders (components.tasks.sweepdocs through
components.run.plan.trial_document), so the Playground shows exactly the prompt a sweep sends:
R&R §4.1 (the gold page at the page boundary nearest x tokens, distractors in their given order)
and "Lost in the Middle" §3.1 (N documents, the gold one at 0-based index i).
"""

from __future__ import annotations

from components.core.documents import Document
from components.tasks.model import Passage, Task

FIVE_POSITIONS = (0.0, 0.25, 0.5, 0.75, 1.0)  # start, quarter, middle, three quarters, end


def cell_document(task: Task, tasks: list | None, *, encoding: str, length: int | None = None,
                  position: float | None = None, documents: int | None = None, gold_index: int | None = None):
    """The Built document a sweep makes for this task and cell (components.run.plan.trial_document);
    `tasks` is the whole task set (the distractor pool when the task has too few passages)."""
    from components.run.plan import TrialSpec, trial_document

    spec = TrialSpec(0, "", task, length, position, "", {}, None, documents, gold_index)
    return trial_document(spec, encoding, tasks)


def as_task(doc: Document, question: str = "", answers: tuple[str, ...] = ()) -> Task:
    """A document of the user's own as a task: its pages in order, its gold pages marked."""
    gold = set(doc.gold)
    passages = tuple(Passage(p.text, p.title, p.number in gold) for p in doc.pages)
    return Task(doc.name or "document", question, tuple(answers), passages)


def move_gold(doc: Document, position: float):
    """The user's document with its gold page(s) moved to `position` (<= 1: a fraction of the
    document's tokens, > 1: tokens), the other pages kept in order: sweepdocs.build_document with
    the document's own length, so every page stays (R&R §4.1). Raises ValueError without a gold page."""
    from components.tasks.sweepdocs import build_document

    if not doc.gold:
        raise ValueError("mark a gold page first: there is no answer to move")
    return build_document(as_task(doc), doc.tokens, position, encoding=doc.encoding)


def spread_indices(n_documents: int, k: int = 5) -> list[int]:
    """k gold indices from the first to the last of N documents, evenly spread and rounded down,
    without repeats: for 20 documents 0, 4, 9, 14, 19, the indices LITM Table 5 / Fig. 5 report."""
    if n_documents < 1:
        return []
    if n_documents == 1 or k <= 1:
        return [0]
    return sorted({int(i * (n_documents - 1) / (k - 1)) for i in range(k)})


def first_pages(retrieved, k: int | None = None) -> bool:
    """True when the retrieved pages are exactly pages 1, 2, ..., m in that order (m >= 2; m == k
    when k is given): what a weak model answers to ICR stage 1 whatever the question, so such a
    "hit" says nothing about retrieval and is counted apart."""
    pages = list(retrieved or ())
    if len(pages) < 2 or (k is not None and len(pages) != k):
        return False
    return pages == list(range(1, len(pages) + 1))
