"""Is this curve a U? The shape of accuracy (or any per-question value) against answer position, with
intervals, for every curve of a run: Results, Compare and `litm results --json` read it.

A curve is one arm (strategy x parameters x model) of one sweep at one size (documents, or length in
tokens), over its answer positions (gold index, or position). A QUESTION is a task; the statistics use
the questions answered (scored) at every position of the curve, so each one is its own control.

- Position-bias index = mean of the two edges (first and last position) minus the MIDDLE position (the
  interior position nearest the centre of the range; two equally near are averaged). Chosen over "minus
  the lowest interior point" because the middle is fixed before looking at the data: the lowest of
  several noisy points is lower than its true value, so that index would read a flat curve as a U.
  Positive: the middle is worse than the edges (lost in the middle). Also reported: first - middle
  (primacy) and last - middle (recency).
- Intervals: 95% percentile bootstrap over questions (core.evidence.bootstrap_means: 9,999 resamples,
  numpy default_rng(0)); a question's positions are resampled together.
- Edges against middle: paired sign-flip permutation test of the per-question index
  (core.evidence.sign_flip_test). Across all positions: Cochran's Q (0/1) or Friedman (real values).
- Shape, named only when an interval excludes zero: "U" (the index > 0 and neither edge alone explains
  it), "primacy" (first > middle, last not), "recency" (last > middle, first not), "inverted U" (the
  middle above an edge, no edge above the middle); "flat" when every interval lies inside +-FLAT_MARGIN
  (5 points; accuracy only). Otherwise: "no clear shape at this n", with the questions that would tell
  an index as large as the one seen (at least MIN_EFFECT, 5 points, for accuracy) from zero with power
  0.8 at two-sided alpha 0.05 (core.evidence.questions_needed, the spread of differences seen here);
  never a figure not above the questions asked, and none when the index's interval already lies inside
  +-5 points (then the sentence says that instead).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace

import numpy as np
import pandas as pd

from components.core import evidence
from components.core.cells import Cell
from components.core.stats import pooled_stats, question_means, question_of, sampled  # noqa: F401

FLAT_MARGIN = 0.05  # accuracy: "flat" when the edges and the middle are within 5 points (95% intervals)
MIN_EFFECT = 0.05  # accuracy: the smallest index the "questions needed" figure is computed for
FALLBACK_SD = 0.5  # accuracy: spread of per-question indices assumed when none is seen (all equal)
NO_SHAPE = "no clear shape at this n"
METHOD = {
    "index": "mean of the first and last positions minus the middle position (nearest the centre; "
    "two equally near are averaged)",
    "interval": f"{int(evidence.CONFIDENCE * 100)}% percentile bootstrap over questions, {evidence.RESAMPLES} "
    f"resamples, numpy default_rng({evidence.SEED})",
    "edges_vs_middle": "paired sign-flip permutation test of the per-question index (scipy permutation_test)",
    "across_positions": "Cochran's Q for 0/1 values (statsmodels), Friedman for real values (scipy)",
    "questions_needed": "n = ((z_0.975 + z_0.8) * sd / index)^2 with the spread of per-question indices seen",
}


def middle_of(xs: list[float]) -> list[float]:
    """The interior position(s) nearest the centre of [first, last]; [] with fewer than three."""
    if len(xs) < 3:
        return []
    centre = (xs[0] + xs[-1]) / 2
    inner = xs[1:-1]
    best = min(abs(x - centre) for x in inner)
    return [x for x in inner if math.isclose(abs(x - centre), best, rel_tol=1e-9, abs_tol=1e-12)]


def question_matrix(trials: pd.DataFrame, x: str, value: str = "value") -> tuple[pd.DataFrame, int]:
    """(questions x positions of `value`, questions left out): one row per task answered at every
    position (a repeat keeps the last; repeated samples, a "sample" column, are pooled: their mean), and
    how many tasks were answered at some positions only."""
    t = trials.dropna(subset=[value])
    if sampled(t):
        wide = question_means(t, ["task", x], value).unstack(x)
    else:
        wide = t.drop_duplicates(["task", x], keep="last").pivot(index="task", columns=x, values=value)
    wide = wide.reindex(sorted(wide.columns), axis=1)
    full = wide.dropna()
    return full, int(len(wide) - len(full))


def sampled_point(p: pd.DataFrame, x: str, xv) -> dict:
    """A point of repeated samples: n is the number of questions; the mean pools every sample, its interval
    clustered by question (core.stats.clustered_mean_ci); the spread across samples: each sample's mean
    and the mean over questions of the standard deviation of a question's samples."""
    vals = p.dropna(subset=["value"])
    stats = pooled_stats(vals["value"], vals["task"])
    by_q = vals.groupby("task")["value"]
    return {
        x: plain_number(xv),
        **{k: stats[k] for k in ("n", "mean", "lo", "hi", "se")},
        "trials": int(len(vals)),
        "samples": int(by_q.size().max()) if len(vals) else 0,
        "sample_means": [float(v) for v in vals.groupby("sample")["value"].mean()],
        "within_sd": float(by_q.std(ddof=1).mean()) if len(vals) else math.nan,
    }


def _unit(unit: str) -> str:
    return f" {unit}" if unit else ""


def _pts(v: float, percent: bool, unit: str = "") -> str:
    return f"{100 * v:+.0f} points" if percent else f"{v:+.2f}{_unit(unit)}"


def _level(v: float, percent: bool, unit: str = "") -> str:
    return f"{100 * v:.0f}%" if percent else f"{v:.2f}{_unit(unit)}"


def _ci(ci: tuple[float, float], percent: bool) -> str:
    a, b = ci
    return f"{100 * a:+.0f} to {100 * b:+.0f}" if percent else f"{a:+.2f} to {b:+.2f}"


def _p(p: float) -> str:
    return "p < 0.001" if p < 0.001 else f"p = {p:.2g}" if p < 0.1 else f"p = {p:.2f}"


def label_of(index_ci, primacy_ci, recency_ci, margin: float | None) -> str | None:
    """The shape the intervals support (None: no clear shape); see the module docstring."""
    up_first, up_last = primacy_ci[0] > 0, recency_ci[0] > 0
    if index_ci[0] > 0:
        if up_first and not up_last:
            return "primacy"
        if up_last and not up_first:
            return "recency"
        return "U"
    if up_first and not up_last:
        return "primacy"
    if up_last and not up_first:
        return "recency"
    if up_first and up_last:
        return "U"
    if index_ci[1] < 0 or primacy_ci[1] < 0 or recency_ci[1] < 0:
        return "inverted U"
    if margin is not None and all(
        -margin < lo and hi < margin for lo, hi in (index_ci, primacy_ci, recency_ci)
    ):
        return "flat"
    return None


@dataclass(frozen=True)
class CurveShape:
    """The shape statistics of one curve (curve_shape; the module docstring). Without a test (fewer than
    three positions or two questions) `index` is None and only the first block and `sentence` are set."""

    questions: int  # asked at every position: the statistics' n
    left_out: int  # asked at some positions only
    positions: int
    x: str  # the position column: "position" or "gold_index"
    binary: bool  # 0/1 values (accuracy, in points) or real ones (in `unit`)
    first: float | int | None
    middle: list
    last: float | int | None
    label: str | None  # "U", "primacy", "recency", "inverted U", "flat", or None: no clear shape
    clear: bool
    unit: str
    index: float | None = None  # position-bias index: mean of the edges minus the middle
    index_ci: list = field(default_factory=lambda: [None, None])
    sentence: str = ""
    means: dict | None = None  # {"first", "middle", "last"}
    positive: int = 0  # questions with a positive index
    primacy: float | None = None
    primacy_ci: list | None = None
    recency: float | None = None
    recency_ci: list | None = None
    edges_vs_middle: dict | None = None  # {"test", "p_value"}
    across_positions: dict | None = None  # core.evidence.cochran_q
    questions_needed: int | None = None
    effect_for_power: float | None = None
    flat_margin: float | None = None
    method: dict | None = None

    def to_dict(self) -> dict:
        """The JSON form `litm results --json` prints: every statistic by name; without a test, only the
        first block, the index (None) and the sentence."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        if self.index is None:
            return {k: out[k] for k in (*_HEAD, "index", "index_ci", "sentence")}
        return {
            k: out[k]
            for k in (
                *_HEAD,
                "means",
                "index",
                "index_ci",
                "positive",
                "primacy",
                "primacy_ci",
                "recency",
                "recency_ci",
                "edges_vs_middle",
                "across_positions",
                "questions_needed",
                "effect_for_power",
                "flat_margin",
                "method",
                "sentence",
            )
        }


_HEAD = (
    "questions",
    "left_out",
    "positions",
    "x",
    "binary",
    "first",
    "middle",
    "last",
    "label",
    "clear",
    "unit",
)


def curve_shape(
    matrix: pd.DataFrame,
    *,
    left_out: int = 0,
    x_name: str = "position",
    binary: bool | None = None,
    unit: str = "",
) -> CurveShape:
    """The shape statistics of one curve from its questions x positions matrix (module docstring).
    `unit` names a real value's unit in the sentence ("nats"); a 0/1 value is in points."""
    xs = [float(c) for c in matrix.columns]
    v = matrix.to_numpy(dtype=float)
    n = int(v.shape[0])
    binary = bool(np.isin(v, (0.0, 1.0)).all()) if binary is None else binary
    mids = middle_of(xs)
    head = dict(
        questions=n,
        left_out=left_out,
        positions=len(xs),
        x=x_name,
        binary=binary,
        first=plain_number(xs[0]) if xs else None,
        middle=[plain_number(m) for m in mids],
        last=plain_number(xs[-1]) if xs else None,
        unit="" if binary else unit,
    )
    if not mids or n < 2:
        why = (
            "needs at least three answer positions"
            if not mids
            else "needs at least two questions asked at every position"
        )
        return CurveShape(**head, label=None, clear=False, sentence=f"No shape test: it {why}.")
    k = len(xs)
    w_mid = np.array([1.0 / len(mids) if x in mids else 0.0 for x in xs])
    first, last = np.eye(k)[0], np.eye(k)[-1]
    combos = np.array([(first + last) / 2 - w_mid, first - w_mid, last - w_mid])
    means = v.mean(axis=0)
    index, primacy, recency = (float(c @ means) for c in combos)
    index_ci, primacy_ci, recency_ci = evidence.bootstrap_means(v, combos)
    per_question = v @ combos[0]
    margin = FLAT_MARGIN if binary else None
    label = label_of(index_ci, primacy_ci, recency_ci, margin)
    sd = float(np.std(per_question, ddof=1)) if n > 1 else math.nan
    if binary and not sd > 0:
        sd = FALLBACK_SD
    effect = max(abs(index), MIN_EFFECT) if binary else abs(index)
    shape = CurveShape(
        **head,
        label=label,
        clear=label is not None,
        means={"first": float(means[0]), "middle": float(w_mid @ means), "last": float(means[-1])},
        index=index,
        index_ci=list(index_ci),
        positive=int((per_question > 0).sum()),
        primacy=primacy,
        primacy_ci=list(primacy_ci),
        recency=recency,
        recency_ci=list(recency_ci),
        edges_vs_middle={
            "test": "paired sign-flip permutation",
            "p_value": evidence.sign_flip_test(per_question),
        },
        across_positions=evidence.cochran_q(v),
        questions_needed=None
        if label
        else needed(evidence.questions_needed(effect, sd), n, index_ci, margin),
        effect_for_power=None if label else effect,
        flat_margin=margin,
        method=METHOD,
    )
    return replace(shape, sentence=sentence(shape))


def within(ci, margin: float | None) -> bool:
    """The interval lies inside +-margin (accuracy): it already rules out an effect that large."""
    return margin is not None and None not in ci[:2] and -margin < ci[0] and ci[1] < margin


def needed(n_needed: int, n: int, index_ci, margin: float | None) -> int | None:
    """The questions that would tell, or None when asking for them says nothing: the index's interval
    already lies inside +-margin (an effect of `margin` or more is ruled out), or the figure is not more
    than the questions already asked."""
    if within(index_ci, margin) or n_needed <= n:
        return None
    return n_needed


def _tell(s: CurveShape, short: bool = False) -> str:
    """The clause after "no clear shape": the questions that would tell, or why none are asked for."""
    if s.index_ci is not None and within(s.index_ci, s.flat_margin):
        return (
            f"; the edges and the middle differ by less than {100 * s.flat_margin:.0f} points (the "
            "interval lies inside that)"
        )
    need = s.questions_needed
    if not need:
        return ""
    if short:
        return f"; about {need:,} questions would tell"
    return (
        f"; about {need:,} questions would tell an index of "
        f"{_pts(s.effect_for_power, s.binary, s.unit).lstrip('+')} from zero (power 0.8, alpha 0.05)"
    )


def plain_number(x: float):
    """A position as it reads: 4, not 4.0; 0.25 stays 0.25."""
    return int(x) if float(x).is_integer() else float(x)


def sentence(s: CurveShape) -> str:
    """One plain sentence for the page under the chart."""
    pct, unit = s.binary, s.unit
    m = s.means
    where = "gold index" if s.x == "gold_index" else "position"
    mid = "/".join(str(x) for x in s.middle)
    levels = (
        f"{_level(m['first'], pct, unit)} with the answer first ({where} {s.first}), "
        f"{_level(m['middle'], pct, unit)} in the middle ({mid}), {_level(m['last'], pct, unit)} last "
        f"({s.last}) over {s.questions} questions"
    )
    index = (
        f"edges minus middle {_pts(s.index, pct, unit)} (95% interval {_ci(s.index_ci, pct)}; "
        f"edges vs middle {_p(s.edges_vs_middle['p_value'])}"
    )
    q = s.across_positions
    if q["p_value"] == q["p_value"]:
        index += f", {q['test']} across {s.positions} positions {_p(q['p_value'])}"
    index += ")"
    label = s.label
    if label is None:
        return f"No clear shape at this n: {levels}; {index}{_tell(s)}."
    names = {
        "U": "A U shape (lost in the middle)",
        "primacy": "Primacy (the start is best)",
        "recency": "Recency (the end is best)",
        "inverted U": "An inverted U (the middle is best)",
        "flat": "Flat (edges and middle within 5 points)",
    }
    side = {"primacy": ("first", "primacy"), "recency": ("last", "recency")}.get(label)
    if side:  # the label rests on that edge's own interval: say it
        index += (
            f"; {side[0]} minus middle {_pts(getattr(s, side[1]), pct, unit)} (95% interval "
            f"{_ci(getattr(s, side[1] + '_ci'), pct)})"
        )
    return f"{names[label]}: {levels}; {index}."


SHORT_NAMES = {
    "U": "a U (lost in the middle)",
    "primacy": "primacy (the start is best)",
    "recency": "recency (the end is best)",
    "inverted U": "an inverted U (the middle is best)",
    "flat": "flat",
}


def brief(s: CurveShape) -> str:
    """The shape in one short sentence for a chart's foot: the label or "no clear shape at this n" and the
    questions that would tell, the position-bias index (edges minus middle) and its 95% interval, n. A 0/1
    value is in points, a real one in its unit."""
    if s.index is None:
        return s.sentence
    pct = s.binary
    what = (
        f"edges minus middle {_pts(s.index, pct, s.unit)} (95% interval {_ci(s.index_ci, pct)}) over "
        f"{s.questions} questions"
    )
    if s.label:
        return f"Shape: {SHORT_NAMES[s.label]}; {what}."
    return f"No clear shape at this n: {what}{_tell(s, short=True)}."


def curves(trials: pd.DataFrame, values: pd.Series) -> list[dict]:
    """Every curve of `trials` (a run store frame) with its points and shape. `values` holds each
    trial's value (NaN: not scored), e.g. analysis.primary_values. Sorted by sweep, arm and size."""
    from components.core.stats import proportion_ci
    from components.report.analysis import is_error
    from components.report.sweeps import arm_label

    t = trials.assign(value=pd.to_numeric(values, errors="coerce").where(~is_error(trials)))
    for c in ("sweep", "strategy", "params", "model", *Cell.columns, "task"):
        if c not in t.columns:
            t[c] = None
    by_index = (
        pd.to_numeric(t["documents"], errors="coerce").notna()
        & pd.to_numeric(t["gold_index"], errors="coerce").notna()
    )
    out = []
    for is_index, part in t.groupby(by_index, sort=False):
        x, size = ("gold_index", "documents") if is_index else ("position", "length")
        part = part.assign(
            **{x: pd.to_numeric(part[x], errors="coerce"), size: pd.to_numeric(part[size], errors="coerce")}
        )
        keys = ["sweep", "strategy", "params", "model", size]
        for key, g in part.groupby(keys, dropna=False, sort=True):
            g = g.dropna(subset=[x])
            if g.empty or g["value"].notna().sum() == 0:
                continue
            meta = dict(zip(keys, key, strict=True))
            binary = bool(g["value"].dropna().isin([0.0, 1.0]).all())
            pooled = sampled(g)
            points = []
            for xv, p in g.groupby(x, sort=True):
                if pooled:
                    points.append(sampled_point(p, x, xv))
                    continue
                vals = p["value"].dropna()
                nn = int(len(vals))
                mean = float(vals.mean()) if nn else math.nan
                if binary and nn:
                    lo, hi = proportion_ci(int(vals.sum()), nn)
                elif nn > 1:
                    half = 1.96 * float(vals.std(ddof=1)) / math.sqrt(nn)
                    lo, hi = mean - half, mean + half
                else:
                    lo = hi = math.nan
                points.append({x: plain_number(xv), "n": nn, "mean": mean, "lo": lo, "hi": hi})
            matrix, left = question_matrix(g, x)
            size_value = meta[size]
            out.append(
                {
                    "sweep": meta["sweep"],
                    "arm": arm_label(meta),
                    "strategy": meta["strategy"],
                    "params": meta["params"],
                    "model": meta["model"],
                    "x": x,
                    size: None if size_value != size_value else plain_number(size_value),
                    "points": points,
                    # pooled samples are each question's share (its tests then Friedman's, not Cochran's)
                    "shape": curve_shape(matrix, left_out=left, x_name=x, binary=binary),
                }
            )
    return out


def by_series(
    trials: pd.DataFrame,
    values: pd.Series,
    series: pd.Series,
    x: str,
    size: str | None = None,
    *,
    unit: str = "",
) -> list[dict]:
    """The shape of every line a chart draws: `trials` grouped by `series` (each trial's line label) and,
    where a line holds several sizes (`size`: "length" or "documents"), by size too, since one position
    at two lengths is two places. Each: {"series", "name" (the series, with its size when the line is split),
    "size" (None when the line has one), "sizes" (how many
    the line holds), "matrix" (questions x positions), "left_out", "shape"}. Failed trials and trials
    without a value are left out; questions not asked at every position of their line are counted apart."""
    from components.report.analysis import is_error

    t = trials.assign(value=pd.to_numeric(values, errors="coerce").where(~is_error(trials)), series_=series)
    t = t.assign(**{x: pd.to_numeric(t[x], errors="coerce")}).dropna(subset=[x, "value"])
    if size and size in t:
        t = t.assign(size_=pd.to_numeric(t[size], errors="coerce"))
    else:
        t = t.assign(size_=math.nan)
    out = []
    for label, line in t.groupby("series_", sort=True):
        sizes = sorted(line["size_"].dropna().unique())
        groups = [(s, line[line["size_"] == s]) for s in sizes] if len(sizes) > 1 else [(None, line)]
        for s, g in groups:
            if "task" not in g:
                continue
            matrix, left = question_matrix(g, x)
            binary = bool(g["value"].isin([0.0, 1.0]).all())
            name = (
                label
                if s is None
                else f"{label} · {plain_number(s):,} {'documents' if size == 'documents' else 'tokens'}"
            )
            out.append(
                {
                    "series": label,
                    "name": name,
                    "size": None if s is None else plain_number(s),
                    "sizes": max(1, len(sizes)),
                    "matrix": matrix,
                    "left_out": left,
                    "shape": curve_shape(matrix, left_out=left, x_name=x, binary=binary, unit=unit),
                }
            )
    return out
