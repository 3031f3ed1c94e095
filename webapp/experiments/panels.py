"""The Experiments page's sweep panels: this browser's running sweeps (live progress, cancel), the past
sweeps of the run store (resume), and any sweep's TOML and `litm sweep` command."""

from __future__ import annotations

import time

import pandas as pd
import streamlit as st

from webapp.services import jobs, sharing, stores, sweeps
from webapp.services.names import count
from webapp.session import State
from webapp.ui import pickers
from webapp.ui.render import guard, md, short, usd

RESULTS, COMPARE = "results/page.py", "compare/page.py"


def sent_text(job: jobs.Job) -> str:
    """'2 calls sent'; for a running local sweep, how many wait in the local model's queue: '2 calls
    queued for the local model (2 waiting or running there, one at a time)', never 'sent' alone for
    calls that have not reached the model."""
    sent = count(job.sent, "call")
    if not (job.local and job.running and job.sent):
        return f"{sent} sent"
    waiting = jobs.local_waiting()
    if not waiting:
        return f"{sent} sent"
    return f"{sent} queued for the local model ({waiting:,} waiting or running there, one at a time)"


def job_line(job: jobs.Job) -> None:
    frac = min(1.0, job.done / job.total) if job.total else 0.0
    elapsed = (job.finished or time.time()) - job.started
    text = (
        f"**{md(job.label)}** · {job.state} · {job.done:,}/{job.total:,} trials · errors {job.errors:,} · "
        f"spent {usd(job.usd)} · {sent_text(job)}"
        + (f" ({job.requests:,} HTTP requests)" if job.requests > job.sent else "")
        + f", {job.cached:,} from cache · {elapsed:.0f} s"
        + (f" · {md(job.note)}" if job.running and job.note else "")
    )
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
            c2.button(
                "Cancel",
                key=State.exp_cancel(job.id).key,
                on_click=jobs.cancel,
                args=(owner_, job.id, me),
                disabled=job.cancel.is_set(),
                icon=":material/stop_circle:",
            )
        else:
            c2.button(
                "Dismiss", key=State.exp_dismiss(job.id).key, on_click=jobs.forget, args=(owner_, job.id)
            )
    finished_links(owner_)


def finished_links(owner_: str, where=st) -> None:
    """Links to the Results and Compare views of this browser's newest finished sweep: at the top of the
    page and again where its Run button was (the user is there when it ends)."""
    done = [j for j in jobs.jobs_for(owner_) if not j.running and j.state == "finished"]
    if not done:
        return
    query = {"sweep": stores.sweep_key(done[0].sweep_id)} if done[0].sweep_id is not None else None
    try:
        c1, c2 = where.columns(2)
        c1.page_link(
            RESULTS,
            label=f"See the results of {md(done[0].label)}",
            icon=":material/monitoring:",
            query_params=query,
        )
        c2.page_link(COMPARE, label="Compare its arms", icon=":material/compare_arrows:", query_params=query)
    except Exception:  # the page runs outside the app's navigation
        where.caption("See the results on the Results page, and compare its arms on Compare.")


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
        st.progress(
            frac,
            text=f"{md(job.label)}: {job.done:,}/{job.total:,} trials · errors {job.errors:,} · "
            f"spent {usd(job.usd)} (cancel at the top of the page)",
        )


def progress_panel(owner_: str) -> None:
    if jobs.running_for(owner_):
        live_panel(owner_)
    else:
        jobs_panel(owner_)


def past_sweeps(owner_: str) -> pd.DataFrame:
    """The user store's sweeps this browser may see (never another browser's), with their state."""
    frame = stores.user_sweeps()
    if frame.empty:
        return frame
    viewer = sharing.viewer()
    frame = frame[[viewer.sees(o) for o in frame["owner"]]]
    if frame.empty:
        return frame
    mine = {j.label for j in jobs.running_for(owner_)}
    elsewhere = jobs.running_names(str(stores.user_db())) - mine
    frame = frame[~frame["name"].isin(elsewhere)].copy()  # never show another session's run in progress
    frame["state"] = [
        ("running (this session)" if n in mine else "interrupted")
        if s == "running"
        else sweeps.STATES.get(str(s), str(s))
        for n, s in zip(frame["name"], frame["status"], strict=True)
    ]
    return frame


def config_panel(config: str, name: str, where: str) -> None:
    """A sweep's TOML and the command that runs it, to copy or download."""
    try:
        text = sweeps.toml_text(config)
    except ValueError as exc:
        st.caption(f"This sweep's config cannot be written as TOML: {md(short(exc))}")
        return
    st.caption(
        "Save it as the file below and run it with `litm` on this server (it resumes: calls already "
        "made come from the cache):"
    )
    st.code(sweeps.command(name), language="bash")
    st.code(text, language="toml")
    st.download_button(
        f"Download {sweeps.file_name(name)}",
        text.encode("utf-8"),
        file_name=sweeps.file_name(name),
        mime="application/toml",
        key=State.exp_toml(where).key,
        icon=":material/download:",
        on_click="ignore",
    )


def past_panel(owner_: str) -> None:
    frame = past_sweeps(owner_)
    st.subheader("Past sweeps")
    if frame.empty:
        st.caption(f"No sweeps yet in {md(stores.user_db())}.")
        return
    st.dataframe(sweeps.past_frame(frame), hide_index=True, width="stretch")
    names = list(frame["name"].iloc[::-1])
    with st.expander("A sweep's TOML and `litm sweep` command"):
        name = pickers.select(st, "Sweep", names, State.exp_config)
        config_panel(str(frame[frame["name"] == name]["config"].iloc[0]), name, "past")
    resumable = frame[
        (
            (frame["state"].isin(["interrupted", "cancelled", "failed"]))
            | ((frame["status"] == "done") & (frame["errors"] > 0))
        )
        & frame["owner"].map(sharing.viewer().controls).astype(bool)
    ]  # only this browser's own
    if resumable.empty:
        return
    labels = {
        str(r.name): f"{r.name} ({r.state}, {int(r.trials):,} trials, {int(r.errors):,} errors)"
        for r in resumable.itertuples()
    }
    c1, c2, c3 = st.columns([4, 2, 1])
    name = pickers.select(
        c1,
        "Resume a sweep",
        list(labels),
        State.exp_resume,
        format_func=lambda n: labels.get(n, n),
        help="runs the trials it is missing; calls already made come from the cache",
    )
    retry = pickers.toggle(c2, "Also retry failed trials", State.exp_retry_errors)
    choice = State().choice
    if c3.button(
        "Resume", key=State.exp_resume_go.key, icon=":material/play_arrow:", disabled=choice is None
    ):
        row = frame[frame["name"] == name].iloc[0]
        try:
            config, tasks = sweeps.load_stored(row["config"])
            jobs.start_sweep(
                owner_,
                config,
                tasks,
                choice.api_key,
                retry_errors=bool(retry),
                controller=sharing.browser_key(),
            )
            st.rerun()
        except (ValueError, OSError, LookupError) as exc:
            st.error(f"Cannot resume {md(name)}: {md(short(exc, (choice.api_key or '',)))}")
