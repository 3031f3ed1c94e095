"""The Results page's U-curve tab, on either axis: answer position (tokens or a fraction; R&R §4.1)
or the gold document's index among N documents (LITM §3.1), with the published curves overlaid and
the closed-book / oracle bounds (LITM §3, Table 1) drawn as reference lines."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from components.report import analysis, charts
from webapp.ui import charts as chartview
from webapp.ui import pickers

K = "res_"
SERIES = {"strategy": ("strategy",), "model": ("model",), "strategy and model": ("strategy", "model")}
AXES = {"position": "answer position (tokens or fraction)", "gold_index": "gold document index (of N documents)"}
BOUNDS = ("closed-book", "oracle")
SHIPPED_LITM = "local-qwen-nq-litm"  # the shipped LITM-style run the page opens on
DEFAULT_PUBLISHED = "GPT-3.5-Turbo"  # LITM Tables 5-6: the published curve opened next to it

SMALL_MODEL_NOTE = (
    "**What a small model shows.** This is Qwen2.5 Coder 0.5B, run here on the NQ-open questions with the "
    "\"Lost in the Middle\" prompt (LITM §2.1): best-subspan EM against the gold document's index, n and a 95% "
    "interval per point. The published curves (LITM Tables 5-7) come from far larger models trained for long "
    "contexts (MPT-30B is 60 times its size, LongChat-13B 26 times; GPT-3.5-Turbo and Claude-1.3 larger "
    "still): they are more accurate everywhere, and their U (best at the first and last index, worst in the "
    "middle) is what LITM reports. Here the small model is best at the first index with 10 and with 20 "
    "documents; with 20 it dips in the middle and comes back part of the way at the last index, a shallow U "
    "that 50 questions per point cannot prove (tests per point in sample_docs/runs/README.md). Its closed-book and oracle lines show what it knows with no documents and with "
    "only the gold one. Our distractors are BM25-ranked passages from other questions, easier than the "
    "paper's retriever-mined ones (sample_docs/tasks/NQ-OPEN.md)."
)


def axes_of(df: pd.DataFrame) -> list[str]:
    out = []
    for axis in AXES:
        if axis in df and pd.to_numeric(df[axis], errors="coerce").notna().any():
            out.append(axis)
    return out


@st.cache_data(show_spinner=False)
def published_rows() -> pd.DataFrame:
    from components.report.published import load_published

    return load_published()


def open_on_real_curve(trials: pd.DataFrame, sweeps: pd.DataFrame) -> None:
    """First visit of this session: when the shipped LITM-style run is there, select it (and its bounds
    run) on the gold-index axis with best-subspan EM and the published GPT-3.5-Turbo curves."""
    if st.session_state.get(K + "_opened"):
        return
    st.session_state[K + "_opened"] = True
    if "store" not in sweeps or st.query_params.get("axis") == "position":  # a link asked for the other axis
        return
    litm = sweeps[sweeps["store"].astype(str).str.contains(SHIPPED_LITM.removesuffix("-litm"), regex=False)]
    if litm.empty or st.session_state.get(K + "sweeps") not in (None, []):
        return
    st.session_state[K + "sweeps"] = list(litm["sweep_key"])
    st.session_state[K + "metric"] = "subspan_em"
    st.session_state[K + "u_axis"] = "gold_index"
    st.session_state[K + "_note"] = True


def index_overlays(part: pd.DataFrame, where) -> pd.DataFrame | None:
    curves = analysis.published_index_curves(published_rows())
    docs = set(pd.to_numeric(part["documents"], errors="coerce").dropna().astype(int))
    curves = curves[curves["n_documents"].isin(docs)] if docs else curves.iloc[0:0]
    if curves.empty:
        where.caption("No published LITM curve has these numbers of documents.")
        return None
    curves = curves.assign(x=curves["position"])
    labels = list(dict.fromkeys(curves["label"]))
    default = [lab for lab in labels if f", {DEFAULT_PUBLISHED}, " in lab]
    chosen = pickers.multi(where, "Overlay published curves", labels, K + "u_overlay_idx", default=default,
                           placeholder="none", help="Lost in the Middle Tables 5-7 (best-subspan EM, as published), drawn "
                                "dotted with hollow markers; compare with the best subspan EM metric")
    return curves[curves["label"].isin(chosen)] if chosen else None


def position_overlays(part: pd.DataFrame, where) -> pd.DataFrame | None:
    candidates = analysis.overlay_candidates(published_rows(), part)
    if candidates.empty:
        where.caption("No published curve matches these trials' positions and lengths.")
        return None
    labels = list(dict.fromkeys(candidates["label"]))
    chosen = pickers.multi(where, "Overlay published curves", labels, K + "u_overlay", placeholder="none",
                           help="R&R Tables 7-9 (GPT-4 Turbo, fuzzy match), drawn dotted with hollow markers; "
                                "compare with the fuzzy match metric")
    return candidates[candidates["label"].isin(chosen)] if chosen else None


def bounds_lines(fig, df: pd.DataFrame, metric: str) -> list[str]:
    """Closed-book and oracle accuracy of these trials as horizontal reference lines."""
    out = []
    for i, name in enumerate(BOUNDS):
        part = analysis.scored(df[df["strategy"] == name], metric)
        if part.empty:
            continue
        values = pd.to_numeric(part[metric], errors="coerce").dropna()
        lo, hi = analysis.proportion_ci(float(values.sum()), len(values))
        mean = float(values.mean())
        text = f"{name}: {mean:.0%} (n={len(values)}, 95% CI {lo:.0%}-{hi:.0%})"
        fig.add_hline(y=mean, line=dict(color="#333", dash="dash" if i else "dot", width=2),
                      annotation_text=text, annotation_position="top right" if i else "bottom right")
        out.append(text)
    return out


def u_curve_tab(df: pd.DataFrame, metric: str, metric_label: str) -> None:
    axes = axes_of(df) or ["position"]
    c0, c1, c2, c3 = st.columns([2, 2, 2, 4])
    axis = pickers.radio(c0, "Axis", axes, K + "u_axis", horizontal=False, format_func=AXES.get)
    series = pickers.radio(c1, "One line per", list(SERIES), K + "u_series", horizontal=False)
    curve = df[~df["strategy"].isin(BOUNDS)]
    curve = curve[pd.to_numeric(curve[axis], errors="coerce").notna()]
    if axis == "gold_index":
        docs = sorted(pd.to_numeric(curve["documents"], errors="coerce").dropna().astype(int).unique())
        pick = pickers.select(c2, "Documents (N)", ["all", *docs], K + "u_docs", default="all",
                              format_func=lambda v: "every N" if v == "all" else f"{v} documents")
        part = curve if pick == "all" else curve[pd.to_numeric(curve["documents"], errors="coerce") == pick]
        part = part.assign(N=pd.to_numeric(part["documents"], errors="coerce").astype("Int64").astype(str)
                           + " documents")
        overlays = index_overlays(part, c3)
        table = analysis.u_curve(part, metric, (*SERIES[series], "N"), x="gold_index")
        table = table.rename(columns={"gold_index": "position"})
        xt, title = "gold document index (0 = first)", f"{metric_label[:1].upper()}{metric_label[1:]} by the gold document's index"
        if overlays is not None and metric != "subspan_em":
            c3.caption("The published curves are best-subspan EM; pick that metric to compare.")
    else:
        lengths = sorted(pd.to_numeric(curve["length"], errors="coerce").dropna().astype(int).unique())
        default = lengths[-1] if analysis.position_kind(curve) == "tokens" and len(lengths) > 1 else "all lengths"
        length = pickers.select(c2, "Document length (tokens)", ["all lengths", *lengths], K + "u_length",
                                default=default, format_func=lambda v: v if isinstance(v, str) else f"{v:,}",
                                help="positions in tokens mean different places in documents of different "
                                     "lengths: compare one length at a time")
        part = curve if length == "all lengths" else curve[pd.to_numeric(curve["length"], errors="coerce") == length]
        overlays = position_overlays(part, c3)
        if overlays is not None and metric != "score":
            c3.caption("The published curves are fuzzy match; pick the fuzzy match metric to compare.")
        table = analysis.u_curve(part, metric, SERIES[series])
        xt = ("answer position (fraction of the document)" if analysis.position_kind(part) == "fraction"
              else "answer position (tokens)")
        title = f"{metric_label.capitalize()} by answer position" + (
            "" if length == "all lengths" else f" (length {length:,} tokens)")
    fig = charts.u_curve(table, x_title=xt, metric_label=metric_label, overlays=overlays, title=title)
    if axis == "gold_index":
        fig.update_xaxes(dtick=1 if table["position"].max() < 12 else 2)
    bounds = bounds_lines(fig, df, metric)
    chartview.show(fig, f"u-curve-{axis}", "accuracy (y) where the answer sits (x); shaded bands are 95% Wilson "
                   "intervals, n in the legend; a dip in the middle is the lost-in-the-middle effect; dotted lines "
                   "with hollow markers are published curves" + ("; dashed lines the closed-book and oracle bounds."
                                                                 if bounds else "."),
                   key=K + "u_chart", alt=f"U-curve: {metric_label} against {xt}, one line per {series}")
    if st.session_state.get(K + "_note") and axis == "gold_index":
        st.info(SMALL_MODEL_NOTE, icon=":material/school:")
    with st.expander("The numbers"):
        st.dataframe(fmt_table(table[["series", "position", "n", "mean", "lo", "hi", "errors"]]), hide_index=True)


def fmt_table(t: pd.DataFrame) -> pd.DataFrame:
    out = t.copy()
    for c in ("mean", "lo", "hi"):
        if c in out:
            out[c] = out[c].map(lambda v: "" if pd.isna(v) else f"{v:.1%}")
    return out.rename(columns={"mean": "accuracy", "lo": "95% CI low", "hi": "95% CI high"})
