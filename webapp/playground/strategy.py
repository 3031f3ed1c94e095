"""The Playground's strategy column: the strategy and its parameters, each widget bounded by the
strategy's own `Param` and started at the paper's default, fitted to the document when that default
would show nothing (r or c longer than the document, k more than its pages)."""

from __future__ import annotations

import streamlit as st

from webapp.services.engine import STRATEGIES, ParamError, get_strategy
from webapp.session import Key, State

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


def pending_param(state: State, name: str) -> int | None:
    """A strategy parameter a link asked for (?r=500, session/url.py), given once (then the widget rules)."""
    pending = dict(state.pending_params or {})
    value = pending.pop(name, None)
    if value is not None:
        state.pending_params = pending
    return value


def param_input(state: State, p, doc, doc_id: str) -> int:
    key: Key = State.param(p.name, p.default)
    start, why = fitted(p.name, p.default, doc)
    if state.fitted.get(key.key) != doc_id:  # a new document: start from the paper default, fitted
        state.fitted = {**state.fitted, key.key: doc_id}
        key.value = start
    wanted = pending_param(state, p.name)
    if wanted is not None:
        try:
            key.value = p.check(wanted)
        except ParamError:
            st.caption(f"The link's {p.name} = {wanted:,} is out of bounds ({p.bounds}); kept {key.value:,}.")
    help_ = f"{p.help}. Paper default: {p.default:,}"
    if p.name == "r":
        top = max(10_000, -(-doc.tokens // 1000) * 1000)
        options = sorted({*range(100, top + 1, 100), key.value})
        st.select_slider(
            "r: reprompt every … tokens", options, key=key.key, format_func=lambda v: f"{v:,}", help=help_
        )
        if key.value >= doc.tokens:
            st.caption(
                f"r is longer than this {doc.tokens:,}-token document: no reminder fits "
                "(as in R&R Table 1). Lower r to see reminders."
            )
    elif p.name == "k":
        st.slider("k: pages to retrieve", p.minimum, max(20, key.value), key=key.key, help=help_)
    elif p.name == "c":
        options = sorted({*CHUNK_SIZES, p.default, key.value})
        st.select_slider(
            "c: chunk size (tokens)", options, key=key.key, format_func=lambda v: f"{v:,}", help=help_
        )
    elif p.unit == "0/1":
        st.toggle(p.help, key=key.key)
    else:
        st.number_input(
            p.title,
            min_value=p.minimum,
            max_value=p.maximum,
            step=p.step,
            key=key.key,
            help=help_,
        )
    if why and key.value == start:
        st.caption(why)
    return int(key.value)


def strategy_input(state: State, doc, doc_id: str) -> tuple[str, tuple[tuple[str, int], ...]]:
    names = list(STRATEGIES)
    if state.strategy not in names:
        state.strategy = "baseline" if "baseline" in names else names[0]
    st.selectbox("Strategy", names, key=State.strategy.key, format_func=lambda n: STRATEGIES[n].label)
    s = get_strategy(state.strategy)
    st.caption(f"{s.summary} — *{s.paper}*")
    return s.name, tuple((p.name, param_input(state, p, doc, doc_id)) for p in s.params)
