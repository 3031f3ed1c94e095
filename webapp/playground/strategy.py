"""The Playground's strategy column: the strategy and its parameters, each widget bounded by the
strategy's own `Param` and started at the paper's default, fitted to the document when that default
would show nothing (r or c longer than the document, k more than its pages)."""

from __future__ import annotations

import streamlit as st

from components.strategies import STRATEGIES, ParamError, get_strategy
from webapp.playground import links
from webapp.session.state import State

CHUNK_SIZES = (1_000, 2_000, 5_000, 10_000, 20_000, 40_000, 80_000)



def fitted(name: str, default: int, doc) -> tuple[int, str]:
    """A starting value that shows something on this document, and why it differs from the paper's.
    r and c longer than the document would give no reminder and one chunk; k at most the pages."""
    if name == "r" and default >= doc.tokens:
        value = max(100, int(round(doc.tokens / 4, -2)))
        return value, f"The paper's r = {default:,} is longer than this document; starting at {value:,}."
    if name == "c" and default >= doc.tokens:
        value = max([o for o in CHUNK_SIZES if o <= doc.tokens / 2] or [CHUNK_SIZES[0]])
        return value, f"The paper's c = {default:,} is longer than this document; starting at {value:,}."
    if name == "k" and default > len(doc.pages):
        return len(doc.pages), f"k is at most the document's {len(doc.pages)} pages."
    return default, ""


def param_input(state: State, p, doc, doc_id: str) -> int:
    key = State.param_key(p.name, p.default)
    start, why = fitted(p.name, p.default, doc)
    if state.fitted.get(key) != doc_id:  # a new document: start from the paper default, fitted
        state.fitted = {**state.fitted, key: doc_id}
        st.session_state[key] = start
    wanted = links.pending_param(p.name)  # a value a link asked for (?r=500), once
    if wanted is not None:
        try:
            st.session_state[key] = p.check(wanted)
        except ParamError:
            st.caption(f"The link's {p.name} = {wanted:,} is out of bounds ({p.bounds}); kept {st.session_state[key]:,}.")
    help_ = f"{p.help}. Paper default: {p.default:,}"
    if p.name == "r":
        top = max(10_000, -(-doc.tokens // 1000) * 1000)
        options = sorted({*range(100, top + 1, 100), st.session_state[key]})
        st.select_slider("r: reprompt every … tokens", options, key=key, format_func=lambda v: f"{v:,}",
                         help=help_)
        if st.session_state[key] >= doc.tokens:
            st.caption(f"r is longer than this {doc.tokens:,}-token document: no reminder fits "
                       "(as in R&R Table 1). Lower r to see reminders.")
    elif p.name == "k":
        st.slider("k: pages to retrieve", p.minimum, max(20, st.session_state[key]), key=key, help=help_)
    elif p.name == "c":
        options = sorted({*CHUNK_SIZES, p.default, st.session_state[key]})
        st.select_slider("c: chunk size (tokens)", options, key=key, format_func=lambda v: f"{v:,}",
                         help=help_)
    elif p.unit == "0/1":
        st.toggle(p.help, key=key)
    else:
        st.number_input(f"{p.name} ({p.unit})", min_value=p.minimum, max_value=p.maximum, step=p.step,
                        key=key, help=help_)
    if why and st.session_state[key] == start:
        st.caption(why)
    return int(st.session_state[key])


def strategy_input(state: State, doc, doc_id: str) -> tuple[str, tuple[tuple[str, int], ...]]:
    names = list(STRATEGIES)
    if state.strategy not in names:
        state.strategy = "reprompt" if "reprompt" in names else names[0]
    st.selectbox("Strategy", names, key=State.strategy.key, format_func=lambda n: STRATEGIES[n].label)
    s = get_strategy(state.strategy)
    st.caption(f"{s.summary} — *{s.paper}*")
    return s.name, tuple((p.name, param_input(state, p, doc, doc_id)) for p in s.params)


