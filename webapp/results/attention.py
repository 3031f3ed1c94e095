"""The Results page's attention view, under the U-curve tab's accuracy and likelihood: for a selection with
attention trials (`measure = "attention"`), one chart per arm of where the model looks by position: the gold
document's share of the attention at each gold index, and the positional bias apart from relevance (the
documents that are not gold, by their position; components/report/attention.py), each with n and a 95%
interval, then one sentence on each curve's shape. Nothing at all for a selection without them."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from webapp.services import attention
from webapp.services.names import THIS_APP, count, models_of
from webapp.session import State
from webapp.ui import charts
from webapp.ui.render import md

READ = (
    "where the model looks (y: the share of the last prompt token's attention, all layers and heads, that a "
    "document gets) by its position among the documents (x, 0 the first). The thick line is the gold "
    "document at each gold index; the thin one the documents that are not gold at each position: the "
    "positional bias with relevance held out (Hsieh et al. 2024 §3-4 measure it with one fixed irrelevant "
    "document; here the distractors stand in for it). Shaded bands: 95% intervals (the gold: over trials; "
    "the distractors: clustered by question); n: questions."
)


def table(c: dict) -> pd.DataFrame:
    """The chart's numbers, in % of the attention: one row per position."""
    gold = {r["gold_index"]: r for r in c["gold"]}
    rows = []
    for b in c["bias"] or [{"position": k} for k in gold]:
        k = b["position"]
        g = gold.get(k)
        rows.append(
            {
                "position": k,
                "gold %": None if g is None else 100 * g["mean"],
                "gold 95% interval": "" if g is None else f"{100 * g['lo']:.1f} to {100 * g['hi']:.1f}",
                "gold n": None if g is None else g["n"],
                "not gold %": 100 * b["mean"] if "mean" in b else None,
                "not gold 95% interval": f"{100 * b['lo']:.1f} to {100 * b['hi']:.1f}" if "lo" in b else "",
                "not gold n (questions)": b.get("n"),
            }
        )
    return pd.DataFrame(rows)


def section(df: pd.DataFrame) -> None:
    """The attention view of `df` (the filtered trials), or nothing when none carries the measure."""
    if not attention.has_attention(df):
        return
    found = attention.position_curves(df)
    if not found:
        return
    st.subheader("Where the model looks, by position")
    present = State().present
    if not present:  # presenter mode: the chart and its sentences, the method under "How to read"
        st.caption(md(attention.BIAS_MEANING))
    for i, c in enumerate(found):
        if len(found) > 1:
            st.markdown(f"**{md(c['arm'])}** · {count(int(c['documents'] or 0), 'document')}")
        fig = attention.position_figure(c["gold"], c["bias"], "document's position (0 = first)")
        model = models_of(pd.Series([c["model"]])) or "a model"
        charts.show(
            fig,
            f"attention-{i}",
            READ,
            series=False,
            height=430 if present else None,
            note=(
                f"Measured by {THIS_APP} with {model}: share of the last prompt token's attention by "
                "document position, gold and not gold; 95% intervals."
            ),
            alt="share of the attention against the document's position, gold and not gold",
        )
        st.markdown("  \n".join(md(line) for line in c["sentences"]))
        with st.expander("The numbers"):
            st.dataframe(table(c), hide_index=True)
