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


def number(text, integer: bool) -> float | int | None:
    """'40000', '40,000', '40k' -> 40000; '0.3' -> 0.3 (positions); None when it is not a number."""
    if isinstance(text, int | float) and not isinstance(text, bool):
        value = float(text)
    else:
        s = str(text).strip().lower().replace(",", "").replace("_", "")
        scale = 1000 if s.endswith("k") else 1
        try:
            value = float(s.rstrip("k")) * scale
        except ValueError:
            return None
    if value < 0 or value != value:
        return None
    return int(round(value)) if integer else value


def numbers(where, label: str, presets: Sequence, key: str, default: Sequence, *, integer: bool,
            **kwargs) -> list:
    """A multiselect of numbers that also takes a typed one (40000 or 40k; 0.3): the presets plus every
    value chosen so far are the options, so a typed number stays chosen on the next run."""
    ss = st.session_state
    current = ss.get(key)
    current = list(default) if current is None else list(current)
    values = [v for v in (number(x, integer) for x in current) if v is not None]
    values = list(dict.fromkeys(values))
    ss[key] = values
    options = sorted(set(presets) | set(values))
    chosen = where.multiselect(label, options, key=key, accept_new_options=True, **kwargs)
    return sorted(dict.fromkeys(v for v in (number(x, integer) for x in chosen) if v is not None))
