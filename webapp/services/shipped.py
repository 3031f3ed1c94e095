"""The shipped runs on the "Lost in the Middle" protocol (NQ-open, 20 documents, gold at 0/4/9/14/19,
the bundled model), for Home and the Lesson: the accuracy curve beside the published LITM curve
(GPT-3.5-Turbo, Table 6), and the likelihood run (ours: the right answer's log-probability), each
read-only with its n and its curve-shape statistics (report.shape). The likelihood run may still be
growing: every figure follows what its store holds now."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pandas as pd
import streamlit as st

from components.core.resources import sample_path
from components.report import shape as curve_shapes
from webapp.services import analysis, figures, published, sharing
from webapp.services.logprob import COLUMN, points, shape_of
from webapp.services.names import THIS_APP, metric_label, model_title

__all__ = [
    "ACCURACY_RUN",
    "ATTENTION_RUN",
    "LIKELIHOOD_RUN",
    "Curve",
    "Shipped",
    "accuracy_figure",
    "attention_and_accuracy",
    "likelihood_figure",
    "made",
    "sweep_key",
    "shipped_accuracy",
    "shipped_likelihood",
]

LIKELIHOOD_RUN = "local-qwen-nq-likelihood20"
ATTENTION_RUN = "local-qwen-nq-attention20"  # the attention measure on the same prompts; may still be growing
ACCURACY_RUN = "local-qwen-nq-litm20"  # n=150 per gold index
DECISION_RUN = "local-qwen-facts"  # Baseline, Reprompt and R&R on one document: what Home's Decide opens
N_DOCS = 20
PUBLISHED_MODEL = "GPT-3.5-Turbo"
X_TITLE = "gold document index (0 = first of 20)"
# Where the shipped runs were measured: the stores keep when each call was sent, not the hardware, which
# sample_docs/runs/README.md records (the bundled model with 2 threads on 2 CPU cores).
MACHINE = "2 CPU cores"


@st.cache_data(show_spinner=False, max_entries=16)
def _calls_span(name: str, version: tuple) -> tuple[float, float] | None:
    from components.run.store import RunStore

    with RunStore.for_reading(sample_path("runs", f"{name}.sqlite")) as store:
        return store.calls_span()


def sweep_key(name: str) -> str | None:
    """The key of the shipped run `name` (its store's first sweep), as a link's ?sweep= names it; None
    when that store is not there."""
    _, sweeps, _ = sharing.load_runs(in_url=False)
    if sweeps.empty or "store" not in sweeps:
        return None
    row = sweeps[sweeps["store"].astype(str) == f"shipped {name}"]
    return str(row["sweep_key"].iloc[0]) if len(row) else None


def made(*names: str) -> str:
    """Where and when shipped runs were measured, from their stores: 'on 2 CPU cores, 2026-11-25 to
    2026-11-27' (one date when they all ran on one day; the machine alone when no store says)."""
    from components.run.reader import store_version

    spans = []
    for name in names:
        path = sample_path("runs", f"{name}.sqlite")
        try:
            span = _calls_span(name, store_version(path)) if path.is_file() else None
        except Exception:  # a store that cannot be read says no date
            span = None
        if span:
            spans.append(span)
    if not spans:
        return f"on {MACHINE}"
    first, last = (
        pd.Timestamp(t, unit="s").strftime("%Y-%m-%d")
        for t in (min(a for a, _ in spans), max(b for _, b in spans))
    )
    return f"on {MACHINE}, {first}" + ("" if first == last else f" to {last}")


def ours() -> pd.DataFrame:
    """The shipped accuracy run's best-subspan EM by gold index, with n and Wilson intervals."""
    trials, _, _ = sharing.load_runs(in_url=False)
    if trials.empty or "store" not in trials:
        return pd.DataFrame()
    part = trials[trials["store"].astype(str).str.endswith(ACCURACY_RUN) & (trials["strategy"] == "litm")]
    part = part[pd.to_numeric(part["documents"], errors="coerce") == N_DOCS]
    if part.empty:
        return pd.DataFrame()
    part = part.assign(model_name=part["model"].map(model_title), source=THIS_APP)
    table = analysis.u_curve(part, "subspan_em", ("model_name", "source"), x="gold_index")
    return table.rename(columns={"gold_index": "position"})


@figures.once
def accuracy_figure(title: str = "Accuracy by where the answer sits among 20 documents"):
    """(figure, note, legend names): this app's accuracy curve and the published one, and the note that
    says whose each one is; built once per server process (the shipped run and the published table are
    the same for every visitor)."""
    table = ours()
    curves = published.index_curves({N_DOCS})
    curves = curves[curves["model"] == PUBLISHED_MODEL] if not curves.empty else curves
    fig = figures.u_curve(
        table
        if not table.empty
        else pd.DataFrame(columns=["series", "position", "n", "mean", "lo", "hi", "errors"]),
        x_title=X_TITLE,
        metric_label="accuracy",
        overlays=curves if not curves.empty else None,
        title=title,
    )
    fig.update_xaxes(tickvals=[0, 4, 9, 14, 19])
    names = {}
    for label, part in table.groupby("series", sort=False) if not table.empty else ():
        names[label] = f"{figures.esc(label)} · n={int(part['n'].min())} per point"
    for label, title_ in zip(curves.get("label", []), curves.get("title", []), strict=True):
        names[figures.esc(label)] = figures.esc(title_)
    fig.update_layout(legend=dict(orientation="h", yref="container", y=0, yanchor="bottom"))
    n = int(table["n"].min()) if not table.empty else 0
    note = (
        f"Solid: measured by {THIS_APP} with {model_title('local:qwen2.5-coder-0.5b-instruct')} (0.5B, "
        f"{made(ACCURACY_RUN)}) on {n} NQ-open questions, {metric_label('subspan_em')}, 95% intervals. Dotted: "
        f"{PUBLISHED_MODEL} as published in Lost in the Middle (Liu et al., 2023), Table 6."
    )
    return fig, note, names


@dataclass(frozen=True)
class Shipped:
    """A shipped run's curve: points (gold_index, mean, low, high, n; the band over questions: report.likelihood
    .points), the questions whole
    (asked at every position) and begun, the model, the shape statistics (report.shape.curve_shape)."""

    points: pd.DataFrame
    questions: int
    begun: int
    model: str
    shape: curve_shapes.CurveShape
    planned: int | None = None  # questions the run's config asks for
    finished: bool = True  # False: the run stopped (or is still going) before its plan

    def n_text(self) -> str:
        """'13 NQ-open questions (of 100 planned; the run is not finished)'."""
        text = f"{self.questions} NQ-open questions"
        if not self.finished:
            text += (
                f" (of {self.planned} planned; the run is not finished)"
                if self.planned
                else " (not finished)"
            )
        return text


@st.cache_data(show_spinner=False, max_entries=8)
def _shipped(name: str, column: str, version: tuple) -> Shipped | None:
    """`version` (the store file's stamp) keys the cache: a store that grows is read again."""
    from components.run.store import RunStore

    with RunStore.for_reading(sample_path("runs", f"{name}.sqlite")) as store:
        trials = store.trials_frame(name)
        sweeps = store.sweeps_frame()
    row = sweeps[sweeps["name"] == name]
    finished = bool(len(row)) and row["status"].iloc[0] == "done"
    try:
        planned = int(json.loads(row["config"].iloc[0]).get("n_tasks")) if len(row) else None
    except (TypeError, ValueError):
        planned = None
    if trials.empty or column not in trials:
        return None
    ok = trials.assign(value=pd.to_numeric(trials[column], errors="coerce"))
    ok = ok[
        ok["error"].isna() & ok["value"].notna() & (pd.to_numeric(ok["documents"], errors="coerce") == N_DOCS)
    ]
    if ok.empty:
        return None
    ok = ok.assign(gold_index=pd.to_numeric(ok["gold_index"]).astype(int))
    matrix, left_out = curve_shapes.question_matrix(ok, "gold_index")
    if matrix.empty:
        return None
    s = (
        shape_of(matrix, "gold_index", left_out)
        if column == COLUMN
        else curve_shapes.curve_shape(matrix, left_out=left_out, x_name="gold_index", binary=True)
    )
    return Shipped(
        points(matrix, "gold_index"),
        len(matrix),
        len(matrix) + left_out,
        model_title(str(trials["model"].iloc[0])),
        s,
        planned,
        finished,
    )


def _load(name: str, column: str) -> Shipped | None:
    from components.run.reader import store_version

    path = sample_path("runs", f"{name}.sqlite")
    if not path.is_file():
        return None
    try:
        return _shipped(name, column, store_version(path))
    except Exception:  # a shipped store that cannot be read: the page says it is missing
        return None


def shipped_likelihood() -> Shipped | None:
    """The shipped likelihood run: its n is what the store holds now."""
    return _load(LIKELIHOOD_RUN, COLUMN)


def shipped_accuracy() -> Shipped | None:
    """The shipped accuracy run on the same protocol (best-subspan EM, LITM's metric), with its shape."""
    return _load(ACCURACY_RUN, "subspan_em")


def likelihood_figure(
    s: Shipped, *, title: str = "How likely the model finds the right answer", legend: bool = True
):
    """The shipped likelihood run's curve: the mean over its questions with its 95% band."""
    fig = figures.likelihood_curve(
        None,
        s.points,
        x_title=X_TITLE,
        title=title,
        legend=legend,
        mean_name=f"{s.model} · {THIS_APP} · n={s.questions} questions",
        model=s.model,
    )
    return fig


@dataclass(frozen=True)
class Curve:
    """A shipped run's curve by gold index as `litm results --json --metric M` gives it (report.shape
    .curves: n per point; Wilson 95% intervals for 0/1 values, mean ± 1.96 standard errors else), with
    how far the run has got against its config."""

    points: pd.DataFrame  # gold_index, n, mean, lo, hi
    questions: int  # questions measured so far (any position)
    planned: int | None  # questions its config asks for
    model: str
    brief: str  # the curve's shape in one short sentence (report.shape.brief)

    @property
    def finished(self) -> bool:
        return self.planned is None or self.questions >= self.planned

    def n_text(self) -> str:
        """'18 questions so far (of 100 planned)', or '150 questions'."""
        text = f"{self.questions} questions"
        if not self.finished:
            text += f" so far (of {self.planned} planned)"
        return text


@st.cache_data(show_spinner=False, max_entries=8)
def _curve(name: str, column: str, version: tuple) -> Curve | None:
    """`version` (the store file's stamp) keys the cache: a store that grows is read again."""
    from components.run.store import RunStore

    with RunStore.for_reading(sample_path("runs", f"{name}.sqlite")) as store:
        trials = store.trials_frame(name)
        sweeps = store.sweeps_frame()
    if trials.empty or column not in trials:
        return None
    trials = trials[pd.to_numeric(trials["documents"], errors="coerce") == N_DOCS]
    found = [c for c in curve_shapes.curves(trials, trials[column]) if c.get("x") == "gold_index"]
    if not found:
        return None
    curve = found[0]
    row = sweeps[sweeps["name"] == name]
    try:
        planned = int(json.loads(row["config"].iloc[0]).get("n_tasks")) if len(row) else None
    except (TypeError, ValueError):
        planned = None
    measured = trials[pd.to_numeric(trials[column], errors="coerce").notna()]
    shape = curve.get("shape")
    return Curve(
        pd.DataFrame(curve["points"]),
        int(measured["task"].nunique()),
        planned,
        model_title(str(trials["model"].iloc[0])),
        curve_shapes.brief(shape) if shape is not None else "",
    )


def _load_curve(name: str, column: str) -> Curve | None:
    from components.run.reader import store_version

    path = sample_path("runs", f"{name}.sqlite")
    if not path.is_file():
        return None
    try:
        return _curve(name, column, store_version(path))
    except Exception:  # a shipped store that cannot be read: the page says it is missing
        return None


def attention_and_accuracy() -> tuple[Curve | None, Curve | None]:
    """The Lesson's "why the middle is lost": the gold document's share of the last prompt token's attention
    by its index among 20 (the shipped attention run, as far as it has got) and the accuracy U of the
    shipped 20-document run (best-subspan EM), each None when its store is not there."""
    return _load_curve(ATTENTION_RUN, "attention_gold"), _load_curve(ACCURACY_RUN, "subspan_em")
