"""Choosing the task set of a sweep: a bundled set, tasks generated from a seed, or an uploaded file.
Bad rows are listed and left out; a whole file that cannot be read is one message."""

from __future__ import annotations

import re

import pandas as pd
import streamlit as st

from webapp.services import sweeps
from webapp.session import State
from webapp.ui import pickers
from webapp.ui.render import md, short

SOURCES = ["Bundled", "Generated", "Upload"]


def task_source() -> tuple[str, list, str | None]:
    """(label, tasks, path of an existing task file or None: the tasks are written when a run starts)."""
    source = pickers.radio(
        st,
        "Task set",
        SOURCES,
        State.exp_source,
        horizontal=True,
        help="bundled task files, tasks generated from a seed, or your own file",
    )
    if source == "Bundled":
        info = {s.name: s for s in sweeps.bundled_sets()}
        name = pickers.select(
            st,
            "Bundled task set",
            list(info),
            State.exp_bundled,
            format_func=lambda n: f"{n} ({info[n].n} tasks)",
        )
        st.caption(info[name].description)
        path = info[name].path
        ts = sweeps.read_bundled(path)
        show_row_errors(ts.errors)
        return name, ts.tasks, path
    if source == "Generated":
        kinds = sweeps.generator_kinds()
        c1, c2, c3 = st.columns([3, 1, 1])
        kind = pickers.select(
            c1, "Kind", list(kinds), State.exp_kind, format_func=lambda k: f"{k}: {kinds[k]}"
        )
        n = c2.number_input("How many", min_value=1, max_value=500, step=10, key=State.exp_gen_n.key)
        seed = c3.number_input("Seed", min_value=0, max_value=10**6, step=1, key=State.exp_gen_seed.key)
        params = generator_params(kind)
        try:
            tasks = sweeps.generated(kind, int(n), int(seed), **params)
        except ValueError as exc:
            st.error(md(short(exc)))
            return "", [], None
        named = "".join(f"-{k.replace('_', '')}{v}" for k, v in params.items() if k != "literal")
        control = "-literal" if params.get("literal") else ""
        return f"{kind}{control}{named}-n{int(n)}-seed{int(seed)}", tasks, None
    file = st.file_uploader(
        "Task file",
        type=["jsonl", "gz", "csv", "json"],
        key=State.exp_upload.key,
        help="Lost in the Middle QA or KV JSONL (.gz), our JSONL, or CSV (question, answers, passages)",
    )
    if file is None:
        st.caption("Upload a task file to use it.")
        return "", [], None
    try:
        ts = sweeps.uploaded(file.name, file.getvalue())
    except ValueError as exc:  # TaskFileError: one line
        st.error(md(short(exc)))
        return "", [], None
    show_row_errors(ts.errors)
    if not ts.tasks:
        st.error(f"No task could be read from {md(file.name)}.")
        return "", [], None
    stem = re.sub(r"[^A-Za-z0-9_-]+", "-", file.name.split(".")[0])[:40] or "upload"
    return stem, ts.tasks, None


def generator_params(kind: str) -> dict:
    """The swept parameter of a harder kind (hops, distance, near-miss distractors) and its literal
    control; {} for another kind."""
    p = sweeps.generator_parameter(kind)
    if p is None:
        return {}
    c1, c2 = st.columns([3, 2])
    key = State.exp_gen_param(p.name)
    if not isinstance(key.value, int) or not p.low <= key.value <= p.high:
        key.value = p.default
    value = c1.number_input(
        f"{p.name}: {p.help}",
        min_value=p.low,
        max_value=p.high,
        step=1 if p.high < 100 else 100,
        key=State.exp_gen_param(p.name).key,
    )
    literal = pickers.toggle(
        c2,
        "Its literal control",
        State.exp_gen_literal,
        help="the same tasks from the same facts with the hard part taken away: run both to see the gap",
    )
    return {p.name: int(value), "literal": int(literal)}


def show_row_errors(errors: list) -> None:
    if not errors:
        return
    st.warning(f"{len(errors)} row(s) could not be read and are left out.", icon=":material/warning:")
    with st.expander("Rows that could not be read"):
        st.dataframe(pd.DataFrame(errors[:500], columns=["line", "problem"]), hide_index=True)
