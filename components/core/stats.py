"""Confidence intervals for accuracies: every accuracy is shown with n and an interval (DESIGN: Scores)."""

from __future__ import annotations

from scipy.stats import binomtest


def proportion_ci(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for successes out of n (scipy's binomtest). n = 0 -> (0.0, 1.0)."""
    if n < 0 or successes < 0 or successes > n:
        raise ValueError(f"need 0 <= successes <= n, got {successes} of {n}")
    if n == 0:
        return 0.0, 1.0
    ci = binomtest(int(successes), int(n)).proportion_ci(confidence_level=confidence, method="wilson")
    return float(ci.low), float(ci.high)
