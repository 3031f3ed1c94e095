"""BM25 from an inverted index gives rank_bm25's scores bit for bit, and a sweep's distractor pool comes
out of it in the same order, on the bench's pools (the tiny tasks' and NQ-open's)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bench.bench_runner import tiny_tasks  # the bench's tiny tasks, so the test scores its pools
from components.strategies.keywords import keywords
from components.tasks.distractors import Relevance
from components.tasks.importers import read_tasks
from components.tasks.sweepdocs import _candidates, shared_pool

ROOT = Path(__file__).resolve().parent.parent
NQ30 = ROOT / "sample_docs" / "tasks" / "nq-open-30docs.jsonl.gz"


@pytest.mark.parametrize("which", ["tiny", "nq"])
def test_scores_are_rank_bm25s_bit_for_bit(which):
    tasks = tiny_tasks(1500) if which == "tiny" else list(read_tasks(NQ30).tasks)[:300]
    r = Relevance(shared_pool(tasks))
    questions = [t.question for t in tasks[::5]] + ["", "the the the", "zzzz unknown words", "item item 7"]
    for q in questions:
        want = r.bm25.get_scores(keywords(q))
        got = r.scores(q)
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), q
        assert r.ranked(q) == [int(i) for i in np.argsort(-want, kind="stable")]


def test_no_passages_rank_nothing():
    assert Relevance([]).ranked("anything") == []


def test_kept_is_the_ranked_pool_without_the_excluded():
    tasks = tiny_tasks(400)
    cands = _candidates(shared_pool(tasks), [])
    for t in tasks[::37]:
        for excluded in (set(), {0, 5, 799}, set(range(0, 800, 3))):
            want = [cands.passages[i] for i in cands.ranked(t.question) if i not in excluded]
            assert cands.kept(t.question, excluded) == want
