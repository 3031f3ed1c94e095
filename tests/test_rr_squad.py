"""R&R's SQuAD set (R&R §4.1): a question's paragraph as its gold passage among paragraphs of OTHER
articles, sorted by relevance, enough of them for an 80k-token document; on the SQuAD v1.1 dev set."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from components.tasks.distractors import Relevance, holds_answer, rr_squad_tasks
from components.tasks.model import Passage, Task
from components.tasks.sweepdocs import build_document, count_passages

SQUAD = Path(__file__).resolve().parent.parent / "sample_docs" / "tasks" / "squad-dev-v1.1.json.gz"


def squad_tasks(path: Path) -> list[Task]:
    """The file's questions one task each, in file order, paragraph as gold passage, article and paragraph
    indices in meta (the shape the SQuAD reader gives)."""
    data = json.loads(gzip.decompress(path.read_bytes()))["data"]
    out, paragraph = [], 0
    for a, article in enumerate(data):
        for para in article["paragraphs"]:
            for qa in para["qas"]:
                answers = tuple(dict.fromkeys(x["text"] for x in qa["answers"]))
                out.append(
                    Task(
                        qa["id"],
                        qa["question"],
                        answers,
                        (Passage(para["context"], article["title"].replace("_", " "), True),),
                        meta={"article": a, "paragraph": paragraph},
                    )
                )
            paragraph += 1
    return out


def small() -> list[Task]:
    texts = {
        (0, 0): "Kestrel Bay lighthouse was built in 1820 by Ana Roth.",
        (0, 1): "The Kestrel Bay lighthouse keeper lived on the rock.",
        (1, 2): "Lighthouse lamps burned whale oil before 1860.",
        (1, 3): "Bread rises with yeast.",
        (2, 4): "Ana Roth built the Kestrel Bay lighthouse in 1820, records say.",  # holds the answer
        (2, 5): "Tides and a lighthouse keeper's log.",
    }
    qs = {
        0: ("When was the Kestrel Bay lighthouse built?", "1820"),
        1: ("Who kept the light?", "a keeper"),
        2: ("What did lamps burn?", "whale oil"),
        3: ("What makes bread rise?", "yeast"),
        4: ("Who built it?", "Ana Roth"),
        5: ("What log?", "keeper's log"),
    }
    return [
        Task(
            f"q{p}",
            qs[p][0],
            (qs[p][1],),
            (Passage(t, f"Article {a}", True),),
            meta={"article": a, "paragraph": p},
        )
        for (a, p), t in texts.items()
    ]


def test_distractors_are_other_articles_paragraphs_by_relevance():
    tasks = small()
    got = rr_squad_tasks(tasks, n=4, n_distractors=10)
    # the first paragraph of each article, then the second of each
    assert [t.id for t in got] == ["q0", "q2", "q4", "q1"]
    first = got[0]
    assert first.passages[0] == tasks[0].passages[0]
    texts = [p.text for p in first.passages[1:]]
    # not article 0's own paragraphs, not the one that holds "1820"; the rest all of them, by BM25
    pool = [Passage(t.passages[0].text, t.passages[0].title) for t in tasks]
    ranked = [pool[i].text for i in Relevance(pool).ranked(first.question)]
    assert texts == [t for t in ranked if t in {pool[2].text, pool[3].text, pool[5].text}]
    assert texts[-1] == pool[3].text  # nothing in common with the question: last
    assert not any(p.gold for p in first.passages[1:])
    with pytest.raises(ValueError, match="not a SQuAD question"):
        rr_squad_tasks([Task("x", "q?", ("a",), (Passage("t", gold=True),))])


def test_on_the_squad_dev_set():
    tasks = squad_tasks(SQUAD)
    assert len(tasks) == 10_570
    got = rr_squad_tasks(tasks, n=50)
    assert len(got) == 50 and len({t.meta["article"] for t in got}) == 48  # 48 articles, then two more
    article_of = {t.passages[0].text: t.meta["article"] for t in tasks}
    for t in got:
        distractors = t.passages[1:]
        assert len(distractors) == 600
        assert all(article_of[p.text] != t.meta["article"] for p in distractors)
        assert not any(holds_answer(p, t.answers) for p in distractors)
        assert sum(count_passages([p.text for p in t.passages])) > 80_000
    # an 80k document as a sweep builds it: the task's own distractors, within d, gold where asked
    built = build_document(got[0], 80_000, 40_000)
    assert 79_000 < built.length_tokens <= 80_000 and abs(built.actual_position - 40_000) < 1_000
