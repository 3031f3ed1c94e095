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
from webapp.services.models import duration, speed
from webapp.session import Key, State
from webapp.session.keep import keep, restored
from webapp.ui import pickers
from webapp.ui.render import guard, md, short, thousands, usd

LENGTHS = [500, 1000, 2000, 4000, 8000, 16000, 32000, 64000, 128000]
POSITIONS = [0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0]
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
    State.exp_name,
    State.exp_max_usd,
    State.exp_concurrency,
    State.exp_retry_errors,
]
# the first grid offered: a paid model's, and the bundled model's (about 2 minutes on 2 cores: 18 calls of
# about 500 tokens at the speed the sidebar measures; the estimate below the grid gives this machine's figure)
FULL = {
    "lengths": [2000, 4000],
    "positions": [0.0, 0.25, 0.5, 0.75, 1.0],
    "strategies": ["baseline", "reprompt", "rr"],
    "n_tasks": 10,
}
SMALL = {"lengths": [500], "positions": [0.0, 0.5, 1.0], "strategies": ["baseline", "reprompt"], "n_tasks": 3}
PARAM_PRESETS = {
    "r": [200, 300, 500, 1000, 2000, 5000, 10000],
    "k": [1, 2, 3, 5, 8, 10],
    "c": [1000, 2000, 5000, 10000, 20000, 40000],
}


# --- the grid and its config ----------------------------------------------------------------------


def fitted_default(p, lengths: list[int]) -> int:
    """A parameter's paper default, or for r and c (tokens) half the shortest chosen length when the
    default would not fit: r = 10,000 on 2,000-token documents injects no reminder at all."""
    value = int(p.default)
    if p.name in ("r", "c") and lengths and value >= min(lengths):
        step = int(p.step or 1)
        value = max(int(p.minimum or step), min(lengths) // 2 // step * step)
    return value


def refit(taken: dict, lengths: list[int]) -> dict[str, tuple[int, int]]:
    """When the shortest length changes, r and c whose every chosen value no longer fits it (r >= the
    length injects no reminder: that arm equals baseline; c >= it makes one chunk) take the fitted default
    again. Returns {name: (old value, new value)} for what changed, for the page to say so."""
    state = State()
    shortest = min(lengths, default=0)
    if not shortest or state.exp_fitted_for == shortest:
        return {}
    first = state.exp_fitted_for is None
    state.exp_fitted_for = shortest
    if first:  # the page's first run: what is chosen (a default, a plan handed over) stays
        return {}
    changed = {}
    for name in ("r", "c"):
        key: Key = State.exp_param(name)
        values = [v for v in (key.value or []) if isinstance(v, int | float)]
        if name in taken and values and min(values) >= shortest:
            new = fitted_default(taken[name], lengths)
            key.value = [new]
            changed[name] = (int(min(values)), new)
    return changed


def apply_plan(state: State) -> None:
    """A grid Compare's planner handed over (strategies, parameters, lengths, positions, tasks): once."""
    plan = state.sweep_plan
    if not plan:
        return
    state.sweep_plan = None
    if plan.get("tasks"):  # a bundled task set by name (the Papers page's experiments)
        state.exp_source, state.exp_bundled = "Bundled", plan["tasks"]
    state.exp_strategies = plan["strategies"]
    for name, values in plan["params"].items():
        State.exp_param(name).value = values
    if plan.get("lengths"):
        state.exp_lengths = plan["lengths"]
    if plan.get("positions"):
        state.exp_positions = plan["positions"]
    state.exp_n_tasks = int(plan["n_tasks"])


def grid(n_available: int, small: bool = False) -> dict:
    """The grid's widgets. `small`: the sidebar's model is the bundled one (no key), which runs one call
    at a time on this machine: the first grid it offers is SMALL (18 trials, a few minutes), not 300."""
    first = State.exp_lengths.value is None
    shape = SMALL if small else FULL
    if first and small:
        State().exp_n_tasks = min(shape["n_tasks"], max(1, n_available))
    c1, c2 = st.columns(2)
    lengths = pickers.numbers(
        c1,
        "Document lengths (tokens)",
        LENGTHS,
        State.exp_lengths,
        shape["lengths"],
        integer=True,
        format_func=lambda v: f"{v:,}" if isinstance(v, int | float) else str(v),
        help="pick or type any length, e.g. 40000 or 40k",
    )
    positions = pickers.numbers(
        c2,
        "Answer positions (fraction of the document)",
        POSITIONS,
        State.exp_positions,
        shape["positions"],
        integer=False,
        format_func=lambda v: (
            f"{v:.0%}"
            if isinstance(v, float) and v <= 1
            else f"{v:,} tokens"
            if isinstance(v, int | float)
            else str(v)
        ),
        help="pick or type: up to 1 is a fraction of the length, above 1 tokens",
    )
    names = list(sweeps.STRATEGIES)
    strategies = pickers.multi(
        st,
        "Strategies",
        names,
        State.exp_strategies,
        default=shape["strategies"],
        format_func=lambda n: f"{sweeps.STRATEGIES[n].label} ({n})",
    )
    params = {}
    taken = {p.name: p for s in strategies for p in sweeps.STRATEGIES[s].params}
    refitted = refit(taken, lengths)
    if taken:
        cols = st.columns(max(3, len(taken)))
        for col, (name, p) in zip(cols, sorted(taken.items()), strict=False):
            key: Key = State.exp_param(name)
            if key.value is None:
                key.value = [fitted_default(p, lengths)]
            values = pickers.numbers(
                col,
                f"{name} ({p.unit})",
                PARAM_PRESETS.get(name, [p.default]),
                key,
                [fitted_default(p, lengths)],
                integer=True,
                bounds=(p.minimum, p.maximum),
                format_func=lambda v: f"{v:,}" if isinstance(v, int | float) else str(v),
                help=f"{p.help}; several values sweep it (as a list in the TOML)",
            )
            params[name] = values or [fitted_default(p, lengths)]
    for name, (was, now) in refitted.items():
        st.caption(
            f"{name} is now {now:,} tokens, to fit {min(lengths):,}-token documents (it was {was:,}: "
            f"{'no reminder would be injected' if name == 'r' else 'each document would be one chunk'}). "
            "Type another value to change it."
        )
    longest = max(lengths, default=0)
    for name, what in (("r", "no reminder is injected"), ("c", "each document is a single chunk")):
        if name in params and longest and min(params[name]) >= longest:
            st.caption(
                f"{name} = {min(params[name]):,} is not shorter than the longest document ({longest:,} tokens): "
                f"{what}. The paper's defaults are for 10k-80k-token documents."
            )
    c3, c4, c5 = st.columns(3)
    state = State()
    if not isinstance(state.exp_n_tasks, int) or state.exp_n_tasks < 1:
        state.exp_n_tasks = min(10, max(1, n_available))
    elif state.exp_n_tasks > max(1, n_available):  # e.g. a plan asked for more: as many as the set has
        state.exp_n_tasks = max(1, n_available)
    n_tasks = c3.number_input(
        "Tasks (the first n of the set)",
        min_value=1,
        max_value=max(1, n_available),
        key=State.exp_n_tasks.key,
    )
    concurrency = c4.slider("Parallel calls", 1, 16, key=State.exp_concurrency.key)
    max_usd = c5.number_input(
        "Budget (dollars, 0 = none)",
        min_value=0.0,
        step=0.5,
        key=State.exp_max_usd.key,
        help="the sweep stops when this much has been spent",
    )
    return {
        "lengths": lengths,
        "positions": positions,
        "strategies": strategies,
        "params": params,
        "n_tasks": int(n_tasks),
        "concurrency": int(concurrency),
        "max_usd": float(max_usd),
    }


ESTIMATE_ONLY = ("openai", "gpt-4o-mini")  # what a sweep is priced as before a model is chosen


def models_box(choice) -> list[dict]:
    state = State()
    if choice is not None:
        provider, base_url = choice.spec.provider, choice.spec.base_url
        chosen = [choice.spec.provider, choice.spec.model]
        if state.exp_models_for != chosen or not state.exp_models:
            state.exp_models = choice.spec.model  # the sidebar's model, again whenever the sidebar changes
            state.exp_models_for = chosen
    else:
        usable = state.provider in ("openai", "anthropic") and state.model.strip()
        provider = state.provider if usable else ESTIMATE_ONLY[0]
        base_url = None
        if not state.exp_models:
            state.exp_models = state.model.strip() if usable else ESTIMATE_ONLY[1]
        st.info(
            f"Choose a provider and model in the sidebar (and enter a key) to run a sweep. Until then the "
            f"estimate prices the sweep as {provider} models.",
            icon=":material/key_off:",
        )
    text = st.text_area(
        f"Models (one per line; provider {provider}"
        + (f" at {base_url}" if base_url else "")
        + ", key from the sidebar)",
        key=State.exp_models.key,
        height=80,
    )
    out = []
    for line in dict.fromkeys(x.strip() for x in text.splitlines()):
        if line:
            out.append(
                {k: v for k, v in {"provider": provider, "model": line, "base_url": base_url}.items() if v}
            )
    return out


def local_time(est: dict, models: list[dict]) -> str:
    """'about 2 h 10 min' for the local models' share of the sweep, from the model's measured speed here."""
    local = [m for m in models if m.get("provider") == "local"]
    if not local or not models:
        return ""
    try:
        measured = speed(local[0]["model"], sharing.load_runs(in_url=False)[0])
    except Exception:  # noqa: BLE001 - no measurement
        measured = None
    if measured is None:
        return (
            "The local model runs one call at a time; its speed on this machine is not measured yet (a run in "
            "the Playground measures it). Calls already cached cost no time."
        )
    seconds = measured.seconds(est["input_tokens"] * len(local) / len(models))
    if not measured.here:
        return (
            f"The local model runs one call at a time. Its speed on this machine is not measured yet (a run in "
            f"the Playground measures it); at the speed of the machine that made the shipped runs, "
            f"{measured.text()}, this sweep would take about {duration(seconds)}."
        )
    return (
        f"The local model runs one call at a time at {measured.text()}: about {duration(seconds)} for this "
        "sweep, less for calls already cached."
    )


def show_estimate(est: dict, max_usd: float = 0.0, models: list[dict] = ()) -> None:
    cols = st.columns(5)
    cols[0].metric("Trials", thousands(est["trials"]))
    cols[1].metric("LLM calls", thousands(est["calls"]))
    cols[2].metric("Input tokens", thousands(est["input_tokens"]))
    cols[3].metric("Output tokens", thousands(est["output_tokens"]))
    cols[4].metric(
        "Batch cost (est.)" if est.get("batch") else "Estimated cost",
        "unknown" if est["usd"] is None else usd(est["usd"]),
        help="at the providers' batch prices: half the list price" if est.get("batch") else None,
    )
    note = est["note"]
    if est["unpriced"]:
        note += f"; no price for {', '.join(est['unpriced'])}"
    st.caption(f"Before running: {note}. Calls already in the run store's cache cost nothing.")
    slow = local_time(est, list(models))
    if slow:
        st.info(slow, icon=":material/timer:")
    if max_usd > 0 and est["usd"] and est["usd"] > max_usd:
        st.warning(
            f"The budget ({usd(max_usd)}) is below the estimate ({usd(est['usd'])}): the sweep will stop "
            f"after about {max_usd / est['usd']:.0%} of its trials. Raise the budget, or set it to 0 "
            "for none.",
            icon=":material/savings:",
        )


# --- the page ----------------------------------------------------------------------------------------


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
