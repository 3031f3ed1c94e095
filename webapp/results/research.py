"""The researcher's flow on Results: a click on a curve's point lists that point's trials (and opens one in
the drill-down); the length x position heatmap in the needle-in-a-haystack convention; the trials x
settings grid of one sweep (promptfoo-style: pass/fail cells, a column's pass rate in its header); the
one-file HTML report of the selection; and a watch on the run stores that redraws the page when one grows
(a sweep run from the command line appears without a reload)."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import pandas as pd
import streamlit as st

from webapp.results.trial import trial_detail, trial_label
from webapp.services import analysis, figures, research, stores
from webapp.services.names import THIS_APP, count, model_title, models_of
from webapp.session import State
from webapp.ui import charts, pickers
from webapp.ui.render import guard, md, upper_first

REFRESH_S = 3  # seconds between two looks at the run stores' versions (two stats a store)
GRID_PAGE = 50  # tasks per page of the grid
POINT_ROWS = 500  # trials listed for one clicked point at most
POINT_COLUMNS = ["trial_id", "task", "strategy", "model", *analysis.CELL_COLUMNS, "answer", "error"]
OUTCOME_STYLE = {
    "pass": "background-color: #c7e9c0; color: #0b3d0b",
    "fail": "background-color: #f4b6b0; color: #5c0a04",
    "error": "background-color: #e0e0e0; color: #333; font-style: italic",
}
MARK = {"pass": "✓", "fail": "✗", "error": "failed", "": ""}


# ----------------------------------------------------------------------------- refresh when a store grows


@st.fragment(run_every=REFRESH_S)
def _watch() -> None:
    """Every few seconds: when a run store's version differs from the one the page read, redraw the page."""
    try:
        now = research.versions()
    except OSError:
        return
    if State().res_seen is not None and now != State().res_seen:
        st.rerun(scope="app")


def watch() -> None:
    """Note the stores' versions the page is about to read, and look again every REFRESH_S seconds."""
    State().res_seen = research.versions()
    _watch()


def follow(sweeps: pd.DataFrame, trials: pd.DataFrame, newest) -> None:
    """When the page opened on the user's newest sweep by itself (`res_auto_sweep`) and a newer one has
    arrived since (a sweep started from the command line), show the newer one, unless the user has chosen
    other sweeps. `newest`: (sweeps, trials) -> the newest sweep key of the user's store."""
    state = State()
    auto = state.res_auto_sweep
    if not auto:
        return
    found = newest(sweeps, trials)
    if found is not None and found != auto and list(state.res_sweeps or []) == [auto]:
        state.res_sweeps = [found]
        state.res_auto_sweep = found


# ----------------------------------------------------------------------------- a click on a curve's point


def clicked(event) -> list[dict]:
    """The points a chart's selection state holds (st.plotly_chart's on_select)."""
    selection = event.get("selection") if isinstance(event, dict) else getattr(event, "selection", None)
    if selection is None:
        return []
    points = selection.get("points") if isinstance(selection, dict) else getattr(selection, "points", None)
    return [dict(p) for p in (points or [])]


def point_trials(points: list[dict], trials: pd.DataFrame, labels: pd.Series, axis: str) -> pd.DataFrame:
    """The trials behind the first clicked point: its line (the trace's legend group: the series label the
    curve was drawn from, `labels` per trial) at its x (`axis`: position or gold_index). A click on a
    published curve or a band selects no trials."""
    for p in points:
        series, x = p.get("legendgroup"), p.get("x")
        if series is None or x is None:
            continue
        try:
            x = float(x)
        except (TypeError, ValueError):
            continue
        xs = pd.to_numeric(trials[axis], errors="coerce")
        hit = trials[(labels == series) & ((xs - x).abs() <= 1e-9 * max(1.0, abs(x)))]
        if len(hit):
            return hit
    return trials.iloc[0:0]


def point_section(event, trials: pd.DataFrame, labels: pd.Series, axis: str, metric: str) -> None:
    """Under the U-curve: the trials of the point clicked, with the drill-down of one of them."""
    picked = point_trials(clicked(event), trials, labels, axis)
    if picked.empty:
        st.caption("Click a point of a curve to list its trials here.")
        return
    first = picked.iloc[0]
    series = str(labels.loc[picked.index[0]])
    where = (
        f"gold index {int(first['gold_index'])} of {int(first['documents'])} documents"
        if axis == "gold_index"
        else f"position {float(first['position']):g}"
    )
    sizes = sorted(
        pd.to_numeric(picked.get("length", pd.Series(dtype=float)), errors="coerce").dropna().unique()
    )
    if axis != "gold_index" and sizes:  # a curve over every length pools them: say which
        where += f" at {'length' if len(sizes) == 1 else 'lengths'} " + ", ".join(
            f"{int(v):,}" for v in sizes
        )
    values = pd.to_numeric(picked[metric], errors="coerce") if metric in picked else pd.Series(dtype=float)
    failed = int(analysis.is_error(picked).sum())
    scored = int(values.notna().sum())
    right = int((values >= 1).sum())
    st.markdown(
        f"**Trials at this point: {md(series)}, {md(where)}** · {count(len(picked), 'trial')}, {scored:,} scored, "
        f"{right:,} right, {scored - right:,} wrong" + (f", {failed:,} failed" if failed else "")
    )
    view = stores.whole(picked.head(POINT_ROWS))
    view["key"] = view["store"] + "#" + view["trial_id"].astype(str)
    keys = list(view["key"])
    if State().res_point_keys != keys:  # another point: its first trial in the drill-down
        State().res_point_keys = keys
        State().res_point_trial = keys[0]
    shown = view[[c for c in [*POINT_COLUMNS[:8], metric, *POINT_COLUMNS[8:]] if c in view]].dropna(
        axis=1, how="all"
    )
    st.dataframe(
        shown,
        hide_index=True,
        key=State.res_point_table.key,
        on_select=_pick_point_row,
        selection_mode="single-row",
        height=min(300, 38 + 35 * len(shown)),
    )
    if len(picked) > POINT_ROWS:
        st.caption(f"The first {POINT_ROWS:,} of {len(picked):,} trials; the Trials tab lists them all.")
    labels_ = {k: trial_label(r) for k, r in zip(view["key"], view.itertuples(), strict=True)}
    key = pickers.select(
        st, "Trial at this point", keys, State.res_point_trial, format_func=lambda k: labels_.get(k, k)
    )
    if key in labels_:
        with guard("the trial details"):
            trial_detail(view[view["key"] == key].iloc[0])


def _pick_point_row() -> None:
    key = pickers.picked_row(State.res_point_table.value, State().res_point_keys)
    if key is not None:
        State().res_point_trial = key


# ----------------------------------------------------------------------------- the NIAH heatmap


def niah_tab(df: pd.DataFrame, metric: str, metric_label: str) -> None:
    """Context length across, depth down (0% at the top), dark blue to yellow, one panel per arm."""
    part = df[~df["strategy"].isin(("closed-book", "oracle"))]  # no document: no length, no depth
    fig, height = research.heatmap(part, metric, metric_label=metric_label)
    docs = analysis.layout_of(part).by_documents
    what = "number of documents" if docs else "context length"
    down = "the gold document's index (0 = first)" if docs else "depth, where the answer sits (0% = top)"
    charts.show(
        fig,
        "niah-heatmap",
        f"one panel per arm; across: {what}; down: {down}; each cell prints its accuracy and n (hover: the "
        f"95% interval), {figures.heatmap_words()}; a dark band in the middle rows is the lost-in-the-middle "
        "effect.",
        series=False,
        note=f"Measured by {THIS_APP} with {models_of(part['model']) or 'a model'}: {metric_label}, n per cell."
        + _sweeps_note(part),
        height=height,
        alt=f"Heatmap of {metric_label}: {what} by {down}, one panel per arm",
        file_name=_file_name("heatmap", part),
        wide=True,
    )


def _sweeps_note(df: pd.DataFrame) -> str:
    names = sorted({str(x) for x in df.get("sweep", pd.Series(dtype=str)).dropna()})
    if not names:
        return ""
    shown = ", ".join(names[:2]) + (f" and {len(names) - 2} more" if len(names) > 2 else "")
    return f" Sweep {shown}{', ' + _date(df) if _date(df) else ''}."


def _date(df: pd.DataFrame) -> str:
    created = pd.to_numeric(df.get("created", pd.Series(dtype=float)), errors="coerce").dropna()
    return "" if created.empty else pd.Timestamp(created.max(), unit="s").strftime("%Y-%m-%d")


def _file_name(what: str, df: pd.DataFrame) -> str:
    sweeps = sorted({str(x) for x in df.get("sweep", pd.Series(dtype=str)).dropna()})[:2]
    models = sorted({str(m).split(":", 1)[-1] for m in df["model"].dropna()})[:2]
    parts = [what, *sweeps, *models, f"n{df['task'].nunique()}" if "task" in df else "", _date(df)]
    return "-".join(p.replace(" ", "-") for p in parts if p)[:150]


# ----------------------------------------------------------------------------- the trials x settings grid


NO_GRID = (
    "No sweep here can be drawn as a grid: each column is a length and a position (or a number of "
    "documents) and each cell a trial scored by the metric chosen above, and these trials have none."
)


def _scored(placed: pd.DataFrame, metric: str) -> bool:
    """Whether a sweep's placed trials have a cell to draw: a trial scored by `metric` (a likelihood run
    has none by an answer metric: every cell would be empty)."""
    return metric in placed and bool(pd.to_numeric(placed[metric], errors="coerce").notna().any())


def grid_tab(df: pd.DataFrame, metric: str) -> None:
    """One sweep's tasks (rows) against its settings (columns), each cell pass, fail or failed."""
    sweeps = stores.with_trials(
        df[["sweep_key", "sweep"]].drop_duplicates().rename(columns={"sweep": "label"}), df
    )
    names = dict(zip(df["sweep_key"], df["sweep"].astype(str), strict=False))
    gridded = df[~df["strategy"].isin(("closed-book", "oracle"))]  # no place in the document: no column
    drawable = [
        k for k in sweeps if _scored(research.trialgrid.placed(gridded[gridded["sweep_key"] == k]), metric)
    ]
    if not drawable:
        st.info(NO_GRID)
        return
    sweep = pickers.select(
        st,
        "Sweep",
        sweeps,
        State.res_grid_sweep,
        default=drawable[0],  # opens on the first sweep it can draw
        format_func=lambda k: f"{names.get(k, k)} ({k})",
    )
    part = gridded[gridded["sweep_key"] == sweep]
    grid = research.grid(part, metric)
    if not grid.columns:
        st.info("No trials of this sweep have a length and a position (or a number of documents).")
        return
    tasks = len(grid.outcome)
    pages = max(1, math.ceil(tasks / GRID_PAGE))
    if pages > 1:
        if int(State().res_grid_page or 1) > pages:
            State().res_grid_page = pages
        c1, c2 = st.columns([1, 3])
        page = int(c1.number_input(f"Page (of {pages})", 1, pages, step=1, key=State.res_grid_page.key))
        c2.caption(f"{tasks:,} tasks, {GRID_PAGE} per page.")
    else:
        page = 1
    shown = grid.page((page - 1) * GRID_PAGE, page * GRID_PAGE)
    ids = [int(v) for v in pd.unique(shown.trial.to_numpy().ravel()) if pd.notna(v)]
    whole = stores.whole(part[part["trial_id"].isin(ids)]) if ids else part.iloc[0:0]
    answers = dict(zip(whole["trial_id"], whole.get("answer", pd.Series(dtype=str)), strict=False))
    questions = dict(
        zip(whole["task"].astype(str), whole.get("question", pd.Series(dtype=str)), strict=False)
    )
    table = cell_text(shown.outcome, shown.trial, answers)
    table.insert(0, "question", [str(questions.get(t, "") or "")[:120] for t in table.index])
    styled = table.style.apply(lambda col: [OUTCOME_STYLE.get(_outcome(v), "") for v in col], axis=0,
                               subset=list(shown.outcome.columns))  # fmt: skip
    st.caption(
        f"{len(grid.columns)} settings × {tasks:,} tasks of {md(names.get(sweep, sweep))} by "
        f"{md(analysis.LABELS.get(metric, metric))}: ✓ right (green), ✗ wrong (red), failed: the call "
        "failed (grey), empty: not run. Each header: the setting, its pass rate (right of scored). "
        "Click a cell for that trial."
    )
    event = st.dataframe(
        styled,
        key=State.res_grid_table.key,
        on_select="rerun",
        selection_mode="single-cell",
        height=min(38 + 35 * len(table), 600),
        column_config={"question": st.column_config.TextColumn("question", width="medium", pinned=True)},
    )
    cells = getattr(getattr(event, "selection", None), "cells", None) or []
    if not cells:
        return
    row, column = cells[0][0], cells[0][1]
    if column not in shown.trial.columns or row >= len(shown.trial):
        return
    trial_id = shown.trial[column].iloc[row]
    if pd.isna(trial_id):
        st.caption("Not run.")
        return
    found = whole[whole["trial_id"] == int(trial_id)]
    if len(found):
        with guard("the trial details"):
            trial_detail(found.iloc[0])


def _outcome(text: str) -> str:
    head = str(text).split(" ", 1)[0]
    return {"✓": "pass", "✗": "fail", "failed": "error"}.get(head, "")


def cell_text(outcome: pd.DataFrame, trial: pd.DataFrame, answers: dict) -> pd.DataFrame:
    """Each cell: ✓ or ✗ and the trial's answer (its first 60 characters), 'failed', or empty."""
    out = outcome.copy().astype(object)
    for c in outcome.columns:
        out[c] = [
            (
                MARK[o] + (" " + str(answers.get(int(t), "") or "")[:60] if o in ("pass", "fail") else "")
            ).strip()
            if pd.notna(t)
            else ""
            for o, t in zip(outcome[c], trial[c], strict=True)
        ]
    return out


# ----------------------------------------------------------------------------- the one-file HTML report


def report_button(df: pd.DataFrame, metric: str, metric_label: str) -> None:
    """The selection's one-file HTML report (made on click): its curves, n and intervals, shapes, heatmap."""
    title = report_title(df)
    st.download_button(
        "Download the HTML report",
        lambda: report(df, metric, metric_label, title),
        file_name=_file_name("litm-results", df) + ".html",
        mime="text/html",
        key=State.res_report.key,
        icon=":material/description:",
        on_click="ignore",
        help="One file that opens offline: the curves with n and 95% intervals per point, each curve's "
        "shape, the length × position heatmap; titled with the sweep, model and date.",
    )


def report_title(df: pd.DataFrame) -> str:
    sweeps = sorted({str(x) for x in df.get("sweep", pd.Series(dtype=str)).dropna()})
    shown = ", ".join(sweeps[:2]) + (f" and {len(sweeps) - 2} more" if len(sweeps) > 2 else "")
    bits = [f"LITM Explorer: results of {shown or 'the selection'}", models_of(df["model"]), _date(df)]
    return " · ".join(b for b in bits if b)


def report(df: pd.DataFrame, metric: str, metric_label: str, title: str) -> str:
    """The report's HTML: per axis of the selection, one line per strategy, model and size (never two
    lengths pooled in one line), their points and shapes; then the heatmap."""
    part = df[~df["strategy"].isin(("closed-book", "oracle"))]
    part = part.assign(model_name=part["model"].map(model_title), source=THIS_APP)
    figs, curves, shapes = [], [], []
    for axis, layout in analysis.LAYOUTS.items():
        on = part[pd.to_numeric(part[axis], errors="coerce").notna()] if axis in part else part.iloc[0:0]
        if on.empty or metric not in on:
            continue
        size = pd.to_numeric(on[layout.size], errors="coerce")
        unit = "documents" if layout.by_documents else "tokens"
        on = on.assign(size_=size.map(lambda v, u=unit: "" if pd.isna(v) else f"{int(v):,} {u}"))
        cols = ["strategy", "model_name", "size_", "source"]
        table = analysis.u_curve(on, metric, cols, x=axis).rename(columns={axis: "position"})
        xt = layout.x_title(analysis.position_kind(on))
        fig = figures.u_curve(
            table, x_title=xt, metric_label=metric_label, title=f"{upper_first(metric_label)} by {xt}"
        )
        figures.theme(fig, presenter=False, series=True)
        figs.append(fig)
        curves.append((f"The numbers: {metric_label} by {xt}", table, xt))
        labels = analysis.series_label(on, cols)
        for f in analysis.shapes(on, on[metric], labels, axis, layout.size):
            shapes.append((str(f["name"]), f["shape"].sentence))
    figs.append(research.heatmap(part, metric, metric_label=metric_label)[0])
    about = (
        f"{len(df):,} trials measured by {THIS_APP} with {models_of(df['model']) or 'a model'}: "
        f"{metric_label}, 95% Wilson intervals." + _sweeps_note(df)
    )
    return research.build_results(
        title=title, figures=figs, curves=curves, shapes=shapes, about=about, now=datetime.now(UTC)
    )
