"""The Experiments page's sweep panels: this browser's running sweeps (live progress, cancel), and the
past sweeps of the run store (resume)."""

from __future__ import annotations

import time

import pandas as pd
import streamlit as st

from webapp.services import jobs, sharing
from webapp.services import stores as runs
from webapp.session.state import State
from webapp.ui import pickers
from webapp.ui.render import guard, md, short, usd

K = "exp_"

def job_line(job: jobs.Job) -> None:
    frac = min(1.0, job.done / job.total) if job.total else 0.0
    elapsed = (job.finished or time.time()) - job.started
    text = (f"**{md(job.label)}** · {job.state} · {job.done:,}/{job.total:,} trials · errors {job.errors:,} · "
            f"spent {usd(job.usd)} · {job.sent:,} calls sent"
            + (f" ({job.requests:,} HTTP requests)" if job.requests > job.sent else "")
            + f", {job.cached:,} from cache · {elapsed:.0f} s"
            + (f" · {md(job.note)}" if job.running and job.note else ""))
    st.progress(frac, text=text)
    if job.batch and job.running:
        st.caption(f"Provider batches: {job.batch}")
    if job.failure:
        st.error(f"The sweep stopped: {md(short(job.failure))}")
    summary = job.summary
    if summary is not None and getattr(summary, "reason", ""):
        st.caption(f"{summary.status}: {md(summary.reason)}")


def jobs_panel(owner_: str) -> None:
    mine = jobs.jobs_for(owner_)
    if not mine:
        return
    st.subheader("Your sweeps in this session")
    me = sharing.browser_key()
    for job in mine[:5]:
        c1, c2 = st.columns([6, 1])
        with c1:
            job_line(job)
        if job.running and job.controller != me:
            c2.caption("watching (started in another browser)")
        elif job.running:
            c2.button("Cancel", key=f"{K}cancel_{job.id}", on_click=jobs.cancel, args=(owner_, job.id, me),
                      disabled=job.cancel.is_set(), icon=":material/stop_circle:")
        else:
            c2.button("Dismiss", key=f"{K}dismiss_{job.id}", on_click=jobs.forget, args=(owner_, job.id))
    done = [j for j in mine if not j.running and j.state == "finished"]
    if done:
        query = {"sweep": runs.sweep_key(done[0].sweep_id)} if done[0].sweep_id is not None else None
        try:
            c1, c2 = st.columns(2)
            c1.page_link("results/page.py", label=f"See the results of {md(done[0].label)}",
                         icon=":material/monitoring:", query_params=query)
            c2.page_link("compare/page.py", label="Compare its arms", icon=":material/compare_arrows:",
                         query_params=query)
        except Exception:  # the page runs outside the app's navigation
            st.caption("See the results on the Results page, and compare its arms on Compare.")


@st.fragment(run_every=1.0)
def live_panel(owner_: str) -> None:
    with guard("the sweeps in progress"):
        jobs_panel(owner_)
    if not jobs.running_for(owner_):
        st.rerun()  # the sweep ended: redraw the whole page (past sweeps, buttons)


@st.fragment(run_every=1.0)
def live_bars(owner_: str) -> None:
    """The progress again under the Run button (where the user is), without buttons."""
    for job in jobs.running_for(owner_):
        frac = min(1.0, job.done / job.total) if job.total else 0.0
        st.progress(frac, text=f"{md(job.label)}: {job.done:,}/{job.total:,} trials · errors {job.errors:,} · "
                               f"spent {usd(job.usd)} (cancel at the top of the page)")


def progress_panel(owner_: str) -> None:
    if jobs.running_for(owner_):
        live_panel(owner_)
    else:
        jobs_panel(owner_)


def past_sweeps(owner_: str) -> pd.DataFrame:
    from components.run.store import RunStore

    db = jobs.user_db()
    if not db.exists():
        return pd.DataFrame()
    store = RunStore(db)
    try:
        frame = store.sweeps_frame()
    finally:
        store.close()
    if frame.empty:
        return frame
    frame = frame[[sharing.visible(o, owner_) for o in frame["owner"]]]  # never other people's sweeps
    if frame.empty:
        return frame
    mine = {j.label for j in jobs.running_for(owner_)}
    elsewhere = jobs.running_names(str(db)) - mine
    frame = frame[~frame["name"].isin(elsewhere)].copy()  # never show another session's run in progress
    frame["state"] = [("running (this session)" if n in mine else "interrupted") if s == "running" else s
                      for n, s in zip(frame["name"], frame["status"], strict=True)]
    return frame


def past_panel(owner_: str) -> None:
    frame = past_sweeps(owner_)
    st.subheader("Past sweeps")
    if frame.empty:
        st.caption(f"No sweeps yet in {md(jobs.user_db())}.")
        return
    show = frame[["id", "name", "state", "trials", "errors", "calls", "input_tokens", "output_tokens", "cost_usd",
                  "reason"]].copy()
    show["created"] = pd.to_datetime(frame["created"], unit="s").dt.strftime("%Y-%m-%d %H:%M")
    show["cost_usd"] = show["cost_usd"].map(lambda v: usd(float(v)) if pd.notna(v) else "unknown")
    st.dataframe(show.iloc[::-1].rename(columns={"input_tokens": "input tokens", "output_tokens": "output tokens",
                                                 "cost_usd": "dollars"}), hide_index=True)
    resumable = frame[((frame["state"].isin(["interrupted", "cancelled", "failed"]))
                       | ((frame["status"] == "done") & (frame["errors"] > 0)))
                      & frame["owner"].map(sharing.controls).astype(bool)]  # only this browser's own
    if resumable.empty:
        return
    labels = {str(r.name): f"{r.name} ({r.state}, {r.trials} trials, {r.errors} errors)"
              for r in resumable.itertuples()}
    c1, c2, c3 = st.columns([4, 2, 1])
    name = pickers.select(c1, "Resume a sweep", list(labels), K + "resume", format_func=lambda n: labels.get(n, n),
                          help="runs the trials it is missing; calls already made come from the cache")
    retry = pickers.toggle(c2, "Also retry failed trials", K + "retry_errors")
    choice = State().choice
    if c3.button("Resume", key=K + "resume_go", icon=":material/play_arrow:", disabled=choice is None):
        row = frame[frame["name"] == name].iloc[0]
        try:
            from components.run.config import SweepConfig

            config = SweepConfig.from_stored(row["config"])
            jobs.start_sweep(owner_, config, config.load_tasks(), choice.api_key, retry_errors=bool(retry),
                             controller=sharing.browser_key())
            st.rerun()
        except (ValueError, OSError, LookupError) as exc:
            st.error(f"Cannot resume {md(name)}: {md(short(exc, (choice.api_key or '',)))}")


