"""Links that open a page with its settings filled in (the Lesson's steps use them), e.g.

    /playground?source=task&set=nq-open-30docs&documents=20&gold=9&strategy=litm
    /playground?sample=harrowmere_history&strategy=reprompt&r=500&move=0.5
    /results?axis=gold_index

A page applies its query parameters once per distinct query (so the user's later changes stay),
and ignores values it does not know, with no error: a link is a suggestion, not a command.
"""

from __future__ import annotations

import streamlit as st

from components.strategies import STRATEGIES
from webapp.session.state import State

PARAMS = ("r", "k", "c")
_PENDING = "_links_pending_params"  # strategy parameters asked for, applied by strategyinput once


def _int(value, lo: int, hi: int) -> int | None:
    try:
        v = int(float(str(value)))
    except ValueError:
        return None
    return v if lo <= v <= hi else None


def _float(value, lo: float, hi: float) -> float | None:
    try:
        v = float(str(value))
    except ValueError:
        return None
    return v if lo <= v <= hi else None


def fresh_query(state: State, page: str) -> dict | None:
    """The query parameters if this page has not applied them yet in this session, else None."""
    q = {k: st.query_params.get(k) for k in st.query_params}
    q.pop("present", None)
    q.pop("step", None)
    if not q:
        return None
    seen = f"{page}?{sorted(q.items())}"
    if state.query_seen == seen:
        return None
    state.query_seen = seen
    return q


def apply_playground(state: State) -> None:
    q = fresh_query(state, "playground")
    if not q:
        return
    source = {"task": "Task set", "sample": "Sample", "paste": "Paste"}.get(str(q.get("source", "")).lower())
    if "sample" in q and source is None:
        source = "Sample"
    if source:
        state.source = source
    if "sample" in q:
        state.sample = str(q["sample"])
        state.question_pick = ""
    if "set" in q:
        state.pg_set = str(q["set"])
    if (t := _int(q.get("task"), 1, 10**6)) is not None:
        state.pg_task = t
    if (n := _int(q.get("documents"), 1, 200)) is not None:
        state.pg_layout, state.pg_documents = "documents", n
    if (d := _int(q.get("length"), 100, 200_000)) is not None:
        state.pg_layout, state.pg_length = "tokens", d
    if (g := _int(q.get("gold"), 0, 199)) is not None:
        state.pg_gold_index = g
    if (x := _float(q.get("move"), 0.0, 1.0)) is not None:
        state.move, state.move_to = True, round(x, 1)
    if q.get("strategy") in STRATEGIES:
        state.strategy = q["strategy"]
    pending = {}
    for name in PARAMS:
        if (v := _int(q.get(name), 1, 10**7)) is not None:
            pending[name] = v
    st.session_state[_PENDING] = pending


def pending_param(name: str) -> int | None:
    """A strategy parameter a link asked for, given once (then the user's widget rules)."""
    pending = st.session_state.get(_PENDING) or {}
    value = pending.pop(name, None)
    return value


def apply_results() -> None:
    """?axis=gold_index|position picks the U-curve's axis (once per distinct query)."""
    state = State()
    q = fresh_query(state, "results")
    if q and q.get("axis") in ("gold_index", "position"):
        st.session_state["res_u_axis"] = q["axis"]
