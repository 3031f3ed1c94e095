"""Experiments: choose a task set and a grid, see its cost, run it in the background, resume it, and take
any sweep out of the app as its TOML and `litm sweep` command.

The sweep runs in a thread owned by the server (services/jobs.py), not by this browser session; its
trials go to the run store as they finish, so a refreshed page finds the job again (the page URL
carries this workspace's token, ?run=...) and Results can read the trials at any time. API keys are
passed to the runner in memory only.
"""

from __future__ import annotations

import json
import time

import streamlit as st

from webapp import session
from webapp.experiments import scoring
from webapp.experiments.estimate import models_box, show_estimate
from webapp.experiments.grid import PARAM_PRESETS, apply_plan, grid
from webapp.experiments.panels import (
    config_panel,
    finished_links,
    live_bars,
    past_panel,
    past_sweeps,
    progress_panel,
)
from webapp.experiments.tasks import task_source
from webapp.services import jobs, sharing, sweeps
from webapp.session import State
from webapp.session.keep import keep, restored
from webapp.ui.render import guard, md, short

MODES = {"live": "Live calls", "batch": "Provider batch (half price, results within 24 h)"}
KEPT = [
    State.exp_source,
    State.exp_bundled,
    State.exp_kind,
    State.exp_gen_n,
    State.exp_gen_seed,
    State.exp_lengths,
    State.exp_positions,
    State.exp_strategies,
    State.exp_n_tasks,
    State.exp_models,
    State.exp_models_for,
    State.exp_mode,
    State.exp_samples,
    State.exp_temperature,
    State.exp_seed,
    State.exp_judge,
    State.exp_judge_model,
    State.exp_name,
    State.exp_max_usd,
    State.exp_concurrency,
    State.exp_retry_errors,
]


def main() -> None:
    state = session.start("experiments")
    st.title("Experiments")
    st.write(
        "Run a sweep: tasks × document lengths × answer positions × strategies × models. It runs on the "
        "server in the background (you can leave or refresh this page) and every trial lands in the run "
        "store, where **Results** reads it."
    )
    me = sharing.workspace()
    params_kept = [State.exp_param(p) for p in PARAM_PRESETS]
    keep("experiments", me, [*KEPT, *params_kept])  # the settings survive a refresh (same ?run= token)
    if state.sweep_plan:
        asked = int(state.sweep_plan["n_tasks"])
        apply_plan(state)
        st.info(
            f"The planner's grid is filled in below: its strategies, parameters, lengths and positions, and "
            f"{asked:,} tasks (or as many as the task set has).",
            icon=":material/tune:",
        )
        restored("experiments", me)  # the plan's values win over the ones kept for a refresh
    with guard("the sweeps in progress"):
        progress_panel(me)
    st.header("1 · Tasks")
    label, tasks, path = task_source()
    if tasks:
        st.caption(f"{len(tasks):,} tasks available.")
    st.header("2 · Grid")
    choice = state.choice
    g = grid(len(tasks), small=choice is None or choice.spec.provider == "local")
    st.header("3 · Models")
    models = models_box(choice)
    g.update(
        scoring.options(
            models[0]["provider"] if models else "", models[0].get("base_url") if models else None
        )
    )
    g["mode"] = st.radio(
        "Send the calls as",
        list(MODES),
        format_func=MODES.get,
        key=State.exp_mode.key,
        horizontal=True,
        help="batch: OpenAI's or Anthropic's batch interface; the sweep polls in the background "
        "and, after a restart, resumes the same batches (never submits twice)",
    )
    if not state.exp_name or state.exp_fresh_name:
        state.exp_name, state.exp_fresh_name = f"sweep {time.strftime('%Y-%m-%d %H:%M:%S')}", False
    name = st.text_input(
        "Sweep name",
        key=State.exp_name.key,
        help="a sweep of yours with the same name is resumed: its missing trials are added; a "
        "name someone else's sweep has is refused",
    )
    st.header("4 · Cost, then run")
    if not tasks:
        st.info("Choose a task set first.")
        past_panel(me)
        return
    write_to = None if path else sweeps.task_file(label, tasks)
    config = sweeps.config_dict(name.strip(), str(path or write_to), g, models)
    try:
        sweep = sweeps.SweepConfig.from_dict(config)
    except ValueError as exc:
        st.error(short(exc))
        past_panel(me)
        return
    token = path or f"{label}:{len(tasks)}:{write_to.name}"
    with guard("the estimate"):
        show_estimate(
            sweeps.estimate_for(json.dumps(config, sort_keys=True), token, tasks), g["max_usd"], models
        )
    past = past_sweeps(me)
    if not past.empty and name.strip() in set(past["name"]):
        st.info(f"A sweep named “{md(name.strip())}” exists: running adds its missing trials (a resume).")
    if st.button(
        "Run the sweep",
        type="primary",
        key=State.exp_run.key,
        disabled=choice is None,
        icon=":material/play_arrow:",
    ):
        try:
            if write_to is not None and not write_to.exists():
                sweeps.write_tasks(tasks, write_to)
            jobs.start_sweep(me, sweep, tasks, choice.api_key, controller=sharing.browser_key())
            state.exp_fresh_name = True  # the next sweep gets a fresh name
            st.rerun()
        except (ValueError, OSError, LookupError) as exc:
            st.error(f"Cannot start: {md(short(exc, (getattr(choice, 'api_key', '') or '',)))}")
    with st.expander("This sweep as a TOML file and a `litm sweep` command"):
        if write_to is not None and not write_to.exists():
            st.caption(
                "Its tasks are written next to the run store when it runs (or when you run it here once)."
            )
        config_panel(json.dumps(sweep.to_dict()), name.strip(), "new")
    if jobs.running_for(me):
        live_bars(me)
    else:
        finished_links(me)
    past_panel(me)


with guard("the Experiments page"):
    main()
