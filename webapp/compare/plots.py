"""Compare's charts: the accuracy-cost front, the arms' curves (published ones over them, chosen) and their
shapes, and the likelihood curve where a sweep measured it."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from webapp.compare import parts
from webapp.services import analysis, figures
from webapp.session import State
from webapp.ui import charts, curves, pickers
from webapp.ui.render import guard


def overlay_picker(where, t: pd.DataFrame, labels: list[str]) -> pd.DataFrame | None:
    """Published curves to draw over the arms' gold-index curves (none chosen at first)."""
    options = parts.overlay_options(t, labels)
    if options.empty:
        return None
    titles = dict(zip(options["label"], options["title"], strict=True))
    chosen = pickers.multi(
        where,
        "Overlay published curves",
        list(titles),
        State.cmp_u_overlay,
        placeholder="none",
        format_func=titles.get,
        help="Lost in the Middle Tables 5-7, then later papers' curves of the same NQ "
        "experiment (Found in the Middle, Pos2Distill), each naming its model, method "
        "and paper; as published, with the paper's own metric (best subspan EM or "
        "accuracy), beside the arms' primary metric",
    )
    return options[options["label"].isin(chosen)] if chosen else None


def charts_section(t: pd.DataFrame, result: analysis.Comparison, labels: list[str]) -> None:
    present = State().present
    note = parts.note(t, labels)
    with guard("the charts"):
        charts.show(
            parts.pareto(result.arms),
            "pareto",
            "one point per arm, numbered as in the table above: "
            "right costs more per 1,000 questions, higher is more accurate (bars: 95% Wilson intervals); "
            f"{figures.colour_word(figures.DOMINATED)} arms are dominated (another arm is as accurate for "
            "less); arms on one spot share a "
            "point.",
            series=False,
            note=note,
            height=420 if present else 480,
        )
        with st.container():
            over = overlay_picker(st, t, labels)
            charts.show(
                parts.u_curves(t, labels, over),
                "compare-u-curves",
                "accuracy of each arm where the "
                "answer sits; lines apart by more than their bands differ at that position"
                + ("; dotted lines with hollow markers are published curves." if over is not None else "."),
                note=parts.note(t, labels, over),
                names=parts.overlay_names(over),
                height=420 if present else None,
            )
        curves.shape_sentences(
            parts.u_curve_shapes(t, labels), "accuracy, primary metric"
        )  # the page's width
        part, x, title, size = parts.u_curve_parts(t, labels)
        if curves.has_likelihood(part):
            curves.likelihood_chart(
                part, part["arm"], x, size, title, name="compare-likelihood", height=420 if present else None
            )
