"""Statistics for deciding, beside core.stats (whose proportion_ci stays the one Wilson interval):
a bootstrap over questions, a paired sign-flip test, Cochran's Q, the questions a paired test needs,
and Holm's correction. Inputs are per-question values, 0/1 (accuracy) or real (a log-probability);
all from numpy, scipy and statsmodels, with fixed seeds so every run prints the same numbers.

- bootstrap_means: percentile interval of statistics of column means, resampling whole QUESTIONS
  (rows) with replacement, so a question's positions stay together (Efron & Tibshirani 1993, ch. 13).
  numpy's default_rng(SEED), RESAMPLES resamples, drawn as multinomial counts in blocks (memory flat).
- sign_flip_test: two-sided paired permutation test of mean(d) = 0, flipping the sign of each
  question's difference (scipy.stats.permutation_test, permutation_type="samples"): exact when there
  are at most RESAMPLES sign patterns, else Monte Carlo with the same seed. Chosen over McNemar because
  "edges against middle" is a per-question average of two edges minus the middle (values -1, -1/2, 0,
  1/2, 1 for accuracy), not a binary pair, and because the same test serves a real-valued measure.
- cochran_q: Cochran's Q across k positions for 0/1 values (statsmodels); Friedman's test for real ones.
- questions_needed: n = ((z_{1-a/2} + z_{power}) * sd / effect)^2, the normal approximation for a paired
  mean difference (Chow, Shao & Wang 2008, §3.1), sd the spread of per-question differences seen.
- holm: statsmodels' multipletests(method="holm").
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

SEED = 0  # numpy default_rng seed of every resampling here
RESAMPLES = 9999
CONFIDENCE = 0.95
ALPHA = 0.05
POWER = 0.8
_BLOCK = 500  # resamples drawn at once (a block of counts is _BLOCK x questions integers)


def bootstrap_means(
    values: np.ndarray,
    combos: np.ndarray,
    *,
    confidence: float = CONFIDENCE,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> list[tuple[float, float]]:
    """Percentile intervals of `combos @ column means` for each row of `combos`, resampling rows
    (questions) of `values` (questions x positions). One set of resamples serves every combination."""
    values = np.asarray(values, dtype=float)
    combos = np.atleast_2d(np.asarray(combos, dtype=float))
    n = values.shape[0]
    if n < 2:
        return [(math.nan, math.nan)] * len(combos)
    per_question = values @ combos.T  # questions x statistics: each statistic is linear in the means
    rng = np.random.default_rng(seed)
    out = np.empty((resamples, len(combos)))
    for start in range(0, resamples, _BLOCK):
        size = min(_BLOCK, resamples - start)
        counts = rng.multinomial(n, np.full(n, 1.0 / n), size=size)
        out[start : start + size] = counts @ per_question / n
    tail = (1 - confidence) / 2 * 100
    lo, hi = np.percentile(out, [tail, 100 - tail], axis=0)
    return [(float(a), float(b)) for a, b in zip(lo, hi, strict=True)]


def sign_flip_test(differences: np.ndarray, *, resamples: int = RESAMPLES, seed: int = SEED) -> float:
    """Two-sided p-value of mean(differences) = 0 by flipping signs within questions (1.0 if all zero)."""
    from scipy.stats import permutation_test

    d = np.asarray(differences, dtype=float)
    if len(d) == 0 or not np.any(d != 0):
        return 1.0
    res = permutation_test(
        (d,),
        np.mean,
        permutation_type="samples",
        alternative="two-sided",
        n_resamples=resamples,
        rng=np.random.default_rng(seed),
    )
    return float(min(1.0, res.pvalue))


def cochran_q(values: np.ndarray) -> dict:
    """Equal means across positions (columns), questions as blocks: Cochran's Q for 0/1 values,
    Friedman's chi-squared for real ones. {"test", "statistic", "df", "p_value"}."""
    v = np.asarray(values, dtype=float)
    k = v.shape[1] if v.ndim == 2 else 0
    binary = bool(np.isin(v, (0.0, 1.0)).all())
    name = "Cochran's Q" if binary else "Friedman"
    if v.ndim != 2 or v.shape[0] < 2 or k < 2:
        return {"test": name, "statistic": math.nan, "df": max(k - 1, 0), "p_value": math.nan}
    if binary:
        if (v == v[:, :1]).all():  # no question answered differently anywhere: nothing to test
            return {"test": name, "statistic": 0.0, "df": k - 1, "p_value": 1.0}
        from statsmodels.stats.contingency_tables import cochrans_q

        res = cochrans_q(v)
        return {
            "test": name,
            "statistic": float(res.statistic),
            "df": int(res.df),
            "p_value": float(res.pvalue),
        }
    from scipy.stats import friedmanchisquare

    if k < 3:
        return {"test": name, "statistic": math.nan, "df": k - 1, "p_value": math.nan}
    res = friedmanchisquare(*v.T)
    return {"test": name, "statistic": float(res.statistic), "df": k - 1, "p_value": float(res.pvalue)}


def questions_needed(effect: float, sd: float, *, power: float = POWER, alpha: float = ALPHA) -> int | None:
    """Questions a paired test needs to tell a mean difference `effect` from zero with `power` at
    two-sided `alpha`, per-question differences spread `sd`. None when effect or sd is not positive."""
    from scipy.stats import norm

    if not (effect and sd) or not math.isfinite(effect) or not math.isfinite(sd) or effect == 0 or sd <= 0:
        return None
    z = norm.ppf(1 - alpha / 2) + norm.ppf(power)
    return int(math.ceil((z * sd / abs(effect)) ** 2))


def holm(p_values: list[float], alpha: float = ALPHA) -> list[float]:
    """Holm-adjusted p-values (statsmodels multipletests, method="holm"); NaN stays NaN."""
    return list(_holm(tuple(float(p) for p in p_values), float(alpha)))


@lru_cache(maxsize=4096)
def _holm(p_values: tuple[float, ...], alpha: float) -> tuple[float, ...]:
    """Kept per p-values: every visitor of Compare adjusts the same pairs."""
    from statsmodels.stats.multitest import multipletests

    p = np.asarray(p_values, dtype=float)
    out = np.full(len(p), math.nan)
    ok = ~np.isnan(p)
    if ok.any():
        out[ok] = multipletests(p[ok], alpha=alpha, method="holm")[1]
    return tuple(float(x) for x in out)
