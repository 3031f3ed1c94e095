"""The Results page's U-curve tab, on either axis: answer position (tokens or a fraction; R&R §4.1)
or the gold document's index among N documents (LITM §3.1), with the published curves overlaid and
the closed-book / oracle bounds (LITM §3, Table 1) drawn as reference lines. Every line names its
model and source ("Qwen2.5 Coder 0.5B · this app", "GPT-3.5-Turbo · LITM Table 6 (2023)"); the note
inside the chart says it again, so an exported image stands alone. Under the chart, one sentence per
line on its shape (report.shape: position-bias index with its bootstrap interval, a label only when
the interval excludes zero). Where trials carry the likelihood measure (answer_logprob), its curve:
on its own when the metric is "how likely the model finds the right answer", beside accuracy when
the selection has both (under it: side by side, neither chart's notes and legend fit half a page)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd
import streamlit as st

from webapp.results import research
from webapp.services import analysis, figures, published, shipped, views
from webapp.services.analysis import models_of
from webapp.services.names import THIS_APP, model_title
from webapp.session import State
from webapp.ui import charts, pickers
from webapp.ui.curves import has_likelihood, likelihood_chart, shape_sentences
from webapp.ui.render import upper_first

SERIES = {"strategy": ("strategy",), "model": ("model",), "strategy and model": ("strategy", "model")}
AXES = {
    x: layout.axis_title for x, layout in analysis.LAYOUTS.items()
}  # the U-curve's two axes: a cell's layouts
BOUNDS = ("closed-book", "oracle")
SHIPPED_LITM = "local-qwen-nq-litm"  # the shipped LITM-style run the page opens on
DEFAULT_PUBLISHED = "GPT-3.5-Turbo"  # LITM Tables 5-6: the published curve opened next to it

SMALL_MODEL_NOTE = (
    "**What a small model shows.** This is Qwen2.5 Coder 0.5B, measured {made} on the NQ-open questions with the "
    '"Lost in the Middle" prompt (LITM §2.1): best subspan EM against the gold document\'s index, n and a 95% '
    "interval per point. The published curves (LITM Tables 5-7) come from far larger models trained for long "
    "contexts (MPT-30B is 60 times its size, LongChat-13B 26 times; GPT-3.5-Turbo and Claude-1.3 larger "
    "still): they are more accurate everywhere, and their U (best at the first and last index, worst in the "
    "middle) is what LITM reports. Here the small model is best at the first index with 10 and with 20 "
    "documents; with 20 (150 questions per point) it dips in the middle, lowest at index 14, and comes back "
    "part of the way at the last index (tests per point in sample_docs/runs/README.md). Its closed-book and oracle lines show what it knows with no documents and with "
    "only the gold one. Our distractors are BM25-ranked passages from other questions, easier than the "
    "paper's retriever-mined ones (sample_docs/tasks/NQ-OPEN.md)."
)

LIKELIHOOD_NOTE = (
    " **The second chart** measures the same model another way: how likely it finds the right answer after "
    "the same prompt (the answer's log-probability; nothing is generated). A continuous measure tells a dip "
    "from noise with far fewer questions than right/wrong; this view is this app's, not the paper's. Its n "
    "is the questions scored at every position so far."
)


def axes_of(df: pd.DataFrame) -> list[str]:
    out = []
    for axis in AXES:
        if axis in df and pd.to_numeric(df[axis], errors="coerce").notna().any():
            out.append(axis)
    return out


def open_on_real_curve(trials: pd.DataFrame, sweeps: pd.DataFrame, asked: set[str]) -> None:
    """First visit of this session: the newest sweep of the user's store (one just run from the command
    line too); else, when the shipped LITM-style run is there, select it (and its bounds run) on the
    gold-index axis with best-subspan EM and the published GPT-3.5-Turbo curves; unless the link
    (`asked`: its query parameters) chose sweeps or the other axis."""
    state = State()
    if state.res_opened:
        return
    state.res_opened = True
    if "store" not in sweeps or state.res_u_axis == "position" and "axis" in asked:
        return
    if state.res_sweeps in (None, []) and "sweep" not in asked:
        newest = newest_own_sweep(sweeps, trials)
        if newest is not None:  # the researcher's own sweep (the app's or the command line's) before the demo
            state.res_sweeps = [newest]
            state.res_auto_sweep = newest  # followed to a newer one while the filter stays as opened
            return
    litm = sweeps[sweeps["store"].astype(str).str.contains(SHIPPED_LITM.removesuffix("-litm"), regex=False)]
    if litm.empty or state.res_sweeps not in (None, []):
        return
    state.res_sweeps = list(litm["sweep_key"])
    if "metric" not in asked:  # a link's metric (e.g. ?metric=answer_logprob) stands
        state.res_metric = "subspan_em"
    state.res_u_axis = "gold_index"
    state.res_note = True


def newest_own_sweep(sweeps: pd.DataFrame, trials: pd.DataFrame) -> str | None:
    """The newest sweep with trials in the user's store (not shipped), or None."""
    if "shipped" not in sweeps or sweeps.empty:
        return None
    own = sweeps[~sweeps["shipped"].astype(bool) & sweeps["sweep_key"].isin(set(trials["sweep_key"]))]
    if own.empty:
        return None
    return str(own.sort_values(["date", "sweep_id"], ascending=False)["sweep_key"].iloc[0])


def index_overlays(part: pd.DataFrame, where) -> pd.DataFrame | None:
    docs = set(pd.to_numeric(part["documents"], errors="coerce").dropna().astype(int))
    curves = published.index_curves(docs) if docs else published.index_curves().iloc[0:0]
    if curves.empty:
        where.caption("No published LITM curve has these numbers of documents.")
        return None
    titles = dict(zip(curves["label"], curves["title"], strict=True))
    labels = list(titles)
    default = [lab for lab in labels if f", {DEFAULT_PUBLISHED}, " in lab]
    chosen = pickers.multi(
        where,
        "Overlay published curves",
        labels,
        State.res_u_overlay_idx,
        default=default,
        placeholder="none",
        format_func=titles.get,
        help="Lost in the Middle Tables 5-7 (best subspan EM, as published), then later "
        "papers' curves of the same NQ experiment on open models, with and without "
        "their fixes (Found in the Middle Table 5, Pos2Distill Table 1); each names its "
        "model, method and paper. Drawn dotted with hollow markers; compare with the "
        "best subspan EM metric",
    )
    return curves[curves["label"].isin(chosen)] if chosen else None


def position_overlays(part: pd.DataFrame, where) -> pd.DataFrame | None:
    candidates = published.position_curves(part)
    if candidates.empty:
        where.caption("No published curve matches these trials' positions and lengths.")
        return None
    titles = dict(zip(candidates["label"], candidates["title"], strict=True))
    chosen = pickers.multi(
        where,
        "Overlay published curves",
        list(titles),
        State.res_u_overlay,
        placeholder="none",
        format_func=titles.get,
        help="R&R Tables 7-9 (GPT-4 Turbo, fuzzy match), drawn dotted with hollow markers; "
        "compare with the fuzzy match metric",
    )
    return candidates[candidates["label"].isin(chosen)] if chosen else None


def bounds_lines(fig, df: pd.DataFrame, metric: str) -> list[str]:
    """Closed-book and oracle accuracy of these trials as horizontal reference lines, each naming the
    model(s) that made it (a 0.5B model's closed-book is not GPT-3.5's)."""
    out = []
    for i, name in enumerate(BOUNDS):
        part = analysis.scored(df[df["strategy"] == name], metric)
        if part.empty:
            continue
        values = pd.to_numeric(part[metric], errors="coerce").dropna()
        lo, hi = analysis.proportion_ci(float(values.sum()), len(values), empty=analysis.NO_INTERVAL)
        mean = float(values.mean())
        who = models_of(part["model"])
        text = f"{name} ({who} · {THIS_APP}): {mean:.0%} (n={len(values)}, 95% CI {lo:.0%}-{hi:.0%})"
        figures.reference_line(fig, mean, f"{name} {mean:.0%} (n={len(values)})", dash="dash" if i else "dot")
        out.append(text)
    return out


@views.kept  # once per selection of trials, not per tab and visitor
def with_names(df: pd.DataFrame) -> pd.DataFrame:
    """Trials with the columns every series label carries: the model's name and the source."""
    return df.assign(model_name=df["model"].map(model_title), source=THIS_APP)


def series_columns(series: str, *extra: str) -> tuple[str, ...]:
    """What a line is, then whose: ('strategy', 'model_name', 'N', 'source')."""
    cols = [("model_name" if c == "model" else c) for c in SERIES[series]]
    if "model_name" not in cols:
        cols.append("model_name")
    return (*cols, *extra, "source")


def legend_names(table: pd.DataFrame, overlays: pd.DataFrame | None) -> dict[str, str]:
    """Each line's legend name: ours with n per point, the papers' as model, paper and table."""
    names = {}
    for label, part in table[table["n"] > 0].groupby("series", sort=False):
        lo, hi = int(part["n"].min()), int(part["n"].max())
        per = f"n={lo} per point" if lo == hi else f"n={lo}-{hi} per point"
        names[label] = f"{figures.esc(label)} · {per}"
    if overlays is not None and not overlays.empty:
        names.update(
            {
                figures.esc(lab): figures.esc(t)
                for lab, t in zip(overlays["label"], overlays["title"], strict=True)
            }
        )
    return names


def _names(values: pd.Series, most: int = 2) -> list[str]:
    found = sorted({str(x) for x in values.dropna() if str(x)})
    return found if len(found) <= most else [*found[:most], f"{len(found) - most} more"]


def made_on(df: pd.DataFrame) -> str:
    """The newest trial's date, '2026-11-25' ('' when the frame has none)."""
    created = pd.to_numeric(df.get("created", pd.Series(dtype=float)), errors="coerce").dropna()
    return "" if created.empty else pd.Timestamp(created.max(), unit="s").strftime("%Y-%m-%d")


def pooled_sizes(df: pd.DataFrame, size: str, by_documents: bool) -> str:
    """'' or the sentence that says a curve pools several lengths (n then counts a question once per
    length: 30 questions at 2 lengths are n = 60)."""
    sizes = sorted(
        pd.to_numeric(df.get(size, pd.Series(dtype=float)), errors="coerce").dropna().astype(int).unique()
    )
    if len(sizes) < 2 or by_documents:  # documents: one line per N already
        return ""
    return (
        f" Pooled over {len(sizes)} lengths ({', '.join(f'{v:,}' for v in sizes)} tokens): n counts a question "
        "once per length."
    )


@views.kept
def export_name(df: pd.DataFrame, axis: str, size: str) -> str:
    """The saved chart's file name: what, whose sweep, model, sizes, questions and date, e.g.
    'u-curve-gold_index-local-qwen-nq-litm20-qwen2.5-coder-0.5b-instruct-20-n50-2026-11-25'."""
    models = _names(df["model"].astype(str).str.split(":", n=1).str[-1]) if "model" in df else []
    sizes = sorted(
        pd.to_numeric(df.get(size, pd.Series(dtype=float)), errors="coerce").dropna().astype(int).unique()
    )
    n = df["task"].nunique() if "task" in df else 0
    parts = [
        "u-curve",
        axis,
        *_names(df.get("sweep", pd.Series(dtype=str))),
        *models,
        "-".join(str(v) for v in sizes[:4]),
        f"n{n}",
        made_on(df),
    ]
    return "-".join(p for p in parts if p)[:150]


@views.kept
def note_of(
    df: pd.DataFrame,
    overlays: pd.DataFrame | None,
    metric_label: str,
    size: str = "length",
    by_documents: bool = False,
) -> str:
    """The chart's note (inside the figure, so an export keeps it): whose numbers these are, from which
    sweep and when, and whether it pools lengths."""
    sets = ", ".join(sorted({str(x) for x in df.get("task_set", pd.Series(dtype=str)).dropna() if str(x)}))
    sweeps, date = ", ".join(_names(df.get("sweep", pd.Series(dtype=str)))), made_on(df)
    text = (
        f"Measured by {THIS_APP} with {models_of(df['model']) or 'a model'}"
        + (f" on {sets}" if sets else "")
        + f": {metric_label}, 95% Wilson intervals."
        + (f" Sweep {sweeps}" + (f", {date}" if date else "") + "." if sweeps else "")
        + pooled_sizes(df, size, by_documents)
    )
    if overlays is not None and not overlays.empty:
        papers = "; ".join(dict.fromkeys(overlays["title"]))
        text += f" Dotted: as published ({papers}), not measured here."
    return text


@dataclass(frozen=True)
class Sizes:
    """What the tab offers on one axis (a cell's layout): the document sizes to pick from, the published
    curves to overlay and the metric they were published in, the chart's title."""

    key: object  # the size picker's session key
    every: str  # the choice "every size"
    format: Callable
    help: str | None
    overlays: Callable  # (trials, where) -> the chosen published curves, or None
    published: str  # the metric of the published curves
    published_note: str
    title: Callable  # (metric label, the size picked) -> the chart's title


SIZES = {
    "gold_index": Sizes(
        State.res_u_docs,
        "all",
        lambda v: "every N" if v == "all" else f"{v} documents",
        None,
        index_overlays,
        "subspan_em",
        "The published curves are best-subspan EM; pick that metric to compare.",
        lambda m, _: f"{m[:1].upper()}{m[1:]} by the gold document's index",
    ),
    "position": Sizes(
        State.res_u_length,
        "all lengths",
        lambda v: v if isinstance(v, str) else f"{v:,}",
        "positions in tokens mean different places in documents of different lengths: compare one "
        "length at a time",
        position_overlays,
        "score",
        "The published curves are fuzzy match; pick the fuzzy match metric to compare.",
        lambda m, size: (
            f"{upper_first(m)} by answer position"
            + ("" if size == "all lengths" else f" (length {size:,} tokens)")
        ),
    ),
}


def size_default(layout: analysis.Layout, curve: pd.DataFrame, sizes: list) -> object:
    """The size the picker opens on: every size, or the longest when positions are in tokens (a token
    position means different places in documents of different lengths)."""
    tokens = not layout.by_documents and analysis.position_kind(curve) == "tokens" and len(sizes) > 1
    return sizes[-1] if tokens else SIZES[layout.x].every


def u_curve_tab(df: pd.DataFrame, metric: str, metric_label: str) -> None:
    """The chart, then its settings (folded, in presenter mode: the chart comes first on a projector).
    One path for both axes: the cell's layout (components.core.cells) names the columns and titles."""
    state = State()
    df = with_names(df)
    chart_slot = st.container()
    if state.present:
        controls = st.expander("Chart settings: axis, lines, published curves")
    else:
        controls = st.container()
        chart_slot = st.container()  # after the settings
    with controls:
        c0, c1, c2, c3 = st.columns([2, 2, 2, 4])
    axes = axes_of(df) or ["position"]
    axis = pickers.radio(c0, "Axis", axes, State.res_u_axis, horizontal=False, format_func=AXES.get)
    layout, choice = analysis.LAYOUTS[axis], SIZES[axis]
    size = layout.size
    series = pickers.radio(c1, "One line per", list(SERIES), State.res_u_series, horizontal=False)
    likely_only = metric == analysis.LIKELIHOOD.column
    # the attention measure is not an accuracy: results/attention draws it below, by position
    if metric == analysis.METRICS["attention"].column:
        st.caption(
            "The attention measure is drawn below, in **Where the model looks, by position**: the gold "
            "document's share and the positional bias, with their own intervals (no published accuracy "
            "curve belongs on its axis)."
        )
        return
    if likely_only:
        c3.caption(
            "The published curves are accuracy: they are drawn with an accuracy metric, not with the "
            "likelihood."
        )
    curve = df[~df["strategy"].isin(BOUNDS)]
    curve = curve[pd.to_numeric(curve[axis], errors="coerce").notna()]
    sizes = sorted(pd.to_numeric(curve[size], errors="coerce").dropna().astype(int).unique())
    pick = pickers.select(
        c2,
        layout.size_title,
        [choice.every, *sizes],
        choice.key,
        default=size_default(layout, curve, sizes),
        format_func=choice.format,
        help=choice.help,
    )
    part = curve if pick == choice.every else curve[pd.to_numeric(curve[size], errors="coerce") == pick]
    cols = series_columns(series, "N") if layout.by_documents else series_columns(series)
    if layout.by_documents:  # one line per number of documents
        part = part.assign(
            N=pd.to_numeric(part[size], errors="coerce").astype("Int64").astype(str) + " documents"
        )
    overlays = None if likely_only else choice.overlays(part, c3)
    if overlays is not None and metric != choice.published:
        c3.caption(choice.published_note)
    table = analysis.u_curve(part, metric, cols, x=axis).rename(columns={axis: "position"})
    xt, title = layout.x_title(analysis.position_kind(part)), choice.title(metric_label, pick)
    labels = analysis.series_label(part, list(cols))
    likely = has_likelihood(part)
    if likely_only:  # the likelihood on its own
        with chart_slot:
            lik = likelihood_chart(part, labels, axis, size, xt, name=f"likelihood-{axis}")
        with st.expander("The numbers"):
            st.dataframe(fmt_likelihood(lik), hide_index=True)
        return
    fig = figures.u_curve(table, x_title=xt, metric_label=metric_label, overlays=overlays, title=title)
    if layout.by_documents:
        fig.update_xaxes(dtick=1 if table["position"].max() < 12 else 2)
    bounds = bounds_lines(fig, df, metric)
    if state.present:
        fig.update_layout(height=430)
    found = analysis.shapes(part, part[metric], labels, axis, size) if metric in part else []
    with chart_slot:
        left, right = st.container(), st.container()  # stacked: at half a page width neither chart reads
        with left:
            event = charts.show(
                fig,
                f"u-curve-{axis}",
                "accuracy (y) where the answer sits (x); shaded bands are 95% Wilson "
                "intervals, n per point in the legend; a dip in the middle is the lost-in-the-middle effect; "
                "dotted lines with hollow markers are published curves"
                + (f"; dashed lines the bounds, named at the right: {'; '.join(bounds)}" if bounds else "")
                + "; click a point to list its trials under the chart.",
                note=note_of(part, overlays, metric_label, size, layout.by_documents),
                names=legend_names(table, overlays),
                file_name=export_name(part, axis, size),
                alt=f"U-curve: {metric_label} against {xt}, one line per {series}",
                on_select="rerun",
                wide=True,
            )
            shape_sentences(found, metric_label)
        lik = None
        if likely:
            with right:
                lik = likelihood_chart(part, labels, axis, size, xt, name=f"likelihood-{axis}")
    with st.container(border=True):  # a click on a point lists its trials
        research.point_section(event, part, labels, axis, metric)
    if state.res_note and layout.by_documents:
        made = shipped.made(SHIPPED_LITM, shipped.ACCURACY_RUN)
        st.info(
            SMALL_MODEL_NOTE.format(made=made) + (LIKELIHOOD_NOTE if likely else ""), icon=":material/school:"
        )
    with st.expander("The numbers"):
        st.dataframe(
            fmt_table(table[["series", "position", "n", "mean", "lo", "hi", "errors"]]), hide_index=True
        )
        if lik is not None and not lik.empty:
            st.dataframe(fmt_likelihood(lik), hide_index=True)


def fmt_likelihood(t: pd.DataFrame) -> pd.DataFrame:
    out = t.drop(columns=["errors"], errors="ignore").copy()
    for c in ("mean", "lo", "hi"):
        out[c] = out[c].map(lambda v: "" if pd.isna(v) else f"{v:.2f}")
    return out.rename(
        columns={"mean": "mean log-probability (nats)", "lo": "95% low", "hi": "95% high", "n": "questions"}
    )


def fmt_table(t: pd.DataFrame) -> pd.DataFrame:
    out = t.copy()
    for c in ("mean", "lo", "hi"):
        if c in out:
            out[c] = out[c].map(lambda v: "" if pd.isna(v) else f"{v:.1%}")
    return out.rename(columns={"mean": "accuracy", "lo": "95% CI low", "hi": "95% CI high"})
