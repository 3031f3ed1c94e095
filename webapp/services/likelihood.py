"""The likelihood view for the pages: how likely a model finds the right answer (the gold answer's
log-probability, teacher-forced after the prompt; components/providers/likelihood.py) by where the
answer sits. This view is ours: none of the papers report it.

- live: which models can score (`can_score`), the estimate and the scores of one question at several
  positions (components.run.livescore), cached in the user's run store like every call;
- the band over questions: `band(matrix)` (questions x positions; core.evidence.bootstrap_means,
  a question's positions resampled together);
- the figure: `curve_figure` (one question's line, and the mean over questions with its band).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from components.core import evidence
from components.providers.likelihood import SCORING_PROVIDERS
from components.report.likelihood import COLUMN
from components.strategies import get_strategy

__all__ = ["COLUMN", "OURS", "Y_TITLE", "band", "can_score", "curve_figure", "estimate", "score_positions",
           "shape_line", "shape_of", "single_stage"]

Y_TITLE = "log-probability (nats)"  # of the right answer; closer to 0: the model finds it more likely
OURS = ("This view is ours, not the papers': none of them report the answer's log-probability.")


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

    return live_estimate(docs, question, list(answers), spec, strategy=strategy, params=params, measure_speed=False)


@dataclass(frozen=True)
class Scored:
    """One position's score as plain values (safe to keep in session state)."""

    x: object
    logprob: float | None
    mean: float | None
    tokens: int | None
    cached: bool
    error: str
    seconds: float


def score_positions(docs: dict, question: str, answers, strategy: str, params: dict, choice, *,
                    progress=None, cancel=None) -> dict:
    """{x: Scored} for the positions scored (a cancelled run: those done so far), every call cached in
    the user's run store. `progress(done, total, x, Scored | None)` is called from this thread."""
    from components.run.livescore import score_positions as live_scores
    from components.run.store import RunStore
    from webapp.services.stores import user_db

    def plain(x, trial) -> Scored:
        return Scored(x, trial.answer_logprob, trial.answer_logprob_mean, trial.answer_logprob_tokens,
                      bool(trial.calls and trial.cached_calls == trial.calls), str(trial.error or ""),
                      float(trial.latency_s or 0.0))

    def on_progress(p) -> None:
        if progress is not None:
            progress(p.done, p.total, p.position, None if p.trial is None else plain(p.position, p.trial))

    store = RunStore(user_db())
    try:
        trials = live_scores(docs, question, list(answers), choice.spec, strategy=strategy, params=params,
                             store=store, api_key=choice.api_key, progress=on_progress, cancel=cancel)
    finally:
        store.close()
    return {x: plain(x, t) for x, t in trials.items()}


# --- the band over questions --------------------------------------------------------------------

def band(matrix: pd.DataFrame) -> pd.DataFrame:
    """One row per position (column of `matrix`, questions x positions, every cell filled): mean, lo,
    hi (95% percentile bootstrap over questions, core.evidence.bootstrap_means; NaN for one question), n."""
    values = matrix.to_numpy(dtype=float)
    k = values.shape[1]
    cis = evidence.bootstrap_means(values, np.eye(k)) if len(values) else [(math.nan, math.nan)] * k
    return pd.DataFrame({"x": list(matrix.columns), "mean": values.mean(axis=0) if len(values) else [math.nan] * k,
                         "lo": [a for a, _ in cis], "hi": [b for _, b in cis], "n": len(values)})


def shape_of(matrix: pd.DataFrame) -> dict:
    """report.shape.curve_shape of a questions x positions matrix of log-probabilities."""
    from components.report.shape import curve_shape

    return curve_shape(matrix, x_name="position", binary=False)


def shape_line(s: dict, unit: str) -> str:
    """The curve's shape in one short sentence for a chart's foot (report.shape.curve_shape's numbers):
    the label or "no clear shape at this n" and the questions that would tell, the position-bias index
    (edges minus middle) and its 95% interval, n."""
    if s.get("index") is None:
        return s.get("sentence", "")
    pct = unit == "points"

    def num(v: float) -> str:
        return f"{100 * v:+.0f}" if pct else f"{v:+.2f}"

    names = {"U": "a U (lost in the middle)", "primacy": "primacy (the start is best)",
             "recency": "recency (the end is best)", "inverted U": "an inverted U (the middle is best)",
             "flat": "flat"}
    lo, hi = s["index_ci"]
    what = (f"edges minus middle {num(s['index'])} {unit} (95% interval {num(lo)} to {num(hi)}) over "
            f"{s['questions']} questions")
    if s["label"]:
        return f"Shape: {names[s['label']]}; {what}."
    need = s.get("questions_needed")
    tell = f"; about {need:,} questions would tell" if need else ""
    return f"No clear shape at this n: {what}{tell}."


# --- the figure ---------------------------------------------------------------------------------

BLUE, ORANGE = "#0072B2", "#D55E00"


def curve_figure(first: list[tuple[str, float]] | None, mean: pd.DataFrame | None, *, x_title: str, title: str,
                 labels: dict | None = None, first_name: str = "this question",
                 mean_name: str = "mean over questions", legend: bool = True,
                 categories: list[str] | None = None) -> go.Figure:
    """Answer log-probability by position: one question's line (`first`: (label, value) pairs) and/or
    the mean over questions with its 95% band (`mean`: band()'s table; `labels` maps x to its label);
    `categories`: every place on the x axis, in order (a stopped run shows the places not scored yet)."""
    fig = go.Figure()
    labels = labels or {}
    if mean is not None and not mean.empty:
        xs = [labels.get(x, str(x)) for x in mean["x"]]
        if mean["lo"].notna().all():
            fig.add_trace(go.Scatter(x=xs + xs[::-1], y=list(mean["hi"]) + list(mean["lo"])[::-1], fill="toself", mode="lines",
                                     fillcolor="rgba(213,94,0,0.15)", line=dict(width=0), hoverinfo="skip",
                                     name="95% interval", legendgroup="mean", showlegend=False))
        fig.add_trace(go.Scatter(x=xs, y=list(mean["mean"]), mode="lines+markers", name=mean_name,
                                 legendgroup="mean", line=dict(color=ORANGE, width=3), marker=dict(size=11),
                                 customdata=np.c_[mean["lo"], mean["hi"], mean["n"]],
                                 hovertemplate="%{x}: %{y:.2f} nats (95% %{customdata[0]:.2f} to "
                                               "%{customdata[1]:.2f}), n=%{customdata[2]}<extra></extra>"))
    if first:
        fig.add_trace(go.Scatter(x=[a for a, _ in first], y=[b for _, b in first], mode="lines+markers",
                                 name=first_name, legendgroup="first", line=dict(color=BLUE, width=2.5),
                                 marker=dict(size=12), hovertemplate="%{x}: %{y:.2f} nats<extra></extra>"))
    fig.update_layout(title=dict(text=title, x=0, xanchor="left"), template="plotly_white", height=320, showlegend=legend,
                      margin=dict(l=70, r=20, t=60, b=40), hovermode="closest",
                      legend=dict(orientation="h", yref="container", yanchor="bottom", y=0, xanchor="left", x=0))
    fig.update_xaxes(title_text=x_title, type="category", showline=True, linecolor="#888")
    if categories:  # every place on the axis, scored or not yet
        fig.update_xaxes(categoryorder="array", categoryarray=categories, range=[-0.5, len(categories) - 0.5])
    fig.update_yaxes(title_text=Y_TITLE, showline=True, linecolor="#888", zeroline=False)
    return fig
