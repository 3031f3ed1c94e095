"""Compare's planner: the pair to look at (the one the recommendation names, to begin with) and how many
tasks tell a difference apart, handed to Experiments."""

from __future__ import annotations

import streamlit as st

from webapp.compare import parts
from webapp.services import analysis
from webapp.session import State, url
from webapp.ui import pickers

SEP = "  vs  "


def pick_pair(labels: list[str], result: analysis.Comparison) -> tuple[str, str] | None:
    options = [f"{a}{SEP}{b}" for i, a in enumerate(labels) for b in labels[i + 1 :]]
    if not options:
        return None
    state = State()
    named = parts.recommended_pair(result, labels)
    if named and state.cmp_pair_for != labels and "pair" not in url.given("compare"):
        state.cmp_pair = f"{named[0]}{SEP}{named[1]}"  # the pair the recommendation names
    state.cmp_pair_for = list(labels)
    chosen = pickers.select(
        st, "Pair", options, State.cmp_pair, help="the pair the recommendation names, to begin with"
    )
    return tuple(chosen.split(SEP, 1)) if chosen else None


def planner(result: analysis.Comparison, pair: tuple[str, str] | None) -> None:
    c1, c2, c3 = st.columns(3)
    d = c1.number_input("Difference that matters (points)", 1.0, 50.0, step=1.0, key=State.cmp_difference.key)
    power = c2.selectbox("Power", [0.8, 0.9], key=State.cmp_power.key)
    p = next((x for x in result.pairs if pair and (x.a, x.b) == pair), None)
    t = result.trials
    cells = analysis.cells_per_task(t, list(pair or []))
    plan = analysis.pairs_plan(p, result.arms, difference=d / 100, power=power, cells_per_task=cells)
    cost = "unknown (no price)" if plan.cost_usd is None else f"${plan.cost_usd:,.2f}"
    c3.metric("Tasks needed", f"{plan.tasks:,}", help=f"{plan.pairs:,} matched trials over {cells} cells")
    st.caption(
        f"{plan.pairs:,} matched trials ({plan.tasks:,} tasks × {cells} cells) to tell a {d:.0f}-point "
        f"difference apart with power {power} at alpha 0.05 (exact McNemar; Connor 1987), using "
        f"{'the discordance seen in this pair' if plan.discordance_source == 'seen' else 'a default'} "
        f"of {plan.discordance:.2f}. Running both arms on them costs about {cost}."
    )
    if pair and st.button(
        "Plan this sweep in Experiments",
        key=State.cmp_to_experiments.key,
        icon=":material/tune:",
        help="fills the Experiments grid with these two arms' strategies, parameters, "
        "lengths and positions, and this many tasks",
    ):
        try:
            parts.plan_in_experiments(t, pair, plan.tasks)
        except Exception:  # the page runs outside the app's navigation
            st.info("The Experiments grid is filled: open **Experiments**.")
