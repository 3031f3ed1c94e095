"""Curves of the likelihood measure (answer_logprob, components/run/measure.py) by answer position.

The statistics are the curve-shape ones (components.report.shape, components.core.evidence), the same
for accuracy and for the likelihood: only questions scored at every position count (a paired
comparison; shape.question_matrix), each position's mean gets a 95% percentile bootstrap interval
over questions (evidence.bootstrap_means: questions resampled with their positions together), and
the shape is shape.curve_shape (position-bias index = mean of the first and last positions minus the
middle one, its bootstrap interval, the paired edges-vs-middle test, Friedman across positions, the
label only when the interval excludes zero). `table_lines` is the README table of the shipped run
(tests/test_shipped_runs.py checks that the README matches the store).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from components.core import evidence
from components.core.metrics import LIKELIHOOD
from components.report import shape as shapes
from components.report.analysis import is_error

COLUMN = LIKELIHOOD.column
LABEL = LIKELIHOOD.label
UNIT = "nats"


def paired(df: pd.DataFrame, x: str = "gold_index") -> pd.DataFrame:
    """question x position table of answer_logprob: trials without an error and with a value, only the
    questions that have every position."""
    ok = df[~is_error(df) & pd.to_numeric(df[COLUMN], errors="coerce").notna()]
    return shapes.question_matrix(ok.assign(**{COLUMN: pd.to_numeric(ok[COLUMN])}), x, COLUMN)[0]


def points(matrix: pd.DataFrame, x: str = "gold_index") -> pd.DataFrame:
    """THE likelihood curve: one row per position (column of `matrix`, questions x positions, every cell
    filled), named `x`: mean, low, high (95% percentile bootstrap over questions, a question's positions
    resampled together; NaN for fewer than two questions), n. charts.likelihood_curve draws it."""
    cols = list(matrix.columns)
    values = matrix.to_numpy(dtype=float)
    bands = evidence.bootstrap_means(values, np.eye(len(cols))) if cols else []
    means = values.mean(axis=0) if len(values) else [float("nan")] * len(cols)
    rows = [
        {x: shapes.plain_number(float(c)), "mean": float(m), "low": lo, "high": hi, "n": int(len(values))}
        for c, m, (lo, hi) in zip(cols, means, bands, strict=True)
    ]
    return pd.DataFrame(rows, columns=[x, "mean", "low", "high", "n"])


def curve(df: pd.DataFrame, x: str = "gold_index") -> pd.DataFrame:
    """One row per position: mean, low, high (bootstrap over questions), n."""
    return points(paired(df, x), x)


def shape_of(matrix: pd.DataFrame, x: str = "gold_index", left_out: int = 0) -> shapes.CurveShape:
    """shape.curve_shape of a questions x positions matrix of log-probabilities (in nats)."""
    return shapes.curve_shape(matrix, left_out=left_out, x_name=x, binary=False, unit=UNIT)


@dataclass(frozen=True)
class Shape:
    mean: float  # the position-bias index, nats: mean of the first and last positions minus the middle
    low: float
    high: float
    positive: int  # questions with a positive index
    n: int
    stats: shapes.CurveShape  # the whole answer (label, tests, sentence)


def edges_minus_middle(df: pd.DataFrame, x: str = "gold_index") -> Shape:
    s = shape_of(paired(df, x), x)
    if s.index is None:
        return Shape(float("nan"), float("nan"), float("nan"), 0, s.questions, s)
    return Shape(s.index, s.index_ci[0], s.index_ci[1], s.positive, s.questions, s)


def table_lines(df: pd.DataFrame, x: str = "gold_index") -> list[str]:
    """The markdown table sample_docs/runs/README.md shows for a likelihood run (and the test compares):
    mean nats (95% bootstrap interval) and n per position, then the shape in one sentence."""
    c = curve(df, x)
    shape = edges_minus_middle(df, x)
    head = "| gold index | " + " | ".join(str(int(v)) for v in c[x]) + " |"
    rule = "|---|" + "---|" * len(c)
    mean = (
        "| mean answer_logprob (95% interval) | "
        + " | ".join(f"{r['mean']:.2f} ({r['low']:.2f} to {r['high']:.2f})" for _, r in c.iterrows())
        + " |"
    )
    n = "| questions | " + " | ".join(str(int(v)) for v in c["n"]) + " |"
    edge = (
        f"Position-bias index (per question, the mean of the first and last positions minus the middle one): "
        f"{shape.mean:.2f} nats, 95% bootstrap interval {shape.low:.2f} to {shape.high:.2f}, positive for "
        f"{shape.positive} of {shape.n} questions. {shape.stats.sentence}"
    )
    return [head, rule, mean, n, "", edge]


def lines(
    trials: pd.DataFrame, series: pd.Series, x: str, size: str | None = None
) -> tuple[pd.DataFrame, list[dict]]:
    """The likelihood chart's table in charts.accuracy_lines' columns (series, `x`, n, mean, lo, hi, errors:
    one row per line and position,
    over the questions scored at every position of the line, the band a bootstrap over them) and each
    line's shape (shape.by_series). A line holding several sizes is split by size."""
    found = shapes.by_series(
        trials,
        trials[COLUMN] if COLUMN in trials else pd.Series(float("nan"), index=trials.index),
        series,
        x,
        size,
        unit=UNIT,
    )
    rows = []
    for f in found:
        for r in points(f["matrix"], x).itertuples(index=False):
            rows.append(
                {
                    "series": f["name"],
                    x: getattr(r, x),
                    "n": r.n,
                    "mean": r.mean,
                    "lo": r.low,
                    "hi": r.high,
                    "errors": 0,
                }
            )
    return pd.DataFrame(rows, columns=["series", x, "n", "mean", "lo", "hi", "errors"]), found
