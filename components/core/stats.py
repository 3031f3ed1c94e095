"""Confidence intervals for accuracies: every accuracy is shown with n and an interval (DESIGN: Scores)."""

from __future__ import annotations

import math
from functools import lru_cache

from scipy.stats import binomtest

NO_INTERVAL = (math.nan, math.nan)  # `empty` for a chart: a group without trials draws no band


def proportion_ci(
    successes: float, n: int, confidence: float = 0.95, *, empty: tuple[float, float] = (0.0, 1.0)
) -> tuple[float, float]:
    """Wilson score interval for successes out of n (scipy's binomtest); the one interval of every
    accuracy (Results, Compare, `litm score`). `successes` may be a float sum of 0/1 scores.
    n = 0 -> `empty`: (0.0, 1.0), nothing is known; NO_INTERVAL where nothing should be drawn."""
    k = int(round(successes))
    if n < 0 or k < 0 or k > n:
        raise ValueError(f"need 0 <= successes <= n, got {successes} of {n}")
    if n == 0:
        return empty
    return _wilson(k, int(n), float(confidence))


@lru_cache(maxsize=65_536)
def _wilson(k: int, n: int, confidence: float) -> tuple[float, float]:
    """Kept per (k, n, confidence): every page of every visitor asks for the same few hundred cells, and
    scipy's binomtest takes about 2 ms each."""
    ci = binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
    return float(ci.low), float(ci.high)


def clustered_mean_ci(values, clusters, confidence: float = 0.95) -> tuple[float, float, float, float]:
    """(mean, standard error, low, high) of values that come in clusters (the samples of one question):
    the mean over every value with a cluster-robust standard error (statsmodels OLS on a constant,
    cov_type "cluster", its small-sample correction), so n is the number of clusters, never of values.
    The interval is normal, cut to [0, 1] for a share. One cluster: no interval (NaN)."""
    import numpy as np
    import statsmodels.api as sm
    from scipy.stats import norm

    y = np.asarray(values, dtype=float)
    groups = np.unique(np.asarray(clusters, dtype=str), return_inverse=True)[1]
    mean = float(y.mean()) if len(y) else math.nan
    if len(set(groups.tolist())) < 2:
        return mean, math.nan, math.nan, math.nan
    fit = sm.OLS(y, np.ones((len(y), 1))).fit(cov_type="cluster", cov_kwds={"groups": groups})
    se = float(fit.bse[0])
    half = float(norm.ppf(0.5 + confidence / 2)) * se
    low, high = mean - half, mean + half
    if ((y == 0) | (y == 1)).all():
        low, high = max(0.0, low), min(1.0, high)
    return mean, se, low, high


def sampled(trials) -> bool:
    """Trials of a sweep that takes repeated samples (samples > 1: each trial has its sample index)."""
    import pandas as pd

    return "sample" in trials.columns and bool(pd.to_numeric(trials["sample"], errors="coerce").notna().any())


def question_means(trials, keys: list[str], value: str = "value"):
    """THE pooling of repeated samples: each question's (`keys`: the task and its cell) mean `value`
    over its samples, the one value a question has in every curve, shape test and paired test."""
    return trials.groupby(keys, sort=True)[value].mean()


def pooled_stats(values, questions) -> dict:
    """n (questions), successes (the sum of the questions' means), mean (over every sample), lo, hi (its
    interval clustered by question, clustered_mean_ci) of repeated samples' values."""
    import pandas as pd

    v = pd.to_numeric(values, errors="coerce")
    keep = v.notna()
    v, q = v[keep].astype(float), questions[keep]
    if v.empty:
        return {"n": 0, "successes": 0.0, "mean": math.nan, "lo": math.nan, "hi": math.nan, "se": math.nan}
    mean, se, lo, hi = clustered_mean_ci(v, q)
    means = v.groupby(q.astype(str).to_numpy()).mean()
    return {"n": int(len(means)), "successes": float(means.sum()), "mean": mean, "lo": lo, "hi": hi, "se": se}


def question_of(trials):
    """A trial's question as repeated samples share it: its task and its cell."""
    import pandas as pd

    from components.core.cells import Cell

    cols = [c for c in ("task", *Cell.columns) if c in trials.columns]
    rows = zip(*(trials[c].to_numpy(dtype=object) for c in cols), strict=True) if cols else ()
    return pd.Series(["|".join(map(str, r)) for r in rows] if cols else "", index=trials.index, dtype=object)
