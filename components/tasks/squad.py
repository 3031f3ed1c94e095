"""SQuAD v1.1 (Rajpurkar et al., EMNLP 2016; CC BY-SA 4.0): tasks, and the multi-question documents of
"Context Overloading in RAG Based Systems" (seed 004, §4.1).

The file (`{"data": [{"title", "paragraphs": [{"context", "qas": [{"question", "id", "answers": [{"text",
"answer_start"}]}]}]}]}`) is read as one task per question, in file order: its paragraph is its one
(gold) passage, its answers are the gold answers without repeats, and meta holds where it is (article,
paragraph: both counted from 0 over the whole file).

§4.1 builds a document from "q" questions of "k" paragraphs, taken from a map of paragraphs in the
file's order (§4.1.2): `multi_documents` takes K paragraphs in file order (across articles when one
has fewer) and the first Q questions of each in file order (all of them when a paragraph has fewer:
the paper's K = 32, Q = 5 run has 157 questions, not 160); document d of n takes paragraphs d*K to
d*K + K - 1, so the n documents of one K share none.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from components.core.documents import Document, make_document
from components.tasks.model import Passage, Task, TaskFileError, TaskSet

SQUAD_DEV = "squad-dev-v1.1.json.gz"  # sample_docs/tasks: the official dev set (sample_docs/tasks/SQUAD.md)
RR_SQUAD = "rr-squad.json"  # sample_docs/tasks: R&R's SQuAD set (R&R §4.1), built from SQUAD_DEV when read
# names a sweep config (`tasks = "rr-squad"`) or `litm prompt --task` may give for a bundled file
NAMES = {"squad-dev": SQUAD_DEV, "rr-squad": RR_SQUAD}
_SQUAD_START = re.compile(r'\s*\{\s*"(?:data|version)"\s*:')
_DERIVED_START = re.compile(r'\s*\{\s*"derived"\s*:')
DERIVED = ("rr-squad",)  # the task sets a `{"derived": ...}` file may name


def looks_like_squad(text: str) -> bool:
    """A SQuAD file: one JSON object whose first key is "data" or "version" (a task file of JSON lines
    starts with a record's own keys)."""
    return _SQUAD_START.match(text[:200]) is not None


def looks_like_derived(text: str) -> bool:
    """A task set built from a bundled file when read: one JSON object whose first key is "derived"."""
    return _DERIVED_START.match(text[:200]) is not None


def _question(qa) -> tuple[str, list[str]]:
    """A SQuAD question's text ("" when it has none) and its distinct non-blank answers."""
    if not isinstance(qa, dict):
        return "", []
    q = qa.get("question")
    found = qa.get("answers")
    texts = [x.get("text") for x in found if isinstance(x, dict)] if isinstance(found, list) else []
    answers = list(dict.fromkeys(x for x in texts if isinstance(x, str) and x.strip()))
    return (q if isinstance(q, str) and q.strip() else ""), answers


def parse_squad(stem: str, text: str) -> TaskSet:
    """Tasks from a SQuAD file's text; a question without a usable answer or text is a row error (its
    number counted over the file's questions from 1)."""
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise TaskFileError(f"{stem}: not a SQuAD file ({exc.__class__.__name__})") from None
    data = obj.get("data") if isinstance(obj, dict) else None
    if not isinstance(data, list):
        raise TaskFileError(f'{stem}: not a SQuAD file (no "data" list)')
    tasks, errors, n, paragraph = [], [], 0, 0
    for a, article in enumerate(data):
        title = str(article.get("title") or "") if isinstance(article, dict) else ""
        paragraphs = article.get("paragraphs") if isinstance(article, dict) else None
        for para in paragraphs if isinstance(paragraphs, list) else ():
            context = para.get("context") if isinstance(para, dict) else None
            qas = para.get("qas") if isinstance(para, dict) else None
            for qa in qas if isinstance(qas, list) and isinstance(context, str) else ():
                n += 1
                q, answers = _question(qa)
                if not q or not answers:
                    errors.append((n, "a question without its text or an answer"))
                    continue
                tasks.append(
                    Task(
                        str(qa.get("id") or f"{stem}-{n}"),
                        q,
                        tuple(answers),
                        (Passage(str(context), title.replace("_", " "), True),),
                        "qa",
                        meta={"source_format": "squad", "article": a, "paragraph": paragraph},
                    )
                )
            paragraph += 1
    return TaskSet(tasks, errors, format="squad")


@dataclass(frozen=True)
class MultiDocument:
    """One document of the multi-question design: K contexts and the questions asked of them."""

    index: int  # d: which of the n documents of this K (from 0)
    document: Document  # one page per context, in order (no gold pages: every context holds answers)
    tasks: tuple[Task, ...]  # the questions, context by context, in file order
    pages: tuple[int, ...]  # the page (context) number of each question, from 1


def paragraphs(tasks: list[Task]) -> list[tuple[Passage, list[Task]]]:
    """The tasks' paragraphs in file order, each with its questions in file order."""
    out: dict[int, tuple[Passage, list[Task]]] = {}
    for t in tasks:
        key = t.meta.get("paragraph")
        if key is None:
            raise ValueError(
                f"task {t.id!r} is not from a SQuAD file: the multi-question design reads "
                'SQuAD paragraphs (tasks = "squad-dev")'
            )
        out.setdefault(key, (t.passages[0], []))[1].append(t)
    return list(out.values())


def multi_documents(
    tasks: list[Task], k: int, q: int, n: int = 1, *, encoding: str = "cl100k_base"
) -> list[MultiDocument]:
    """The n documents of K contexts with (up to) Q questions each (see the module docstring); ValueError
    when the tasks hold fewer than n x K paragraphs."""
    paras = paragraphs(tasks)
    if len(paras) < n * k:
        raise ValueError(
            f"{n} document(s) of {k} contexts need {n * k:,} paragraphs; the task file has {len(paras):,}"
        )
    out = []
    for d in range(n):
        chosen = paras[d * k : (d + 1) * k]
        doc = make_document(
            [p.text for p, _ in chosen],
            titles=[p.title for p, _ in chosen],
            encoding=encoding,
            name=f"{k} contexts, document {d + 1}",
        )
        asked = [(page, t) for page, (_, ts) in enumerate(chosen, 1) for t in ts[:q]]
        out.append(MultiDocument(d, doc, tuple(t for _, t in asked), tuple(p for p, _ in asked)))
    return out
