"""Experiments: choose a task set and a grid, see its cost, run it in the background, resume it.

The sweep runs in a thread owned by the server (webapp/jobs.py), not by this browser session; its
trials go to the run store as they finish, so a refreshed page finds the job again (the page URL
carries this browser's token, ?run=...) and Results can read the trials at any time. API keys are
passed to the runner in memory only.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from pathlib import Path

import pandas as pd
import streamlit as st

from components.strategies import STRATEGIES
from webapp import jobs, pickers
from webapp.render import guard, short, thousands, usd
from webapp.state import State

K = "exp_"
LENGTHS = [500, 1000, 2000, 4000, 8000, 16000, 32000, 64000, 128000]
POSITIONS = [0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0]
SOURCES = ["Bundled", "Generated", "Upload"]
TOKEN_RE = re.compile(r"^[0-9a-f]{16}$")
DEFAULTS = {K + "gen_n": 20, K + "gen_seed": 0, K + "concurrency": 4, K + "max_usd": 1.0}
PARAM_HELP = {"r": "reprompt every r tokens", "k": "pages retrieved in stage 1", "c": "chunk size in tokens"}


# --- this browser's jobs ----------------------------------------------------------------------

def owner() -> str:
    """This browser's token in the job registry, kept in the session and the URL (?run=) so that a
    refreshed page (a new session) finds its running sweeps again."""
    state = State()
    given = st.query_params.get("run", "")
    if not state.sweep_owner:
        state.sweep_owner = given if TOKEN_RE.match(given or "") else jobs.new_owner()
    if given != state.sweep_owner:
        st.query_params["run"] = state.sweep_owner
    return state.sweep_owner


# --- task sets ----------------------------------------------------------------------------------

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
    from components.tasks.importers import parse_tasks_bytes

    return parse_tasks_bytes(name, data)


def task_source() -> tuple[str, list, str | None]:
    """(label, tasks, path of an existing task file or None: the tasks are written when a run starts)."""
    source = pickers.radio(st, "Task set", SOURCES, K + "source", horizontal=True,
                           help="bundled task files, tasks generated from a seed, or your own file")
    if source == "Bundled":
        try:
            sets = bundled_sets()
        except (ImportError, OSError, ValueError) as exc:
            st.info(f"No bundled task sets in this build ({type(exc).__name__}).")
            return "", [], None
        if not sets:
            st.info("No bundled task sets in this build: generate tasks or upload a file.")
            return "", [], None
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
            st.error(short(exc))
            return "", [], None
        return f"{kind}-n{int(n)}-seed{int(seed)}", tasks, None
    file = st.file_uploader("Task file", type=["jsonl", "gz", "csv", "json"], key=K + "upload",
                            help="Lost in the Middle QA or KV JSONL (.gz), our JSONL, or CSV "
                                 "(question, answers, passages)")
    if file is None:
        st.caption("Upload a task file to use it.")
        return "", [], None
    ts = uploaded(file.name, file.getvalue())
    show_row_errors(ts.errors)
    if not ts.tasks:
        st.error(f"No task could be read from {file.name}.")
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


# --- the grid and its config ----------------------------------------------------------------------

def sidebar_choice():
    return State().choice


def grid(n_available: int) -> dict:
    c1, c2 = st.columns(2)
    lengths = pickers.multi(c1, "Document lengths (tokens)", LENGTHS, K + "lengths", default=[2000, 4000],
                            format_func=lambda v: f"{v:,}")
    positions = pickers.multi(c2, "Answer positions (fraction of the document)", POSITIONS, K + "positions",
                              default=[0.0, 0.25, 0.5, 0.75, 1.0], format_func=lambda v: f"{v:.0%}")
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
                st.session_state[key] = int(p.default)
            params[name] = int(col.number_input(f"{name} ({p.unit})", min_value=1, step=max(1, p.default // 10 or 1),
                                                key=key, help=p.help or PARAM_HELP.get(name)))
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
        ss.setdefault(K + "models", choice.spec.model)
        if not ss.get(K + "models"):
            ss[K + "models"] = choice.spec.model
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
            "output_tokens": est.output_tokens, "usd": est.usd, "unpriced": list(est.unpriced), "note": est.note}


def show_estimate(est: dict) -> None:
    cols = st.columns(5)
    cols[0].metric("Trials", thousands(est["trials"]))
    cols[1].metric("LLM calls", thousands(est["calls"]))
    cols[2].metric("Input tokens", thousands(est["input_tokens"]))
    cols[3].metric("Output tokens", thousands(est["output_tokens"]))
    cols[4].metric("Estimated cost", "unknown" if est["usd"] is None else usd(est["usd"]))
    note = est["note"]
    if est["unpriced"]:
        note += f"; no price for {', '.join(est['unpriced'])}"
    st.caption(f"Before running: {note}. Calls already in the run store's cache cost nothing.")


# --- running ----------------------------------------------------------------------------------------

def start(owner_: str, config: dict, tasks: list, write_to: Path | None, retry_errors: bool = False) -> None:
    from components.run.config import SweepConfig
    from components.run.plan import plan

    if write_to is not None and not write_to.exists():
        from components.tasks.importers import write_tasks

        write_tasks(tasks, write_to)
    cfg = SweepConfig.from_dict(config)
    choice = sidebar_choice()
    test_provider = State().test_provider
    if choice is None and test_provider is None:
        raise ValueError("no model to call: choose a provider and model in the sidebar")
    api_keys = {}
    if choice is not None and choice.api_key:
        api_keys = {m.provider: choice.api_key for m in cfg.models}  # in memory only
    providers = {m.label: test_provider for m in cfg.models} if test_provider is not None else None
    db = jobs.user_db()
    total = len(plan(cfg, tasks[: cfg.n_tasks] if cfg.n_tasks else tasks))

    def work(job: jobs.Job):
        from components.run.runner import run_sweep
        from components.run.store import RunStore

        store = RunStore(db)
        try:
            summary = run_sweep(cfg, store, progress=job.update, cancel=job.cancel, api_keys=api_keys,
                                retry_errors=retry_errors, providers=providers)
            job.update(done=summary.done, total=summary.total, errors=summary.errors, usd=summary.spend_usd,
                       sweep_id=summary.sweep_id)
            return summary
        finally:
            store.close()

    jobs.start(owner_, cfg.name, str(db), work, total=total)


def job_line(job: jobs.Job) -> None:
    frac = min(1.0, job.done / job.total) if job.total else 0.0
    elapsed = (job.finished or time.time()) - job.started
    text = (f"**{job.label}** · {job.state} · {job.done:,}/{job.total:,} trials · errors {job.errors:,} · "
            f"spent {usd(job.usd)} · {job.sent:,} calls sent, {job.cached:,} from cache · {elapsed:.0f} s")
    st.progress(frac, text=text)
    if job.failure:
        st.error(f"The sweep stopped: {short(job.failure)}")
    summary = job.summary
    if summary is not None and getattr(summary, "reason", ""):
        st.caption(f"{summary.status}: {summary.reason}")


def jobs_panel(owner_: str) -> None:
    mine = jobs.jobs_for(owner_)
    if not mine:
        return
    st.subheader("Your sweeps in this session")
    for job in mine[:5]:
        c1, c2 = st.columns([6, 1])
        with c1:
            job_line(job)
        if job.running:
            c2.button("Cancel", key=f"{K}cancel_{job.id}", on_click=jobs.cancel, args=(owner_, job.id),
                      disabled=job.cancel.is_set(), icon=":material/stop_circle:")
        else:
            c2.button("Dismiss", key=f"{K}dismiss_{job.id}", on_click=jobs.forget, args=(owner_, job.id))
    if any(not j.running and j.state == "finished" for j in mine):
        try:
            st.page_link("webapp/views/results.py", label="See the results", icon=":material/monitoring:")
        except Exception:  # the page runs outside the app's navigation
            st.caption("See the results on the Results page.")


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
        st.progress(frac, text=f"{job.label}: {job.done:,}/{job.total:,} trials · errors {job.errors:,} · "
                               f"spent {usd(job.usd)} (cancel at the top of the page)")


def progress_panel(owner_: str) -> None:
    if jobs.running_for(owner_):
        live_panel(owner_)
    else:
        jobs_panel(owner_)


# --- past sweeps ------------------------------------------------------------------------------------

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
        st.caption(f"No sweeps yet in {jobs.user_db()}.")
        return
    show = frame[["id", "name", "state", "trials", "errors", "calls", "input_tokens", "output_tokens", "cost_usd",
                  "reason"]].copy()
    show["created"] = pd.to_datetime(frame["created"], unit="s").dt.strftime("%Y-%m-%d %H:%M")
    show["cost_usd"] = show["cost_usd"].map(lambda v: usd(float(v)) if pd.notna(v) else "unknown")
    st.dataframe(show.iloc[::-1].rename(columns={"input_tokens": "input tokens", "output_tokens": "output tokens",
                                                 "cost_usd": "dollars"}), hide_index=True)
    resumable = frame[(frame["state"].isin(["interrupted", "cancelled", "failed"]))
                      | ((frame["status"] == "done") & (frame["errors"] > 0))]
    if resumable.empty:
        return
    labels = {str(r.name): f"{r.name} ({r.state}, {r.trials} trials, {r.errors} errors)"
              for r in resumable.itertuples()}
    c1, c2, c3 = st.columns([4, 2, 1])
    name = pickers.select(c1, "Resume a sweep", list(labels), K + "resume", format_func=lambda n: labels.get(n, n),
                          help="runs the trials it is missing; calls already made come from the cache")
    retry = pickers.toggle(c2, "Also retry failed trials", K + "retry_errors")
    if c3.button("Resume", key=K + "resume_go", icon=":material/play_arrow:",
                 disabled=sidebar_choice() is None and State().test_provider is None):
        row = frame[frame["name"] == name].iloc[0]
        try:
            from components.run.config import SweepConfig

            config = SweepConfig.from_stored(row["config"]).to_dict()
            tasks = SweepConfig.from_dict(config).load_tasks()
            start(owner_, config, tasks, None, retry_errors=bool(retry))
            st.rerun()
        except (ValueError, OSError, LookupError) as exc:
            st.error(f"Cannot resume {name}: {short(exc, (getattr(sidebar_choice(), 'api_key', '') or '',))}")


# --- the page ----------------------------------------------------------------------------------------

def main() -> None:
    st.title("Experiments")
    st.write("Run a sweep: tasks × document lengths × answer positions × strategies × models. It runs on the "
             "server in the background (you can leave or refresh this page) and every trial lands in the run "
             "store, where **Results** reads it.")
    me = owner()
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
    choice = sidebar_choice()
    models = models_box(choice)
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

        SweepConfig.from_dict(config)
    except ValueError as exc:
        st.error(short(exc))
        past_panel(me)
        return
    token = path or f"{label}:{len(tasks)}:{write_to.name}"
    with guard("the estimate"):
        show_estimate(estimate_for(json.dumps(config, sort_keys=True), token, tasks))
    past = past_sweeps(me)
    if not past.empty and name.strip() in set(past["name"]):
        st.info(f"A sweep named “{name.strip()}” exists: running adds its missing trials (a resume).")
    can_run = choice is not None or State().test_provider is not None
    if st.button("Run the sweep", type="primary", key=K + "run", disabled=not can_run,
                 icon=":material/play_arrow:"):
        try:
            start(me, config, tasks, write_to)
            ss[K + "_fresh_name"] = True  # the next sweep gets a fresh name
            st.rerun()
        except (ValueError, OSError, LookupError) as exc:
            st.error(f"Cannot start: {short(exc, (getattr(choice, 'api_key', '') or '',))}")
    if jobs.running_for(me):
        live_bars(me)
    past_panel(me)


with guard("the Experiments page"):
    main()
