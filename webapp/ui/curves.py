"""Curves the Results and Compare pages share: the likelihood curve (mean answer_logprob by position, a
bootstrap band over questions, report.likelihood) and one plain sentence per drawn line on its shape
(report.shape: the position-bias index with its 95% bootstrap interval, a label only when the interval
excludes zero, else "no clear shape at this n" and the questions that would tell)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from webapp.services import analysis, figures
from webapp.services.names import THIS_APP, count, models_of
from webapp.session import State
from webapp.ui import charts
from webapp.ui.render import md

LIKELIHOOD_READ = (
    "how likely the model finds the right answer (y: the gold answer's log-probability after the "
    "prompt, in nats; closer to 0 is more likely; each step of 1 is a factor of e, about 2.7) where "
    "the answer sits (x); the mean over the questions scored at every position, shaded bands 95% "
    "bootstrap intervals over questions, n in the legend (questions scored at every position); a dip "
    "in the middle is the lost-in-the-middle effect. "
    "This measure is this app's, not the papers'."
)


def has_likelihood(part: pd.DataFrame) -> bool:
    col = analysis.LIKELIHOOD.column
    return col in part and pd.to_numeric(part[col], errors="coerce").notna().any()


def likelihood_chart(
    part: pd.DataFrame,
    labels: pd.Series,
    axis: str,
    size: str,
    xt: str,
    *,
    name: str,
    height: int | None = None,
) -> pd.DataFrame:
    """The likelihood curves of `part` (one line per label, split by size where a line holds several),
    with their shape sentences under them; returns the chart's table."""
    lik, found = analysis.likelihood_lines(part, labels, axis, size)
    table = lik.rename(columns={axis: "position"})
    where = "the gold document's index" if axis == "gold_index" else "answer position"
    label = analysis.LIKELIHOOD.label
    fig = figures.accuracy_lines(
        table,
        "position",
        title=f"How likely the right answer is, by {where}",
        x_title=xt,
        metric_label=two_lines(label),
        percent=False,
    )
    if axis == "gold_index" and len(table):
        fig.update_xaxes(dtick=1 if table["position"].max() < 12 else 2)
    if State().present:
        fig.update_layout(height=430)
    names = {
        figures.esc(f["name"]): f"{figures.esc(f['name'])} · {f['shape'].questions} questions" for f in found
    }
    charts.show(
        fig,
        name,
        LIKELIHOOD_READ,
        names=names,
        height=height,
        note=(
            f"Measured by {THIS_APP} with {models_of(part['model']) or 'a model'}: the gold answer's "
            "log-probability (nats), mean over questions scored at every position, 95% bootstrap "
            "intervals over questions. Our measure, not the papers'."
        ),
        alt=f"{label} against {xt}",
    )
    if not found:
        st.caption("No trial of this selection carries the likelihood measure at these positions.")
    shape_sentences(found, label)
    return lik


def two_lines(text: str) -> str:
    """An axis title broken at the space nearest its middle (plotly's <br>), so a long one fits the axis."""
    spaces = [i for i, ch in enumerate(text) if ch == " "]
    if len(text) < 30 or not spaces:
        return text
    at = min(spaces, key=lambda i: abs(i - len(text) / 2))
    return f"{text[:at]}<br>{text[at + 1 :]}"


def shape_sentences(found: list[dict], what: str) -> None:
    """One plain sentence per drawn line on its shape (report.shape), with the questions left out."""
    if not found:
        return
    lines = []
    for f in found:
        text = f["shape"].sentence
        if f["left_out"]:
            text += (
                f" {count(f['left_out'], 'question')} not scored at every position of this line "
                f"{'is' if f['left_out'] == 1 else 'are'} left out of this test."
            )
        lines.append(f"**{md(f['name'])}.** {md(text)}")
    st.markdown(
        "**Shape of each curve** (" + md(what) + "): " + "  \n".join([""] + lines),
        help="Position-bias index: mean of the first and last positions minus the middle one, with a 95% "
        "bootstrap interval over questions (a question's positions together); a shape is named only "
        "when its interval excludes zero. Only questions answered at every position count. "
        "`litm results --json` gives the same numbers.",
    )
