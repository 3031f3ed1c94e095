"""How many matched trials a paired comparison needs, and what running them costs.

Pairs needed for McNemar's test to find a difference d (Connor 1987, Biometrics 43:207):
n = (z_{a/2} sqrt(psi) + z_b sqrt(psi - d^2))^2 / d^2, psi the share of discordant pairs.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Protocol

import pandas as pd
from scipy.stats import norm

ALPHA = 0.05
DEFAULT_DISCORDANCE = 0.2  # share of pairs answered differently, when none has been seen yet
DEFAULT_DIFFERENCE = 0.05  # 5 points: the difference the planner looks for unless told otherwise


class Paired(Protocol):
    """What the planner reads of a pair of arms (report.compare.Pair)."""

    @property
    def a(self) -> str: ...

    @property
    def b(self) -> str: ...

    @property
    def discordance(self) -> float | None: ...


def pairs_needed(
    difference: float, discordance: float | None = None, *, power: float = 0.8, alpha: float = ALPHA
) -> int:
    """Matched pairs McNemar's test needs to find an accuracy difference `difference` (a fraction) with
    `power` at two-sided `alpha` (Connor 1987). `discordance` is the expected share of pairs the two
    arms answer differently (at least the difference itself); DEFAULT_DISCORDANCE when unknown."""
    d = abs(float(difference))
    if not 0 < d < 1:
        raise ValueError(
            f"the difference must be between 0 and 1 (a share: 0.05 is 5 points), got {difference}"
        )
    if not 0 < power < 1 or not 0 < alpha < 1:
        raise ValueError("power and alpha must be between 0 and 1")
    psi = DEFAULT_DISCORDANCE if discordance is None or not discordance > 0 else float(discordance)
    psi = min(1.0, max(psi, d))
    za, zb = norm.ppf(1 - alpha / 2), norm.ppf(power)
    return int(math.ceil((za * math.sqrt(psi) + zb * math.sqrt(max(0.0, psi - d * d))) ** 2 / (d * d)))


@dataclass(frozen=True)
class PairsPlan:
    """The planner's answer: `pairs` matched trials (`tasks` tasks of `cells_per_task` cells) tell a
    `difference` apart with `power` at `alpha`, from the `discordance` seen in a pair (`discordance_source`
    "seen") or the default ("default"); `cost_usd` for running both arms on them (None without prices)."""

    pairs: int
    tasks: int
    cells_per_task: int
    difference: float
    power: float
    alpha: float
    discordance: float
    discordance_source: str  # "seen" | "default"
    cost_usd: float | None

    def to_dict(self) -> dict:
        """The JSON form (`litm compare --json`): every field by name."""
        return asdict(self)


def pairs_plan(
    pair: Paired | None,
    arm_table: pd.DataFrame | None = None,
    *,
    difference: float = DEFAULT_DIFFERENCE,
    power: float = 0.8,
    cells_per_task: int = 1,
) -> PairsPlan:
    """Tasks a paired comparison needs, from the discordance seen in `pair` (else the default), and what
    running both arms on them costs at the arms' cost per 1,000 questions."""
    seen = pair.discordance if pair else None
    n = pairs_needed(difference, seen, power=power)
    cells = max(1, int(cells_per_task))
    tasks = int(math.ceil(n / cells))
    usd = None
    if pair and arm_table is not None and not arm_table.empty:
        costs = arm_table.set_index("label")["cost_per_1000_usd"]
        per = [costs.get(pair.a), costs.get(pair.b)]
        if all(c is not None and not pd.isna(c) for c in per):
            usd = tasks * cells * sum(per) / 1000
    return PairsPlan(
        pairs=n,
        tasks=tasks,
        cells_per_task=cells,
        difference=difference,
        power=power,
        alpha=ALPHA,
        discordance=seen if seen else DEFAULT_DISCORDANCE,
        discordance_source="seen" if seen else "default",
        cost_usd=usd,
    )
