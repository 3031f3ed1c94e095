"""The Lesson's steps (components/report/lesson.py) and its charts from published numbers and from the
engine's own estimates (components/report/lessonfigs.py)."""

from __future__ import annotations

from components.report import lessonfigs
from components.report.lesson import STEPS, step
from webapp.services.published import rows

__all__ = ["STEPS", "chunking", "litm_curves", "rr_positions", "step", "strategy_costs"]


def litm_curves(n_documents: int = 20):
    return lessonfigs.litm_curves(rows(), n_documents)


def rr_positions():
    return lessonfigs.rr_positions(rows())


def chunking():
    return lessonfigs.chunking(rows())


def strategy_costs(table: list[dict]):
    return lessonfigs.strategy_costs(table)
