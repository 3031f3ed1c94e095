"""Compare's controls: the sweeps, length and arms to compare, the prices, and the decision rule (margin
and minimum saving)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from webapp.compare import parts
from webapp.services import analysis, models, sharing, shipped, stores
from webapp.session import State, url
from webapp.ui import pickers


def open_on_my_latest(trials: pd.DataFrame, sweeps: pd.DataFrame) -> None:
    """First visit (no sweep chosen, none in the link): this browser's latest sweep with trials; without
    one, the shipped run Home's Decide opens (Baseline, Reprompt and R&R, shipped.DECISION_RUN), the
    comparison a decider comes for; without that either, every sweep."""
    state = State()
    if state.cmp_sweeps is not None or "sweep" in url.given("compare"):
        return
    have = set(trials["sweep_key"].unique())
    for r in sharing.my_sweeps().itertuples():
        key = stores.sweep_key(r.id)
        if key in have:
            state.cmp_sweeps = [key]
            return
    decision = shipped.sweep_key(shipped.DECISION_RUN)
    state.cmp_sweeps = [decision] if decision in have else []


def choose(trials: pd.DataFrame, sweeps: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """Sweeps, length and arms to compare; returns (prepared trials of the chosen sweeps, chosen arm labels)."""
    state = State()
    c1, c2 = st.columns([3, 1])
    labels = dict(zip(sweeps["sweep_key"], sweeps["label"], strict=True))
    have = stores.with_trials(sweeps, trials)
    chosen = pickers.multi(
        c1,
        "Sweeps",
        have,
        State.cmp_sweeps,
        format_func=lambda k: labels.get(k, k),
        placeholder="every sweep of every store",
    )
    part = trials[trials["sweep_key"].isin(chosen)] if chosen else trials
    lengths = sorted(int(x) for x in pd.to_numeric(part["length"], errors="coerce").dropna().unique())
    length = pickers.select(
        c2,
        "Document length",
        [url.ALL_LENGTHS, *map(str, lengths)],
        State.cmp_length,
        help="cost per 1,000 questions depends on the length: compare at one",
    )
    part = analysis.filter_length(part, None if length in (None, url.ALL_LENGTHS) else int(length))
    t = analysis.prepare(part)
    ranked = analysis.arms(t).sort_values("accuracy", ascending=False)["label"].tolist()
    default = analysis.default_arms(t, ranked)
    if (
        state.cmp_sweeps_for is not None
        and state.cmp_sweeps_for != chosen
        and "arm" not in url.given("compare")
    ):
        state.cmp_arms = None  # other sweeps: their own default arms, never an empty list
    state.cmp_sweeps_for = list(chosen)
    if state.cmp_arms:  # a link naming arms by their raw ids ('rr k=3 r=5000 · gpt-4o-mini'): their names
        state.cmp_arms = analysis.known_labels(t, list(state.cmp_arms), set(ranked))
    arms = pickers.multi(
        st,
        "Arms (strategy, parameters, model)",
        ranked,
        State.cmp_arms,
        default=default,
        placeholder="choose two or more arms",
    )
    return t, arms


def pricing_controls() -> tuple[str | None, bool]:
    c1, c2 = st.columns([3, 1])
    table = parts.session_prices()
    every = [f"{p}:{m}" for p, ms in (table or models.PRICES).items() for m in sorted(ms)]
    price = pickers.select(
        c1,
        "Price every arm as",
        [parts.OWN, *every],
        State.cmp_price_model,
        help="re-price the stored token counts of every arm at another model's list price",
    )
    batch = pickers.toggle(
        c2,
        "Batch prices",
        State.cmp_batch,
        help="the providers' batch APIs: half the list price (OpenAI, Anthropic)",
    )
    edited = " · edited for this session" if table is not None else ""
    with st.expander(
        f"Prices: table dated {models.PRICES_DATE}{edited} (see sources, edit for this session)"
    ):
        parts.price_editor(st)
    return (None if price == parts.OWN else price), batch


def decision_rule(where) -> tuple[float, float]:
    """The non-inferiority margin (points) and the minimum saving (% of cost) the verdict uses."""
    c1, c2, c3 = where.columns([1, 1, 2])
    margin = c1.number_input(
        "Margin (points)",
        0.5,
        50.0,
        step=0.5,
        format="%.1f",
        key=State.cmp_margin.key,
        help="a cheaper arm is recommended only if its 95% paired interval shows it at most "
        "this many points less accurate than the most accurate arm",
    )
    saving = c2.number_input(
        "Minimum saving (% of cost)",
        0.0,
        90.0,
        step=5.0,
        format="%.0f",
        key=State.cmp_min_saving.key,
        help="and only if it saves at least this share of the most accurate arm's cost per 1,000 questions",
    )
    c3.caption(
        f"**Decision rule.** Defaults: a margin of {100 * analysis.DEFAULT_MARGIN:.0f} points and a "
        f"minimum saving of {100 * analysis.DEFAULT_MIN_SAVING:.0f}% of cost. A cheaper arm is recommended "
        "only when it is non-inferior within the margin and saves at least the minimum (confident); else "
        "the most accurate arm if it beats every other after Holm's correction (confident); else it is a tie, "
        "and the cheapest of the arms the data cannot tell apart is recommended (not yet)."
    )
    return float(margin) / 100, float(saving) / 100
