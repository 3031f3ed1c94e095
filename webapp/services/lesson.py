"""The Lesson's steps (components/report/lesson.py) and its charts from published numbers and from the
engine's own estimates (components/report/lessonfigs.py), each built once per server process (every
student of a class sees the same ones; figures.once gives each a copy of its own)."""

from __future__ import annotations

from components.report import lessonfigs
from components.report.lesson import STEPS, step
from webapp.services.figures import once
from webapp.services.published import rows

__all__ = ["STEPS", "chunking", "litm_curves", "rr_positions", "step", "strategy_costs"]


@once
def litm_curves(n_documents: int = 20):
    return lessonfigs.litm_curves(rows(), n_documents)


@once
def rr_positions():
    return lessonfigs.rr_positions(rows())


@once
def chunking():
    return lessonfigs.chunking(rows())


@once
def strategy_costs(table: list[dict]):
    return lessonfigs.strategy_costs(table)
