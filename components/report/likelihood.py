"""Curves of the likelihood measure (answer_logprob, components/run/measure.py) by gold position.

`curve` gives the mean log-probability of the gold answer at each position with a 95% bootstrap
interval over questions (a question's positions stay together: questions are resampled, not trials);
`edges_minus_middle` gives, per question, the mean at the first and last positions minus the mean at
the positions between them (positive: a U), its mean over questions with a bootstrap interval, and how
many questions are positive. Only questions scored at every position count (a paired comparison).
A plain, documented stand-in until the curve-shape statistics (position-bias index) land; the
README's likelihood table is computed with these functions (tests/test_shipped_runs.py checks it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

COLUMN = "answer_logprob"
LABEL = "how likely the model finds the right answer (log-probability, nats)"
CONFIDENCE = 0.95
RESAMPLES = 10_000
SEED = 0


def paired(df: pd.DataFrame, x: str = "gold_index") -> pd.DataFrame:
    """question x position table of answer_logprob: trials without an error and with a value, only the
    questions that have every position."""
    ok = df[df["error"].isna() & pd.to_numeric(df[COLUMN], errors="coerce").notna()]
    table = ok.pivot_table(index="task", columns=x, values=COLUMN, aggfunc="mean")
    return table.dropna()


def bootstrap_mean(values: np.ndarray) -> tuple[float, float]:
    """95% percentile bootstrap interval of the mean (scipy.stats.bootstrap, fixed seed)."""
    from scipy.stats import bootstrap

    if len(values) < 2:
        return float("nan"), float("nan")
    res = bootstrap((np.asarray(values, dtype=float),), np.mean, confidence_level=CONFIDENCE,
                    n_resamples=RESAMPLES, method="percentile", random_state=np.random.default_rng(SEED))
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def curve(df: pd.DataFrame, x: str = "gold_index") -> pd.DataFrame:
    """One row per position: mean, low, high (bootstrap over questions), n."""
    table = paired(df, x)
    rows = []
    for pos in table.columns:
        values = table[pos].to_numpy()
        low, high = bootstrap_mean(values)
        rows.append({x: pos, "mean": float(values.mean()) if len(values) else float("nan"), "low": low,
                     "high": high, "n": len(values)})
    return pd.DataFrame(rows, columns=[x, "mean", "low", "high", "n"])


@dataclass(frozen=True)
class Shape:
    mean: float  # edges minus middle, nats, mean over questions
    low: float
    high: float
    positive: int  # questions with a positive value
    n: int


def edges_minus_middle(df: pd.DataFrame, x: str = "gold_index") -> Shape:
    table = paired(df, x)
    cols = sorted(table.columns)
    if len(cols) < 3 or table.empty:
        return Shape(float("nan"), float("nan"), float("nan"), 0, len(table))
    per_question = (table[[cols[0], cols[-1]]].mean(axis=1) - table[cols[1:-1]].mean(axis=1)).to_numpy()
    low, high = bootstrap_mean(per_question)
    return Shape(float(per_question.mean()), low, high, int((per_question > 0).sum()), len(per_question))


def table_lines(df: pd.DataFrame, x: str = "gold_index") -> list[str]:
    """The markdown table sample_docs/runs/README.md shows for a likelihood run (and the test compares):
    mean nats (95% bootstrap interval) and n per position, then edges minus middle."""
    c = curve(df, x)
    shape = edges_minus_middle(df, x)
    head = "| gold index | " + " | ".join(str(int(v)) for v in c[x]) + " |"
    rule = "|---|" + "---|" * len(c)
    mean = "| mean answer_logprob (95% interval) | " + " | ".join(
        f"{r['mean']:.2f} ({r['low']:.2f} to {r['high']:.2f})" for _, r in c.iterrows()) + " |"
    n = "| questions | " + " | ".join(str(int(v)) for v in c["n"]) + " |"
    edge = (f"Edges minus middle (mean at the first and last positions less the mean between them, per "
            f"question): {shape.mean:.2f} nats, 95% bootstrap interval {shape.low:.2f} to {shape.high:.2f}, "
            f"positive for {shape.positive} of {shape.n} questions.")
    return [head, rule, mean, n, "", edge]
