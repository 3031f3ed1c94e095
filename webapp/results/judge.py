"""Results' audit of an LLM judge (`metric = "judge"`, components/report/judge_audit.py): for every sweep of
the selection with judge verdicts, its agreement with best subspan EM and fuzzy match (n, raw agreement,
Cohen's kappa) and the trials where they disagree, for a person to check, with a download. Nothing is
shown for a selection without judge verdicts. Texts are shown in data tables (drawn as plain text, never
as markdown or HTML)."""

from __future__ import annotations

from functools import partial

import pandas as pd
import streamlit as st

from webapp.services import analysis, stores
from webapp.services.names import count
from webapp.session import State
from webapp.ui.render import guard, md

SHOWN = 200  # disagreements listed on the page (the download has them all)
COLUMNS = {  # a disagreement's columns as the page and the download name them, what to check first
    "question": "question",
    "answers": "gold answers",
    "answer": "model answer",
    "judge": "judge",
    **{analysis.METRICS[m].column: analysis.METRICS[m].label for m in analysis.JUDGE_AGAINST},
    "judge_reply": "judge's reply",
    "trial_id": "trial",
    "sweep": "sweep",
}
VERDICTS = analysis.JUDGE_VERDICTS  # the columns holding a verdict (True / False / None)


def section(df: pd.DataFrame, sweeps: pd.DataFrame) -> None:
    """The audit of the judged sweeps in `df` (the selection), above the page's tabs; nothing without any."""
    with guard("the judge's audit"):
        if "judge" not in df.columns:
            return
        t = df[pd.to_numeric(df["judge"], errors="coerce").notna()]  # the judged trials
        if t.empty:
            return
        if "sweep_key" in t.columns and "sweep_key" in sweeps.columns:  # a sweep by its label, per store
            labels = dict(zip(sweeps["sweep_key"], sweeps["label"], strict=True))
            t = t.assign(sweep=t["sweep_key"].map(labels).fillna(t["sweep"]))
        found = analysis.judge_audits(t)
        if not found:
            return
        wrong = analysis.judge_disagreeing(t, found)
        with st.expander(
            f"LLM judge: its agreement with best subspan EM and fuzzy match, "
            f"{count(len(wrong), 'disagreement')} to check",
            expanded=False,
        ):
            view(found, wrong)


def view(found: list[dict], wrong: pd.DataFrame) -> None:
    st.caption(
        "The judge model's verdict (CORRECT or INCORRECT on our judge prompt) against the string metrics, "
        "over the trials both scored: raw agreement is the share where they agree; Cohen's kappa corrects "
        "it for the agreement chance alone gives (1 perfect, 0 no better than chance; none when one "
        "verdict was given throughout). Where they disagree, read the trial: the judge may be right "
        "(a paraphrase string matching misses) or wrong."
    )
    table = analysis.judge_summary(found)
    st.dataframe(
        table.rename(columns={"label": "against"}),
        hide_index=True,
        width="stretch",
        column_config={
            "sweep": st.column_config.TextColumn("sweep"),
            "against": st.column_config.TextColumn("against"),
            "n": st.column_config.NumberColumn("n", help="trials both scored", format="%d"),
            "raw": st.column_config.NumberColumn("raw agreement", format="percent"),
            "kappa": st.column_config.NumberColumn("Cohen's kappa", format="%.2f"),
            "disagreements": st.column_config.NumberColumn("disagreements", format="%d"),
        },
    )
    if wrong.empty:
        st.caption("The judge agrees with both string metrics on every trial.")
        return
    more = f"; the first {SHOWN:,} are listed, the download has them all" if len(wrong) > SHOWN else ""
    st.markdown(f"**Disagreements to check** ({count(len(wrong), 'trial')}{md(more)})")
    shown = readable(wrong.head(SHOWN))
    if wrong["sweep"].nunique() == 1:  # one sweep: named in the table above
        shown = shown.drop(columns=[COLUMNS["sweep"]])
    st.dataframe(shown, hide_index=True, width="stretch", height=min(400, 35 * (len(shown) + 1) + 3))
    st.download_button(
        "Download the disagreements (CSV)",
        partial(csv, wrong),
        file_name="litm_judge_disagreements.csv",
        mime="text/csv",
        key=State.res_download("judge").key,
        icon=":material/download:",
        on_click="ignore",
    )


def readable(rows: pd.DataFrame) -> pd.DataFrame:
    """The disagreements with their texts (read from their stores) and verdicts in words."""
    full = stores.whole(rows) if "store_path" in rows.columns else rows
    out = pd.DataFrame(index=full.index)
    for c, name in COLUMNS.items():
        v = full[c] if c in full.columns else pd.Series(None, index=full.index, dtype=object)
        if c == "answers":
            v = v.map(lambda a: "; ".join(map(str, a)) if isinstance(a, list | tuple) else a)
        elif c in VERDICTS:
            v = v.map({True: "correct", False: "incorrect"}).fillna("")
        out[name] = v
    return out.reset_index(drop=True)


def csv(rows: pd.DataFrame) -> bytes:
    return readable(rows).to_csv(index=False).encode()
