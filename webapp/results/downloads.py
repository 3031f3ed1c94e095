"""Results' downloads: the selection as CSV or Parquet, the one-file report, and runs someone shared imported."""

from __future__ import annotations

from functools import partial

import pandas as pd
import streamlit as st

from webapp.results import research
from webapp.services import sharing, stores
from webapp.services.names import count
from webapp.session import State
from webapp.ui.render import md, short


def download_tab(df: pd.DataFrame, metric: str, metric_label: str) -> None:
    research.report_button(df, metric, metric_label)
    st.write(
        f"The {len(df):,} trials of this selection, every column (errors included, with their message). "
        "The file is made when you click, from the run stores."
    )
    c1, c2 = st.columns(2)
    # data as a callable: made on click only (a 100k-trial export costs seconds, not every rerun)
    c1.download_button(
        "Download CSV",
        partial(stores.export, df, "csv"),
        file_name="litm_trials.csv",
        mime="text/csv",
        key=State.res_download("csv").key,
        icon=":material/download:",
        on_click="ignore",
    )
    c2.download_button(
        "Download Parquet",
        partial(stores.export, df, "parquet"),
        file_name="litm_trials.parquet",
        mime="application/vnd.apache.parquet",
        key=State.res_download("parquet").key,
        icon=":material/download:",
        on_click="ignore",
    )
    import_section()


def import_section() -> None:
    """Runs someone exported (the downloads above, or `litm results`/the store's export) join your store."""
    state = State()
    up = st.file_uploader(
        "Import runs someone shared (CSV, JSONL or Parquet from this app)",
        type=["csv", "jsonl", "parquet"],
        key=State.res_import.key,
    )
    if up is None or state.res_imported == up.file_id:
        return
    try:
        n, sweeps = stores.import_file(up.name, up.getvalue(), sharing.owner_tag())
    except Exception as exc:  # a bad file is a message, not a traceback
        st.error(f"Could not import {md(up.name)}: {md(short(exc))}", icon=":material/error:")
        return
    state.res_imported = up.file_id
    state.res_import_msg = f"Imported {count(n, 'trial')} in {count(sweeps, 'sweep')} into your run store."
    st.rerun()  # the results above now include them
