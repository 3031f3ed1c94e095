"""Compare with repeated samples (samples > 1): arms, pairs, the paired tests and the curves are over
questions, each question's value its samples' mean (core.stats.question_means), worked by hand."""

from __future__ import annotations

import pandas as pd
import pytest

from components.report import analysis, compare

# arm -> question -> its three samples' scores
SCORES = {
    "baseline": {"q1": [1, 1, 1], "q2": [1, 0, 1], "q3": [0, 0, 0]},  # means 1, 2/3, 0
    "rr": {"q1": [1, 0, 0], "q2": [0, 0, 0], "q3": [0, 0, 1]},  # means 1/3, 0, 1/3
}


def trials(samples: bool = True) -> pd.DataFrame:
    rows = []
    for strategy, by_q in SCORES.items():
        for task, scores in by_q.items():
            for i, s in enumerate(scores if samples else scores[:1]):
                rows.append(
                    {
                        "sweep": "s",
                        "task": task,
                        "strategy": strategy,
                        "params": "{}",
                        "model": "fake:m",
                        "length": 1000,
                        "position": 0.5,
                        "sample": i if samples else None,
                        "subspan_em": float(s),
                        "score": float(s),
                        "metric": "subspan-em",
                        "error": None,
                        "calls": 1,
                        "input_tokens": 100,
                        "output_tokens": 5,
                        "latency_s": 0.1,
                    }
                )
    return pd.DataFrame(rows)


def test_arms_and_pairs_pool_a_questions_samples():
    t = compare.prepare(trials())
    table = compare.arms(t).set_index("strategy")
    assert list(table["n"]) == [3, 3]  # questions, not the 9 trials each
    assert table.loc["baseline", "accuracy"] == pytest.approx(5 / 9)
    assert table.loc["baseline", "correct"] == pytest.approx(1 + 2 / 3)
    assert table.loc["rr", "accuracy"] == pytest.approx(2 / 9)
    assert table.loc["baseline", "lo"] < 5 / 9 < table.loc["baseline", "hi"]
    a, b = table.loc["baseline", "label"], table.loc["rr", "label"]
    p = compare.compare_pair(t, a, b)
    assert p.n_matched == 3 and p.left_out == 0 and p.samples_pooled
    # a, b per question: (1, 1/3), (2/3, 0), (0, 1/3): differences 2/3, 2/3, -1/3
    assert p.diff == pytest.approx(1 / 3)
    # the expected 2x2 of one sample each: both = sum a*b, only a = sum a(1 - b), ...
    assert [p.both_correct, p.only_a, p.only_b, p.neither] == pytest.approx([1 / 3, 4 / 3, 1 / 3, 1])
    # sign flips of (2/3, 2/3, -1/3): 4 of the 8 have |mean| >= 1/3
    assert p.p_value == pytest.approx(0.5)
    assert p.ci[0] < 1 / 3 < p.ci[1] and "sign-flip" in p.test
    by = compare.by_position(t, a, b)
    assert list(by["n_matched"]) == [3] and by["diff"].iloc[0] == pytest.approx(1 / 3)


def test_the_curves_count_questions_and_one_sample_keeps_mcnemar():
    t = compare.prepare(trials())
    curve = analysis.u_curve(t, "ok", series=("arm",), x="position")
    assert list(curve["n"]) == [3, 3]
    assert sorted(curve["mean"]) == pytest.approx([2 / 9, 5 / 9])
    one = compare.prepare(trials(samples=False))  # first samples: (1, 1), (1, 0), (0, 0)
    labels = sorted(one["arm"].unique())
    p = compare.compare_pair(one, *labels)
    assert not p.samples_pooled and "McNemar" in p.test and p.n_matched == 3
    assert (p.both_correct, p.only_a, p.only_b, p.neither) in ((1, 1, 0, 1), (1, 0, 1, 1))
    assert p.p_value == pytest.approx(1.0)  # one discordant pair: the exact McNemar p
