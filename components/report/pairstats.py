"""The paired statistics of two arms' matched questions (report.compare's pairs): the 2x2 table, the
difference of accuracies, its 95% interval and p-value. 0/1 values: Newcombe's interval (1998, method 10)
and the exact McNemar test (scipy); a question's samples pooled: the cluster-robust interval of the mean
difference (statsmodels) and the sign-flip test of the differences. Each checked in tests/test_compare.py
and tests/test_compare_samples.py against numbers worked by hand."""

from __future__ import annotations

import math

import pandas as pd
from scipy.stats import binomtest

from components.core import evidence, stats


def newcombe_paired_ci(
    both: int, a_only: int, b_only: int, neither: int, confidence: float = 0.95
) -> tuple[float, float]:
    """Newcombe (1998) method 10: interval for p_a - p_b from a paired 2x2 table
    (both correct, only A correct, only B correct, neither)."""
    n = both + a_only + b_only + neither
    if n == 0:
        return (math.nan, math.nan)
    pa, pb = (both + a_only) / n, (both + b_only) / n
    la, ua = stats.proportion_ci(both + a_only, n, confidence)
    lb, ub = stats.proportion_ci(both + b_only, n, confidence)
    margins = (both + a_only) * (b_only + neither) * (both + b_only) * (a_only + neither)
    phi = 0.0
    if margins > 0:
        cross = both * neither - a_only * b_only
        if cross > n / 2:
            phi = (cross - n / 2) / math.sqrt(margins)
        elif cross < 0:
            phi = cross / math.sqrt(margins)
    d = pa - pb
    lower = d - math.sqrt(max(0.0, (pa - la) ** 2 - 2 * phi * (pa - la) * (ub - pb) + (ub - pb) ** 2))
    upper = d + math.sqrt(max(0.0, (pb - lb) ** 2 - 2 * phi * (pb - lb) * (ua - pa) + (ua - pa) ** 2))
    return max(-1.0, lower), min(1.0, upper)


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Exact McNemar p-value: two-sided binomial test of the discordant pairs at 1/2 (1.0 when none)."""
    m = int(a_only) + int(b_only)
    return 1.0 if m == 0 else float(binomtest(int(a_only), m, 0.5).pvalue)


def pair_stats(ok_a: pd.Series, ok_b: pd.Series) -> dict:
    """The paired statistics of matched questions' values (0/1, or a question's mean over its samples):
    the 2x2 table (with pooled samples its expected counts: both = sum of a*b, ...), diff = mean(a - b),
    its 95% interval and p-value. 0/1 values: Newcombe's interval and the exact McNemar test; pooled
    samples: the cluster-robust interval of the mean difference (core.stats.clustered_mean_ci, one
    cluster per question) and the sign-flip test of the differences (core.evidence; on 0/1 differences
    it is McNemar's conditional test)."""
    a, b = ok_a.astype(float).to_numpy(), ok_b.astype(float).to_numpy()
    n = len(a)
    ab, a_not_b, b_not_a = float((a * b).sum()), float((a * (1 - b)).sum()), float(((1 - a) * b).sum())
    cells = (ab, a_not_b, b_not_a, float(n) - ab - a_not_b - b_not_a)
    binary = bool(((a == 0) | (a == 1)).all() and ((b == 0) | (b == 1)).all())
    if binary:
        both, only_a, only_b, neither = (int(round(c)) for c in cells)
        lo, hi = newcombe_paired_ci(both, only_a, only_b, neither)
        p = mcnemar_exact(only_a, only_b) if n else math.nan
        return {
            "cells": (both, only_a, only_b, neither),
            "diff": (only_a - only_b) / n if n else math.nan,
            "ci": (lo, hi),
            "p_value": p,
            "pooled": False,
        }
    d = a - b
    _, _, lo, hi = stats.clustered_mean_ci(d, range(n))
    return {
        "cells": cells,
        "diff": float(d.mean()),
        "ci": (max(-1.0, lo), min(1.0, hi)),
        "p_value": evidence.sign_flip_test(d),
        "pooled": True,
    }


POOLED_CI = "cluster-robust interval of the mean paired difference of questions (statsmodels)"
POOLED_TEST = "sign-flip test of the questions' paired differences (each its samples' mean)"
