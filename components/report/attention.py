"""The attention measure in pictures and numbers.

- The Playground's strip "where the model looks": each page's share of the last prompt token's attention
  (components/providers/attention.py), drawn along the prompt map's token axis (the same spans, the same
  x), the gold page in the map's gold colour.
- The positional bias apart from relevance, from what every attention trial stores (`bias_curves`): the
  mass of the documents that are not gold, by their position in the prompt. The paper's own probe (a fixed
  dummy document moved through every position: `litm prompt --dummy-probe`) is strategies/attention.py's.
- The curves by position the Results page draws (`position_figure`) and the sentence on a curve's shape
  (`shape_line`).
"""

from __future__ import annotations

import math

import pandas as pd
import plotly.graph_objects as go

from components.core.prompts import Prompt
from components.core.stats import clustered_mean_ci
from components.report import shape as shapes
from components.report.colours import PALETTE
from components.report.promptmap import COLORS

MEANING = (
    "Each bar is the share of the model's attention, from the last token of the prompt (the one that "
    "writes the first word of the answer), that a page gets, over all layers and heads; the rest goes to "
    "the instructions and the question. Higher at the start and the end than in the middle, whatever the "
    "pages hold, is the positional attention bias that Hsieh et al. 2024 tie to the lost middle."
)


BIAS_MEANING = (
    "The positional bias, relevance held out: the share of the attention that the documents which are not "
    "the gold one get, by their position in the prompt (Hsieh et al. 2024 §3-4 measure it with a fixed "
    "irrelevant document put at each position; here every distractor of every trial counts, so it is the "
    "distractors' mass, whatever each of them holds). Mean over every distractor at that position, 95% "
    "interval clustered by question, n the questions."
)
BIAS_WHAT = "Documents that are not gold"
GOLD_WHAT = "The gold document"
ARM_KEYS = ("sweep", "strategy", "params", "model", "documents")


def distractor_masses(trials: pd.DataFrame) -> pd.DataFrame:
    """One row per document that is not gold of every attention trial in a documents cell (LITM §3.1's gold
    index): the arm's keys, task, position (0-based, prompt order) and mass (its share of the last prompt
    token's attention, all layers: attention_pages). Trials with an error or no pages are left out."""
    cols = [*ARM_KEYS, "task", "position", "mass"]
    if "attention_pages" not in trials or trials.empty:
        return pd.DataFrame(columns=cols)
    t = trials[trials["attention_pages"].map(lambda v: isinstance(v, list) and len(v) > 0)]
    if "error" in t:
        t = t[t["error"].isna()]
    t = t.assign(gold_index=pd.to_numeric(t.get("gold_index"), errors="coerce")).dropna(subset=["gold_index"])
    if t.empty:
        return pd.DataFrame(columns=cols)
    t = t.assign(**{k: t[k] if k in t else None for k in ARM_KEYS})
    long = t[[*ARM_KEYS, "task", "gold_index", "attention_pages"]].assign(
        position=t["attention_pages"].map(lambda v: list(range(len(v))))
    )
    long = long.explode(["attention_pages", "position"])
    long = long[long["position"].astype(int) != long["gold_index"].astype(int)]
    return long.assign(
        position=long["position"].astype(int), mass=long["attention_pages"].astype(float)
    ).reset_index(drop=True)[cols]


def bias_points(long: pd.DataFrame) -> list[dict]:
    """Per position: the distractors' mean mass with n (questions), trials and a 95% interval clustered by
    question (core.stats.clustered_mean_ci: a question's distractors at a position are its trials', not
    independent; one question: no interval)."""
    out = []
    for k, p in long.groupby("position", sort=True):
        mean, _, lo, hi = clustered_mean_ci(p["mass"], p["task"])
        out.append(
            {
                "position": int(k),
                "n": int(p["task"].nunique()),
                "trials": int(len(p)),
                "mean": mean,
                "lo": lo,
                "hi": hi,
            }
        )
    return out


def bias_shape(long: pd.DataFrame) -> shapes.CurveShape:
    """The bias curve's shape (report.shape.curve_shape): each question's mean distractor mass at each
    position, only the questions seen at every position (a question's trials with the gold elsewhere fill
    the gold's position)."""
    wide = long.groupby(["task", "position"])["mass"].mean().unstack("position")
    wide = wide.reindex(sorted(wide.columns), axis=1)
    full = wide.dropna()
    return shapes.curve_shape(full, left_out=int(len(wide) - len(full)), x_name="position", binary=False)


def bias_curves(trials: pd.DataFrame) -> list[dict]:
    """THE estimate of the positional bias from stored attention trials, one per arm (sweep, strategy,
    params, model, documents): {arm keys, "arm", "points": bias_points, "shape": bias_shape}. Hsieh et al.
    2024 §3-4 isolate the bias as the attention a fixed irrelevant document gets at each position; a trial
    stores every page's mass, so the distractors (not gold, so relevance held out) give it at every position
    but the gold's, with no extra call. Not the paper's dummy: each distractor is a different passage (the
    probe proper: `litm prompt --dummy-probe`, strategies/attention.py). "sentence": shape_line."""
    from components.report.sweeps import arm_label

    long = distractor_masses(trials)
    out = []
    for key, g in long.groupby(list(ARM_KEYS), dropna=False, sort=True):
        meta = dict(zip(ARM_KEYS, key, strict=True))
        docs = pd.to_numeric(pd.Series([meta["documents"]]), errors="coerce").iloc[0]
        meta["documents"] = None if docs != docs else shapes.plain_number(float(docs))
        shape = bias_shape(g)
        out.append(
            {
                **meta,
                "arm": arm_label(meta),
                "points": bias_points(g),
                "shape": shape,
                "sentence": shape_line(shape, BIAS_WHAT),
            }
        )
    return out


def position_curves(trials: pd.DataFrame) -> list[dict]:
    """The attention measure by position, one record per arm of the documents cells (LITM §3.1): "gold" the
    gold document's mass at each gold index (report.shape.curves of attention_gold: n trials, a normal 95%
    interval, as `litm results --json --metric attention`), "bias" the distractors' (bias_curves), each
    shape and its sentence (shape_line)."""
    if not has_attention(trials):
        return []
    values = pd.to_numeric(trials["attention_gold"], errors="coerce")
    gold = [c for c in shapes.curves(trials, values) if c["x"] == "gold_index"]
    bias = {tuple(b[k] for k in ARM_KEYS): b for b in bias_curves(trials)}
    out = []
    for g in gold:
        b = bias.get(tuple(g[k] for k in ARM_KEYS))
        sentences = [shape_line(g["shape"], GOLD_WHAT)]
        if b is not None:
            sentences.append(b["sentence"])
        out.append(
            {
                **{k: g[k] for k in (*ARM_KEYS, "arm")},
                "gold": g["points"],
                "bias": b["points"] if b else [],
                "gold_shape": g["shape"],
                "bias_shape": b["shape"] if b else None,
                "sentences": sentences,
            }
        )
    return out


def has_attention(trials: pd.DataFrame) -> bool:
    """Whether any trial carries the attention measure (the Results page draws its curves only then)."""
    col = "attention_gold"
    return col in trials and bool(pd.to_numeric(trials[col], errors="coerce").notna().any())


def shape_line(s: shapes.CurveShape, what: str) -> str:
    """One sentence on an attention curve's shape, in % of the attention: the label when the interval of
    edges minus middle (report.shape) supports one, how much more the edges get than the middle, n."""
    m = s.means
    if s.index is None or m is None:
        return f"{what}: {s.sentence}"
    mid = "/".join(str(x) for x in s.middle)
    ratio = (m["first"] + m["last"]) / 2 / m["middle"] if m["middle"] > 0 else math.nan
    times = f", {ratio:.1f} times as much" if ratio == ratio else ""
    lo, hi = s.index_ci
    levels = (
        f"first {100 * m['first']:.1f}%, middle ({mid}) {100 * m['middle']:.1f}%, last {100 * m['last']:.1f}% "
        f"of the attention"
    )
    more = (
        f"the edges get {100 * s.index:.1f} points more than the middle{times}"
        if s.index >= 0
        else f"the middle gets {-100 * s.index:.1f} points more than the edges"
    )
    gap = (
        f"{more} (edges minus middle, 95% interval "
        f"{100 * lo:+.1f} to {100 * hi:+.1f}; {s.questions} questions)"
    )
    names = {
        "U": "U-shaped",
        "primacy": "Highest at the start",
        "recency": "Highest at the end",
        "inverted U": "Highest in the middle",
        "flat": "Flat",
    }
    head = names.get(s.label or "", "No clear shape at this n")
    return f"{what}: {head}: {gap}; {levels}."


def position_figure(gold: list[dict], bias: list[dict], x_title: str) -> go.Figure:
    """The attention by position of one arm: the gold document's mass at each gold index (points of
    report.shape.curves, n trials, normal 95% interval) and the distractors' mass at each position
    (bias_points), each with its band; y in % of the attention."""
    fig = go.Figure()
    for rows, name, colour, x in (
        (bias, "documents that are not gold (the positional bias)", PALETTE["dark blue"], "position"),
        (gold, "the gold document", COLORS["gold"], "gold_index"),
    ):
        if not rows:
            continue
        xs = [r[x] for r in rows]
        lo = [100 * r["lo"] if r["lo"] == r["lo"] else None for r in rows]
        hi = [100 * r["hi"] if r["hi"] == r["hi"] else None for r in rows]
        fig.add_trace(
            go.Scatter(
                x=xs + xs[::-1],
                y=hi + lo[::-1],
                mode="lines",
                fill="toself",
                fillcolor=colour,
                opacity=0.2,
                line={"width": 0},
                hoverinfo="skip",
                showlegend=False,
            )
        )
        n = max(r["n"] for r in rows)
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=[100 * r["mean"] for r in rows],
                mode="lines+markers",
                name=f"{name} · n up to {n}",
                line={"color": colour, "width": 3 if x == "gold_index" else 2},
                customdata=[[r["n"], 100 * r["lo"], 100 * r["hi"]] for r in rows],
                hovertemplate="%{x}: %{y:.1f}% of the attention (95% interval %{customdata[1]:.1f} to "
                "%{customdata[2]:.1f}; n %{customdata[0]})<extra></extra>",
            )
        )
    fig.update_xaxes(title_text=x_title, dtick=1 if len(bias) < 12 else 2, automargin=True)
    fig.update_yaxes(title_text="% of the attention", rangemode="tozero", automargin=True)
    fig.update_layout(
        height=380,
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
        title="Share of the attention by document position",
        plot_bgcolor="white",
        legend={"orientation": "h", "yanchor": "top", "y": -0.3, "x": 0},
        separators=".,",
    )
    return fig


def strip_rows(prompt: Prompt, masses: dict[int, float]) -> list[dict]:
    """One row per page of the prompt, in prompt order: page, gold, token span (the map's), share."""
    return [
        {
            "page": s.page,
            "gold": s.kind == "gold",
            "start": s.start_token,
            "end": s.end_token,
            "mass": masses.get(int(s.page), 0.0),
        }
        for s in prompt.spans
        if s.kind in ("page", "gold") and s.page is not None
    ]


def strip_figure(prompt: Prompt, masses: dict[int, float], other: float) -> go.Figure:
    rows = strip_rows(prompt, masses)
    fig = go.Figure(
        go.Bar(
            x=[(r["start"] + r["end"]) / 2 for r in rows],
            y=[100 * r["mass"] for r in rows],
            width=[max(r["end"] - r["start"], 1) for r in rows],
            marker_color=[COLORS["gold"] if r["gold"] else COLORS["page"] for r in rows],
            marker_line={"color": "white", "width": 1},
            customdata=[[r["page"], "gold page" if r["gold"] else "page"] for r in rows],
            hovertemplate="%{customdata[1]} %{customdata[0]}: %{y:.1f}% of the attention<extra></extra>",
            showlegend=False,
        )
    )
    fig.update_xaxes(
        title_text="token position in the prompt",
        tickformat=",d",
        range=[0, prompt.tokens],
        automargin=True,
        title_standoff=6,
    )
    fig.update_yaxes(title_text="% of attention", rangemode="tozero", automargin=True, title_standoff=6)
    title = f"Pages {100 * sum(masses.values()):.0f}% of the attention, the rest {100 * other:.0f}%"
    fig.update_layout(
        height=280,
        bargap=0,
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
        title=title,
        plot_bgcolor="white",
        separators=".,",
    )
    return fig
