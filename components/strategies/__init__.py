"""Every strategy, by its command-line name."""

from __future__ import annotations

from components.strategies.base import Outcome, Param, ParamError, Strategy
from components.strategies.rr import (
    ICR,
    RR,
    Baseline,
    ChunkedICR,
    ChunkedRR,
    Reprompt,
    RepromptAtBeginning,
    RepromptBeforeGold,
    RepromptTagsOnly,
)

_ALL: list[Strategy] = [
    Baseline(), Reprompt(), RepromptTagsOnly(), RepromptAtBeginning(), RepromptBeforeGold(),
    ICR(), RR(), ChunkedICR(), ChunkedRR(),
]
STRATEGIES: dict[str, Strategy] = {s.name: s for s in _ALL}


def get_strategy(name: str) -> Strategy:
    try:
        return STRATEGIES[name]
    except KeyError:
        raise ParamError(f"unknown strategy {name!r}; choose one of {', '.join(STRATEGIES)}") from None


__all__ = ["STRATEGIES", "Outcome", "Param", "ParamError", "Strategy", "get_strategy"]
