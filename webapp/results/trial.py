"""One trial in detail (Results): question, gold and parsed answers, every stored metric, retrieved
pages, and the prompt map and raw text of each stored call. Everything from a task file or a model
is escaped (render.md, render.text_box)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from webapp.services import analysis, engine, figures, stores
from webapp.services.names import model_title
from webapp.ui import charts
from webapp.ui.render import md, pages_html, prompt_html, text_box, thousands


def cell_label(r) -> str:
    """Where a trial's answer sat: 'gold 4 of 20 documents' (LITM §2.1), else its length and position."""
    documents, gold = getattr(r, "documents", None), getattr(r, "gold_index", None)
    if r.strategy == analysis.CLOSED_BOOK:
        return "no document"
    if pd.notna(documents) and pd.notna(gold):
        return "1 document" if int(documents) == 1 else f"gold {int(gold)} of {int(documents)} documents"
    where = ([f"length {int(r.length):,}"] if pd.notna(r.length) else []) + (
        [f"position {float(r.position):g}"] if pd.notna(r.position) else []
    )
    return " · ".join(where)


def trial_label(r) -> str:
    """'#12 · nq-3 · litm · gold 4 of 20 documents': a trial (a row of a trials frame) in a picker."""
    return " · ".join(x for x in (f"#{r.trial_id}", str(r.task), str(r.strategy), cell_label(r)) if x)


def page_list(value) -> list[int]:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return []
    try:
        return [int(v) for v in list(value)]
    except (TypeError, ValueError):
        return []


PAGE_METRICS = ("page_recall", "page_precision")


def retrieves(row: pd.Series) -> bool:
    """Whether the trial's strategy picks pages (R&R's retrieval stage, cited pages): its retrieved pages are
    stored (even none) or it cited some. A strategy that reads the whole document stores none."""
    r = row.get("retrieved_pages")
    stored = r is not None and not (isinstance(r, float) and pd.isna(r))
    return stored or bool(page_list(row.get("cited_pages")))


def score_line(row: pd.Series) -> str:
    """'best subspan EM 1 (primary) · fuzzy match 0 · ...' for every metric the trial has (page recall and
    precision only where the strategy picks pages)."""
    primary = row.get("metric")
    picks = retrieves(row)
    bits = []
    for m in analysis.METRICS.values():
        if m.column in PAGE_METRICS and not picks:
            continue
        value = row.get(m.column)
        if value is not None and pd.notna(value):
            bits.append(f"{m.label} {value:g}" + (" (primary)" if m.name == primary else ""))
    return " · ".join(bits) or "no score"


def trial_detail(row: pd.Series) -> None:
    st.subheader(f"Trial #{row['trial_id']}: {md(row['task'])}")
    c1, c2 = st.columns(2)
    c1.markdown("**Question**")
    c1.html(text_box(str(row.get("question") or ""), 6))
    answers = row.get("answers")
    c1.markdown("**Gold answers**")
    c1.html(
        text_box("\n".join(map(str, answers)) if isinstance(answers, list | tuple) else str(answers or ""), 4)
    )
    c2.markdown("**Parsed answer**")
    c2.html(text_box(str(row.get("answer") or ""), 6))
    err = row.get("error")
    if isinstance(err, str) and err.strip():
        c2.error(f"Error (not scored): {md(err.strip().splitlines()[0][:300])}")
    else:
        c2.markdown("**Scores** " + md(score_line(row)))
    gold, retrieved = page_list(row.get("gold_pages")), page_list(row.get("retrieved_pages"))
    if retrieves(row):
        c2.markdown("**Retrieved pages**")
        c2.html(pages_html(retrieved, gold))
    elif gold:
        c2.markdown(
            f"**Gold {'page' if len(gold) == 1 else 'pages'}** {', '.join(map(str, gold))} "
            "(this strategy reads the whole document: it retrieves no pages)"
        )
    calls = stores.calls_of(row["store_path"], row["trial_id"], bool(row.get("shipped", False)))
    if not calls:
        st.info("No stored calls for this trial (an imported trial, or it failed before any call).")
        return
    prompts = [
        analysis.rebuild_prompt(
            c["messages"], gold, stage=i + 1, label=f"call {i + 1} · {c.get('model', '')}"
        )
        for i, c in enumerate(calls)
    ]
    st.markdown("**Prompt map** of this trial's calls (regions found again from the stored requests)")
    charts.show(
        engine.map_of(prompts, None),
        "trial-prompt-map",
        f"one row per call along its tokens: {figures.colour_key()}.",
        series=False,
        note=f"Trial #{row['trial_id']} of {model_title(row.get('model'))} · this app",
        alt="Prompt map: where instructions, reminders, pages and the gold page sit in each call",
    )
    for i, (call, prompt) in enumerate(zip(calls, prompts, strict=True)):
        with st.expander(
            f"Call {i + 1}: {thousands(call.get('input_tokens'))} tokens in, "
            f"{thousands(call.get('output_tokens'))} out · {md(call.get('provider'))}/{md(call.get('model'))}"
        ):
            st.markdown("**Prompt** (regions highlighted as in the map)")
            st.html(prompt_html(prompt, 20))
            st.markdown("**Raw response**")
            st.html(text_box(str(call.get("response") or ""), 10))
