"""Every strategy, by its command-line name."""

from __future__ import annotations

from components.strategies.alr2 import S2A, DirectAnswer, QuotesFirst, RetrieveThenReason
from components.strategies.attention import AttentionSort, CalibratedAttention
from components.strategies.base import Outcome, Param, ParamError, Strategy
from components.strategies.keywords import Keyword
from components.strategies.litm import ClosedBook, KeyValue, LitmQA, LitmQAC, LitmQARandom, Oracle
from components.strategies.multiq import MQChunked, MQFull, MQKeyword
from components.strategies.reorder import Reorder
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
    Baseline(),
    LitmQA(),
    LitmQAC(),
    LitmQARandom(),
    ClosedBook(),
    Oracle(),
    KeyValue(),
    Reprompt(),
    RepromptTagsOnly(),
    RepromptAtBeginning(),
    RepromptBeforeGold(),
    ICR(),
    RR(),
    ChunkedICR(),
    ChunkedRR(),
    RetrieveThenReason(),
    QuotesFirst(),
    S2A(),
    Reorder(),
    Keyword(),
    DirectAnswer(),
    MQFull(),
    MQChunked(),
    MQKeyword(),
    AttentionSort(),
    CalibratedAttention(),
]
STRATEGIES: dict[str, Strategy] = {s.name: s for s in _ALL}


def get_strategy(name: str) -> Strategy:
    try:
        return STRATEGIES[name]
    except KeyError:
        raise ParamError(f"unknown strategy {name!r}; choose one of {', '.join(STRATEGIES)}") from None


__all__ = ["STRATEGIES", "Outcome", "Param", "ParamError", "Strategy", "get_strategy"]
