"""Experiments' grid: lengths, positions, strategies and their parameters (fitted to the shortest length),
tasks, parallel calls and budget; a grid handed over by Compare's planner or the Papers page."""

from __future__ import annotations

from typing import Any

import streamlit as st

from webapp.services import sweeps
from webapp.session import Key, State
from webapp.ui import pickers

LENGTHS = [500, 1000, 2000, 4000, 8000, 16000, 32000, 64000, 128000]
POSITIONS = [0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0]
# the first grid offered: a paid model's, and the bundled model's (about 2 minutes on 2 cores: 18 calls of
# about 500 tokens at the speed the sidebar measures; the estimate below the grid gives this machine's figure)
FULL: dict[str, Any] = {
    "lengths": [2000, 4000],
    "positions": [0.0, 0.25, 0.5, 0.75, 1.0],
    "strategies": ["baseline", "reprompt", "rr"],
    "n_tasks": 10,
}
SMALL: dict[str, Any] = {
    "lengths": [500],
    "positions": [0.0, 0.5, 1.0],
    "strategies": ["baseline", "reprompt"],
    "n_tasks": 3,
}
PARAM_PRESETS = {
    "r": [200, 300, 500, 1000, 2000, 5000, 10000],
    "k": [1, 2, 3, 5, 8, 10],
    "c": [1000, 2000, 5000, 10000, 20000, 40000],
}


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
                p.title,
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
