"""The likelihood view for the pages: how likely a model finds the right answer (the gold answer's
log-probability, teacher-forced after the prompt; components/providers/likelihood.py) by where the
answer sits. This view is ours: none of the papers report it.

- live: which models can score (`can_score`), the estimate and the scores of one question at several
  positions (components.run.livescore), cached in the user's run store like every call;
- the curve over questions and its shape are the engine's, re-exported here: `points(matrix, x)`
  (report.likelihood: mean, low, high, n per position), `shape_of(matrix, x)` and `brief(shape)`
  (report.shape: the shape in one short sentence); the figure is figures.likelihood_curve.
"""

from __future__ import annotations

from dataclasses import dataclass

from components.providers.likelihood import SCORING_PROVIDERS
from components.report.likelihood import COLUMN, points, shape_of
from components.report.shape import brief
from components.strategies import get_strategy

__all__ = [
    "COLUMN",
    "OURS",
    "brief",
    "can_score",
    "estimate",
    "points",
    "score_positions",
    "shape_of",
    "single_stage",
]

OURS = "This view is ours, not the papers': none of them report the answer's log-probability."


def can_score(spec) -> bool:
    """Whether the model can score a given answer (providers.likelihood.SCORING_PROVIDERS)."""
    return spec is not None and spec.provider in SCORING_PROVIDERS


def single_stage(strategy: str) -> bool:
    """Only a single-stage prompt can be scored (a later stage's prompt depends on a generated reply)."""
    return get_strategy(strategy).stages == 1


# --- live: one question at several positions ------------------------------------------------------


def estimate(docs: dict, question: str, answers, strategy: str, params: dict, spec):
    """components.run.livescore.estimate without loading a model: the tokens the model must evaluate
    (shared prefixes kept); the page turns them into seconds with the measured speed it already has."""
    from components.run.livescore import estimate as live_estimate

    return live_estimate(
        docs, question, list(answers), spec, strategy=strategy, params=params, measure_speed=False
    )


@dataclass(frozen=True)
class ScoredPosition:
    """One position's score as plain values (safe to keep in session state)."""

    x: object
    logprob: float | None
    mean: float | None
    tokens: int | None
    cached: bool
    error: str
    seconds: float


def score_positions(
    docs: dict, question: str, answers, strategy: str, params: dict, choice, *, progress=None, cancel=None
) -> dict:
    """{x: ScoredPosition} for the positions scored (a cancelled run: those done so far), every call cached in
    the user's run store. `progress(done, total, x, ScoredPosition | None)` is called from this thread."""
    from components.run.livescore import score_positions as live_scores
    from components.run.store import RunStore
    from webapp.services.stores import user_db

    def plain(x, trial) -> ScoredPosition:
        return ScoredPosition(
            x,
            trial.answer_logprob,
            trial.answer_logprob_mean,
            trial.answer_logprob_tokens,
            bool(trial.calls and trial.cached_calls == trial.calls),
            str(trial.error or ""),
            float(trial.latency_s or 0.0),
        )

    def on_progress(p) -> None:
        if progress is not None:
            progress(p.done, p.total, p.position, None if p.trial is None else plain(p.position, p.trial))

    store = RunStore(user_db())
    try:
        trials = live_scores(
            docs,
            question,
            list(answers),
            choice.spec,
            strategy=strategy,
            params=params,
            store=store,
            api_key=choice.api_key,
            progress=on_progress,
            cancel=cancel,
        )
    finally:
        store.close()
    return {x: plain(x, t) for x, t in trials.items()}
