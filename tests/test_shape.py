"""Curve shape with intervals (components.report.shape, components.core.evidence), checked against
numbers worked by hand and against the shipped 20-document run."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from components.cli import main
from components.core import evidence
from components.report import shape

ROOT = Path(__file__).resolve().parent.parent
SHIPPED20 = ROOT / "sample_docs" / "runs" / "local-qwen-nq-litm20.sqlite"


def matrix(rows, xs=(0, 4, 9, 14, 19)) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=list(xs), index=[f"q{i}" for i in range(len(rows))], dtype=float)


def test_middle_is_the_interior_position_nearest_the_centre():
    assert shape.middle_of([0, 4, 9, 14, 19]) == [9]
    assert shape.middle_of([0.0, 0.25, 0.5, 0.75, 1.0]) == [0.5]
    assert shape.middle_of([0, 1 / 3, 2 / 3, 1]) == [1 / 3, 2 / 3]  # two equally near: both, averaged
    assert shape.middle_of([0, 9]) == []


def test_sign_flip_test_by_hand():
    # 3 non-zero differences, all positive: 2 of the 8 sign patterns are as extreme -> p = 0.25 (exact)
    assert evidence.sign_flip_test(np.array([1.0, 1.0, 1.0, 0.0])) == pytest.approx(0.25)
    assert evidence.sign_flip_test(np.zeros(5)) == 1.0


def test_cochran_q_by_hand():
    v = np.array([[1, 0, 1], [1, 1, 1], [0, 0, 1], [1, 0, 0], [1, 0, 1]], dtype=float)
    k, cols, rows = 3, v.sum(axis=0), v.sum(axis=1)
    q = (k - 1) * (k * (cols**2).sum() - cols.sum() ** 2) / (k * rows.sum() - (rows**2).sum())
    got = evidence.cochran_q(v)
    assert got["test"] == "Cochran's Q" and got["df"] == 2
    assert got["statistic"] == pytest.approx(q) and got["p_value"] == pytest.approx(
        1 - __import__("scipy.stats", fromlist=["chi2"]).chi2.cdf(q, 2)
    )
    assert evidence.cochran_q(np.ones((4, 3)))["p_value"] == 1.0  # nobody answered differently anywhere
    assert evidence.cochran_q(v + 0.5)["test"] == "Friedman"  # real values


def test_questions_needed_by_hand():
    z = norm.ppf(0.975) + norm.ppf(0.8)
    assert evidence.questions_needed(0.1, 0.5) == math.ceil((z * 0.5 / 0.1) ** 2) == 197
    assert evidence.questions_needed(0.0, 0.5) is None


def test_bootstrap_keeps_a_questions_positions_together():
    # every question's own index is exactly +0.5, but the columns vary: resampling questions whole gives
    # an interval of width 0; resampling positions apart would not
    rows = [[1, 0, 0, 0, 0]] * 10 + [[0, 0, 0, 0, 1]] * 10
    s = shape.curve_shape(matrix(rows), x_name="gold_index")
    assert s.index == pytest.approx(0.5) and s.index_ci == pytest.approx([0.5, 0.5])
    assert s.primacy_ci[0] < 0.5 < s.primacy_ci[1]  # first - middle alone does vary


def test_bootstrap_interval_is_the_stated_percentile_one():
    rng = np.random.default_rng(7)
    v = (rng.random((40, 3)) < [0.7, 0.4, 0.6]).astype(float)
    combo = np.array([[0.5, -1.0, 0.5]])
    ((lo, hi),) = evidence.bootstrap_means(v, combo)
    # the same resamples drawn by hand: multinomial counts from default_rng(0), in blocks of 500
    gen = np.random.default_rng(evidence.SEED)
    stats = np.concatenate(
        [
            gen.multinomial(40, np.full(40, 1 / 40), size=min(500, 9999 - s)) @ (v @ combo[0]) / 40
            for s in range(0, 9999, 500)
        ]
    )
    assert (lo, hi) == pytest.approx(tuple(np.percentile(stats, [2.5, 97.5])))
    assert lo < (v @ combo[0]).mean() < hi


def _curve(first, mid, last, n, seed=1):
    rng = np.random.default_rng(seed)
    p = [first, (first + mid) / 2, mid, (mid + last) / 2, last]
    return matrix((rng.random((n, 5)) < p).astype(float))


@pytest.mark.parametrize(
    "probs, label",
    [
        ((0.9, 0.4, 0.9), "U"),
        ((0.9, 0.4, 0.4), "primacy"),
        ((0.4, 0.4, 0.9), "recency"),
        ((0.3, 0.8, 0.3), "inverted U"),
    ],
)
def test_shapes_are_named_when_their_interval_excludes_zero(probs, label):
    s = shape.curve_shape(_curve(*probs, n=300), x_name="gold_index")
    assert s.label == label and s.clear and s.questions_needed is None
    assert s.sentence.split(":")[0] in {
        "A U shape (lost in the middle)",
        "Primacy (the start is best)",
        "Recency (the end is best)",
        "An inverted U (the middle is best)",
    }


def test_flat_needs_every_interval_inside_the_margin():
    rows = [[1, 1, 1, 1, 1]] * 500 + [[0, 0, 0, 0, 0]] * 500  # identical at every position
    assert shape.curve_shape(matrix(rows)).label == "flat"


def test_small_n_says_no_clear_shape_and_the_questions_needed():
    s = shape.curve_shape(_curve(0.6, 0.45, 0.6, n=20), x_name="gold_index")
    assert s.label is None and s.index_ci[0] < 0 < s.index_ci[1]
    assert s.sentence.startswith("No clear shape at this n") and s.questions_needed > 20
    assert f"about {s.questions_needed:,} questions" in s.sentence


def test_an_interval_inside_5_points_asks_for_no_more_questions():
    """Index +0 with its interval inside +-5 points, recency's interval wider (so not "flat"): the
    sentence says the edges and the middle differ by less than 5 points and asks for no more questions;
    a figure not above the questions asked is never given either."""
    rows = [[1, 1, 0]] * 120 + [[0, 0, 1]] * 120 + [[1, 1, 1]] * 160  # index -0.5 / +0.5 / 0 per question
    s = shape.curve_shape(matrix(rows, xs=(0, 9, 19)))
    assert s.label is None and -0.05 < s.index_ci[0] and s.index_ci[1] < 0.05
    assert s.recency_ci[1] - s.recency_ci[0] > 0.1 and s.questions_needed is None
    assert "differ by less than 5 points" in s.sentence and "would tell" not in s.sentence
    assert "differ by less than 5 points" in shape.brief(s)
    assert shape.needed(16, 50, [-0.2, 0.2], 0.05) is None  # 16 after 50 asked: says nothing
    assert shape.needed(197, 50, [-0.2, 0.2], 0.05) == 197


def test_real_values_work_too():
    rng = np.random.default_rng(3)
    v = rng.normal([-1.0, -3.0, -1.5], 0.5, size=(60, 3))  # log-probabilities: the middle far lower
    s = shape.curve_shape(matrix(v, xs=(0, 9, 19)))
    assert not s.binary and s.label == "U" and s.across_positions["test"] == "Friedman"
    assert "points" not in s.sentence


def test_fewer_than_three_positions_is_no_test():
    s = shape.curve_shape(matrix([[1, 0]] * 5, xs=(0, 9)))
    assert s.label is None and s.index is None and "three answer positions" in s.sentence


def test_shipped_20_document_run_shows_primacy_at_n_150(capsys):
    """The shipped 20-document run (150 NQ-open questions at each gold index): at n = 50 its interval
    still held 0 ("no clear shape"); at n = 150 the start is clearly best and the edges beat the middle."""
    before = hashlib.sha256(SHIPPED20.read_bytes()).hexdigest()
    assert main(["results", "--db", str(SHIPPED20), "--json"]) == 0
    obj = json.loads(capsys.readouterr().out)
    (curve,) = obj["curves"]
    assert curve["documents"] == 20 and curve["x"] == "gold_index"
    assert [(p["gold_index"], p["n"], round(p["mean"] * 150)) for p in curve["points"]] == [
        (0, 150, 70),
        (4, 150, 51),
        (9, 150, 50),
        (14, 150, 37),
        (19, 150, 54),
    ]
    s = curve["shape"]
    assert s["questions"] == 150 and s["index"] == pytest.approx((70 + 54) / 300 - 50 / 150)
    assert 0 < s["index_ci"][0] < s["index_ci"][1] and s["label"] == "primacy"
    assert s["primacy_ci"][0] > 0 and s["recency_ci"][0] < 0 < s["recency_ci"][1]
    assert s["sentence"].startswith("Primacy (the start is best): 47% with the answer first")
    assert hashlib.sha256(SHIPPED20.read_bytes()).hexdigest() == before  # read, never written


def test_by_series_says_no_test_where_questions_are_not_paired_and_splits_sizes():
    from components.report.shape import by_series

    # every question asked at one position only: nothing is paired, so nothing is claimed
    rows = [
        {"task": f"q{i}", "position": [0.0, 0.5, 1.0][i % 3], "length": 1000, "value": float(i % 2)}
        for i in range(30)
    ]
    t = pd.DataFrame(rows)
    found = by_series(t, t["value"], pd.Series("line", index=t.index), "position", "length")
    assert len(found) == 1 and found[0]["shape"].index is None and found[0]["shape"].label is None
    assert (
        found[0]["left_out"] == 30
        and "at least two questions asked at every position" in found[0]["shape"].sentence
    )
    # the same questions at two lengths: one test per length, named by it
    paired = [
        {"task": f"q{i}", "position": p, "length": n, "value": float(p != 0.5 or i % 4 == 0)}
        for i in range(20)
        for p in (0.0, 0.5, 1.0)
        for n in (1000, 2000)
    ]
    t = pd.DataFrame(paired)
    found = by_series(t, t["value"], pd.Series("line", index=t.index), "position", "length")
    assert [f["name"] for f in found] == ["line · 1,000 tokens", "line · 2,000 tokens"]
    assert all(f["shape"].questions == 20 and f["left_out"] == 0 for f in found)


def test_curve_shape_is_a_record_whose_json_keeps_its_keys_in_order():
    """`litm results --json` prints CurveShape.to_dict(): the same keys, in the same order, as ever."""
    import dataclasses

    s = shape.curve_shape(_curve(0.6, 0.45, 0.6, n=20), x_name="gold_index")
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.label = "U"
    head = [
        "questions",
        "left_out",
        "positions",
        "x",
        "binary",
        "first",
        "middle",
        "last",
        "label",
        "clear",
        "unit",
    ]
    assert list(s.to_dict()) == head + [
        "means",
        "index",
        "index_ci",
        "positive",
        "primacy",
        "primacy_ci",
        "recency",
        "recency_ci",
        "edges_vs_middle",
        "across_positions",
        "questions_needed",
        "effect_for_power",
        "flat_margin",
        "method",
        "sentence",
    ]
    short = shape.curve_shape(matrix([[1, 0]] * 5, xs=(0, 9)))
    assert (
        list(short.to_dict()) == head + ["index", "index_ci", "sentence"] and short.to_dict()["index"] is None
    )
    assert shape.brief(s).startswith("No clear shape at this n: edges minus middle")
    assert shape.brief(short) == short.sentence
