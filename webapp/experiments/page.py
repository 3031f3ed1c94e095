"""Experiments: choose a task set and a grid, see its cost, run it in the background, resume it.

The sweep runs in a thread owned by the server (webapp/jobs.py), not by this browser session; its
trials go to the run store as they finish, so a refreshed page finds the job again (the page URL
carries this browser's token, ?run=...) and Results can read the trials at any time. API keys are
passed to the runner in memory only.
"""

from __future__ import annotations

import json
import time

import streamlit as st

from components.strategies import STRATEGIES
from webapp.experiments.sweeps import live_bars, past_panel, past_sweeps, progress_panel
from webapp.experiments.tasks import task_file, task_source
from webapp.services import jobs, sharing
from webapp.session import keep as pagestate
from webapp.session.state import State
from webapp.ui import pickers
from webapp.ui.render import guard, md, short, thousands, usd

K = "exp_"
LENGTHS = [500, 1000, 2000, 4000, 8000, 16000, 32000, 64000, 128000]
POSITIONS = [0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0]
DEFAULTS = {K + "gen_n": 20, K + "gen_seed": 0, K + "concurrency": 4, K + "max_usd": 1.0}
MODES = {"live": "Live calls", "batch": "Provider batch (half price, results within 24 h)"}


# --- this browser's jobs ----------------------------------------------------------------------

def owner() -> str:
    """This browser's workspace token (webapp/sharing.py): in the session and the URL (?run=)."""
    return sharing.workspace()


def settings_keys() -> list[str]:
    """The page's settings (State's exp_ widget keys and the parameter inputs), not its buttons."""
    fixed = [k.key for k in State.keys() if k.widget and k.key.startswith(K) and k.key != K + "resume"]
    return [*fixed, K + "models_for", *(k for k in st.session_state if str(k).startswith(K + "param_"))]


# --- the grid and its config ----------------------------------------------------------------------

def fitted_default(p, lengths: list[int]) -> int:
    """A parameter's paper default, or for r and c (tokens) half the shortest chosen length when the
    default would not fit: r = 10,000 on 2,000-token documents injects no reminder at all."""
    value = int(p.default)
    if p.name in ("r", "c") and lengths and value >= min(lengths):
        step = int(p.step or 1)
        value = max(int(p.minimum or step), min(lengths) // 2 // step * step)
    return value


def grid(n_available: int) -> dict:
    c1, c2 = st.columns(2)
    lengths = pickers.numbers(c1, "Document lengths (tokens)", LENGTHS, K + "lengths", [2000, 4000], integer=True,
                              format_func=lambda v: f"{v:,}" if isinstance(v, int | float) else str(v),
                              help="pick or type any length, e.g. 40000 or 40k")
    positions = pickers.numbers(c2, "Answer positions (fraction of the document)", POSITIONS, K + "positions",
                                [0.0, 0.25, 0.5, 0.75, 1.0], integer=False,
                                format_func=lambda v: f"{v:.0%}" if isinstance(v, float) and v <= 1 else
                                f"{v:,} tokens" if isinstance(v, int | float) else str(v),
                                help="pick or type: up to 1 is a fraction of the length, above 1 tokens")
    names = list(STRATEGIES)
    strategies = pickers.multi(st, "Strategies", names, K + "strategies", default=["baseline", "reprompt", "rr"],
                               format_func=lambda n: f"{STRATEGIES[n].label} ({n})")
    params = {}
    taken = {p.name: p for s in strategies for p in STRATEGIES[s].params}
    if taken:
        cols = st.columns(max(3, len(taken)))
        for col, (name, p) in zip(cols, sorted(taken.items()), strict=False):
            key = f"{K}param_{name}"
            if key not in st.session_state:
                st.session_state[key] = fitted_default(p, lengths)
            params[name] = int(col.number_input(f"{name} ({p.unit})", min_value=p.minimum, max_value=p.maximum,
                                                step=p.step, key=key, help=p.help))
    longest = max(lengths, default=0)
    for name, what in (("r", "no reminder is injected"), ("c", "each document is a single chunk")):
        if name in params and longest and params[name] >= longest:
            st.caption(f"{name} = {params[name]:,} is not shorter than the longest document ({longest:,} tokens): "
                       f"{what}. The paper's defaults are for 10k-80k-token documents.")
    c3, c4, c5 = st.columns(3)
    ss = st.session_state
    if not isinstance(ss.get(K + "n_tasks"), int) or not 1 <= ss[K + "n_tasks"] <= max(1, n_available):
        ss[K + "n_tasks"] = min(10, max(1, n_available))
    n_tasks = c3.number_input("Tasks (the first n of the set)", min_value=1, max_value=max(1, n_available),
                              key=K + "n_tasks")
    concurrency = c4.slider("Parallel calls", 1, 16, key=K + "concurrency")
    max_usd = c5.number_input("Budget (dollars, 0 = none)", min_value=0.0, step=0.5, key=K + "max_usd",
                              help="the sweep stops when this much has been spent")
    return {"lengths": lengths, "positions": positions, "strategies": strategies, "params": params,
            "n_tasks": int(n_tasks), "concurrency": int(concurrency), "max_usd": float(max_usd)}


ESTIMATE_ONLY = ("openai", "gpt-4o-mini")  # what a sweep is priced as before a model is chosen


def models_box(choice) -> list[dict]:
    ss = st.session_state
    if choice is not None:
        provider, base_url = choice.spec.provider, choice.spec.base_url
        chosen = [choice.spec.provider, choice.spec.model]
        if ss.get(K + "models_for") != chosen or not ss.get(K + "models"):
            ss[K + "models"] = choice.spec.model  # the sidebar's model, again whenever the sidebar changes
            ss[K + "models_for"] = chosen
    else:
        state = State()
        usable = state.provider in ("openai", "anthropic") and state.model.strip()
        provider = state.provider if usable else ESTIMATE_ONLY[0]
        base_url = None
        if not ss.get(K + "models"):
            ss[K + "models"] = state.model.strip() if usable else ESTIMATE_ONLY[1]
        st.info(f"Choose a provider and model in the sidebar (and enter a key) to run a sweep. Until then the "
                f"estimate prices the sweep as {provider} models.", icon=":material/key_off:")
    text = st.text_area(f"Models (one per line; provider {provider}"
                        + (f" at {base_url}" if base_url else "") + ", key from the sidebar)",
                        key=K + "models", height=80)
    out = []
    for line in dict.fromkeys(x.strip() for x in text.splitlines()):
        if line:
            out.append({k: v for k, v in {"provider": provider, "model": line, "base_url": base_url}.items() if v})
    return out


def config_dict(name: str, tasks_path: str, g: dict, models: list[dict]) -> dict:
    d = {"name": name, "tasks": tasks_path, "n_tasks": g["n_tasks"], "lengths": g["lengths"],
         "positions": g["positions"], "strategies": g["strategies"], "params": g["params"],
         "concurrency": g["concurrency"], "models": models}
    if g.get("mode", "live") != "live":
        d["mode"] = g["mode"]
    if g["max_usd"] > 0:
        d["budget"] = {"max_usd": g["max_usd"]}
    return d


@st.cache_data(show_spinner="Estimating calls, tokens and cost…", max_entries=16)
def estimate_for(config_json: str, tasks_token: str, _tasks: list) -> dict:
    from components.run.config import SweepConfig
    from components.run.estimate import estimate

    cfg = SweepConfig.from_dict(json.loads(config_json))
    est = estimate(cfg, tasks=_tasks[: cfg.n_tasks] if cfg.n_tasks else _tasks)
    return {"trials": est.trials, "calls": est.calls, "input_tokens": est.input_tokens,
            "output_tokens": est.output_tokens, "usd": est.usd, "unpriced": list(est.unpriced), "note": est.note,
            "batch": est.batch}


LOCAL_TOKENS_PER_S = 170  # the bundled model reads about 160-180 prompt tokens/s on 2 cores (README)


def local_time(est: dict, models: list[dict]) -> str:
    """'about 2 h 10 min' for the local models' share of the sweep, or '' when none is local."""
    local = sum(m.get("provider") == "local" for m in models)
    if not local or not models:
        return ""
    seconds = est["input_tokens"] * local / len(models) / LOCAL_TOKENS_PER_S
    h, m = int(seconds // 3600), int(seconds % 3600 // 60)
    text = f"{h} h {m} min" if h else f"{max(1, m)} min"
    return (f"The local model runs one call at a time at about {LOCAL_TOKENS_PER_S} prompt tokens/s: about {text} "
            "on an idle machine (two to four times that on a busy one), less for calls already cached.")


def show_estimate(est: dict, max_usd: float = 0.0, models: list[dict] = ()) -> None:
    cols = st.columns(5)
    cols[0].metric("Trials", thousands(est["trials"]))
    cols[1].metric("LLM calls", thousands(est["calls"]))
    cols[2].metric("Input tokens", thousands(est["input_tokens"]))
    cols[3].metric("Output tokens", thousands(est["output_tokens"]))
    cols[4].metric("Batch cost (est.)" if est.get("batch") else "Estimated cost",
                   "unknown" if est["usd"] is None else usd(est["usd"]),
                   help="at the providers' batch prices: half the list price" if est.get("batch") else None)
    note = est["note"]
    if est["unpriced"]:
        note += f"; no price for {', '.join(est['unpriced'])}"
    st.caption(f"Before running: {note}. Calls already in the run store's cache cost nothing.")
    slow = local_time(est, list(models))
    if slow:
        st.info(slow, icon=":material/timer:")
    if max_usd > 0 and est["usd"] and est["usd"] > max_usd:
        st.warning(f"The budget ({usd(max_usd)}) is below the estimate ({usd(est['usd'])}): the sweep will stop "
                   f"after about {max_usd / est['usd']:.0%} of its trials. Raise the budget, or set it to 0 "
                   "for none.", icon=":material/savings:")


# --- the page ----------------------------------------------------------------------------------------

def main() -> None:
    st.title("Experiments")
    st.write("Run a sweep: tasks × document lengths × answer positions × strategies × models. It runs on the "
             "server in the background (you can leave or refresh this page) and every trial lands in the run "
             "store, where **Results** reads it.")
    me = owner()
    pagestate.keep("experiments", me, settings_keys())  # the settings survive a refresh (same ?run= token)
    for key, value in DEFAULTS.items():  # (app.py sets them through State.init; a page run alone does not)
        st.session_state.setdefault(key, value)
    with guard("the sweeps in progress"):
        progress_panel(me)
    st.header("1 · Tasks")
    label, tasks, path = task_source()
    if tasks:
        st.caption(f"{len(tasks):,} tasks available.")
    st.header("2 · Grid")
    g = grid(len(tasks))
    st.header("3 · Models")
    choice = State().choice
    models = models_box(choice)
    g["mode"] = st.radio("Send the calls as", list(MODES), format_func=MODES.get, key=K + "mode", horizontal=True,
                         help="batch: OpenAI's or Anthropic's batch interface; the sweep polls in the background "
                              "and, after a restart, resumes the same batches (never submits twice)")
    ss = st.session_state
    if not ss.get(K + "name") or ss.pop(K + "_fresh_name", False):
        ss[K + "name"] = f"sweep {time.strftime('%Y-%m-%d %H:%M:%S')}"
    name = st.text_input("Sweep name", key=K + "name",
                         help="a sweep with the same name is resumed: its missing trials are added")
    st.header("4 · Cost, then run")
    if not tasks:
        st.info("Choose a task set first.")
        past_panel(me)
        return
    write_to = None if path else task_file(label, tasks)
    config = config_dict(name.strip(), str(path or write_to), g, models)
    try:
        from components.run.config import SweepConfig

        sweep = SweepConfig.from_dict(config)
    except ValueError as exc:
        st.error(short(exc))
        past_panel(me)
        return
    token = path or f"{label}:{len(tasks)}:{write_to.name}"
    with guard("the estimate"):
        show_estimate(estimate_for(json.dumps(config, sort_keys=True), token, tasks), g["max_usd"], models)
    past = past_sweeps(me)
    if not past.empty and name.strip() in set(past["name"]):
        st.info(f"A sweep named “{md(name.strip())}” exists: running adds its missing trials (a resume).")
    if st.button("Run the sweep", type="primary", key=K + "run", disabled=choice is None,
                 icon=":material/play_arrow:"):
        try:
            if write_to is not None and not write_to.exists():
                from components.tasks.importers import write_tasks

                write_tasks(tasks, write_to)
            jobs.start_sweep(me, sweep, tasks, choice.api_key, controller=sharing.browser_key())
            ss[K + "_fresh_name"] = True  # the next sweep gets a fresh name
            st.rerun()
        except (ValueError, OSError, LookupError) as exc:
            st.error(f"Cannot start: {md(short(exc, (getattr(choice, 'api_key', '') or '',)))}")
    if jobs.running_for(me):
        live_bars(me)
    past_panel(me)


with guard("the Experiments page"):
    main()
