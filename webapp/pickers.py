"""Select widgets whose options depend on the data: a stored choice that is no longer offered falls
back to a default instead of raising, and the widget is created with `key=` only (its value lives
in st.session_state under that key; the keys are named in webapp/state.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import streamlit as st


def select(where, label: str, options: Sequence, key: str, default: Any = None, **kwargs) -> Any:
    options = list(options)
    if not options:
        return None
    ss = st.session_state
    if ss.get(key) not in options:
        ss[key] = default if default in options else options[0]
    return where.selectbox(label, options, key=key, **kwargs)


def radio(where, label: str, options: Sequence, key: str, default: Any = None, **kwargs) -> Any:
    options = list(options)
    ss = st.session_state
    if ss.get(key) not in options:
        ss[key] = default if default in options else options[0]
    return where.radio(label, options, key=key, **kwargs)


def multi(where, label: str, options: Sequence, key: str, default: Sequence = (), **kwargs) -> list:
    options = list(options)
    ss = st.session_state
    current = ss.get(key)
    if current is None:
        current = list(default)
    ss[key] = [v for v in current if v in options]
    return where.multiselect(label, options, key=key, **kwargs)


def toggle(where, label: str, key: str, default: bool = False, **kwargs) -> bool:
    ss = st.session_state
    if not isinstance(ss.get(key), bool):
        ss[key] = default
    return where.toggle(label, key=key, **kwargs)
