"""The Lesson's steps (components/report/lesson.py) and its charts from published numbers and from the
engine's own estimates (components/report/lessonfigs.py), each built once per server process (every
student of a class sees the same ones; figures.once gives each a copy of its own)."""

from __future__ import annotations

from components.report import lessonfigs
from components.report.lesson import STEPS, step
from webapp.services.figures import once
from webapp.services.published import rows

__all__ = [
    "STEPS",
    "chunking",
    "litm_curves",
    "rr_positions",
    "step",
    "strategy_costs",
    "why_curves",
]


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


def why_curves():
    """(figure, attention curve, accuracy curve): the shipped attention run beside the shipped accuracy U
    (services.shipped.attention_and_accuracy). Built on each call, not once: the attention run may still
    be growing, and its curves are read again when its store changes."""
    from webapp.services.shipped import attention_and_accuracy

    att, acc = attention_and_accuracy()
    fig = lessonfigs.attention_beside_accuracy(
        att.points if att is not None else None, acc.points if acc is not None else None
    )
    return fig, att, acc
