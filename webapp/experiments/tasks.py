"""Choosing the task set of a sweep: a bundled set, tasks generated from a seed, or an uploaded file.
Bad rows are listed and left out; a whole file that cannot be read is one message."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pandas as pd
import streamlit as st

from webapp.services import jobs
from webapp.ui import pickers
from webapp.ui.render import md, short

K = "exp_"
SOURCES = ["Bundled", "Generated", "Upload"]

@st.cache_data(show_spinner=False)
def bundled_sets() -> list:
    from components.tasks.samples import list_task_sets

    return list_task_sets()


@st.cache_data(show_spinner=False, max_entries=8)
def read_set(path: str, mtime: float):
    from components.tasks.importers import read_tasks

    return read_tasks(path)


@st.cache_data(show_spinner="Generating tasks…", max_entries=8)
def generated(kind: str, n: int, seed: int) -> list:
    from components.tasks.generators import generate

    return generate(kind, n, seed)


@st.cache_data(show_spinner=False, max_entries=4)
def uploaded(name: str, data: bytes):
    """Tasks of an uploaded file (unpacked as a stream, at most MAX_UPLOAD_TASK_BYTES)."""
    from components.tasks.importers import MAX_UPLOAD_TASK_BYTES, parse_tasks_bytes

    return parse_tasks_bytes(name, data, MAX_UPLOAD_TASK_BYTES)


def task_source() -> tuple[str, list, str | None]:
    """(label, tasks, path of an existing task file or None: the tasks are written when a run starts)."""
    source = pickers.radio(st, "Task set", SOURCES, K + "source", horizontal=True,
                           help="bundled task files, tasks generated from a seed, or your own file")
    if source == "Bundled":
        sets = bundled_sets()
        info = {s.name: s for s in sets}
        name = pickers.select(st, "Bundled task set", list(info), K + "bundled",
                              format_func=lambda n: f"{n} ({info[n].n} tasks)")
        st.caption(info[name].description)
        path = info[name].path
        ts = read_set(path, Path(path).stat().st_mtime)
        show_row_errors(ts.errors)
        return name, ts.tasks, path
    if source == "Generated":
        from components.tasks.generators import DESCRIPTIONS, KINDS

        c1, c2, c3 = st.columns([3, 1, 1])
        kind = pickers.select(c1, "Kind", list(KINDS), K + "kind", format_func=lambda k: f"{k}: {DESCRIPTIONS.get(k, '')}")
        n = c2.number_input("How many", min_value=1, max_value=500, step=10, key=K + "gen_n")
        seed = c3.number_input("Seed", min_value=0, max_value=10**6, step=1, key=K + "gen_seed")
        try:
            tasks = generated(kind, int(n), int(seed))
        except ValueError as exc:
            st.error(md(short(exc)))
            return "", [], None
        return f"{kind}-n{int(n)}-seed{int(seed)}", tasks, None
    file = st.file_uploader("Task file", type=["jsonl", "gz", "csv", "json"], key=K + "upload",
                            help="Lost in the Middle QA or KV JSONL (.gz), our JSONL, or CSV "
                                 "(question, answers, passages)")
    if file is None:
        st.caption("Upload a task file to use it.")
        return "", [], None
    from components.tasks.model import TaskFileError

    try:
        ts = uploaded(file.name, file.getvalue())
    except TaskFileError as exc:
        st.error(md(short(exc)))
        return "", [], None
    show_row_errors(ts.errors)
    if not ts.tasks:
        st.error(f"No task could be read from {md(file.name)}.")
        return "", [], None
    stem = re.sub(r"[^A-Za-z0-9_-]+", "-", file.name.split(".")[0])[:40] or "upload"
    return stem, ts.tasks, None


def show_row_errors(errors: list) -> None:
    if not errors:
        return
    st.warning(f"{len(errors)} row(s) could not be read and are left out.", icon=":material/warning:")
    with st.expander("Rows that could not be read"):
        st.dataframe(pd.DataFrame(errors[:500], columns=["line", "problem"]), hide_index=True)


def task_file(label: str, tasks: list) -> Path:
    """Where generated or uploaded tasks are written for the runner (named by their content)."""
    from components.tasks.importers import dumps_tasks

    digest = hashlib.sha256(dumps_tasks(tasks).encode()).hexdigest()[:12]
    return jobs.user_db().parent / "tasks" / f"{label}-{digest}.jsonl"


