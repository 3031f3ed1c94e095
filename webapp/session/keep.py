"""A page's settings kept on the server per browser token, so a refreshed page (a new Streamlit session
with the same ?run= token in its URL) finds them again. In memory only: nothing is written to disk, and
API keys are never among the keys kept (only the page's own widget keys are)."""

from __future__ import annotations

import threading
from collections import OrderedDict

import streamlit as st

_LOCK = threading.Lock()
_SAVED: OrderedDict[str, dict] = OrderedDict()  # (page, owner) -> {session key: value}
MAX_OWNERS = 500


def keep(page: str, owner: str, keys: list[str]) -> None:
    """Restore this page's settings once per session (a refresh), then remember the current ones.
    Call before the page's widgets are drawn: a widget's new value is already in the session then."""
    ss = st.session_state
    slot = f"{page}:{owner}"
    with _LOCK:
        saved = dict(_SAVED.get(slot, {}))
    if ss.get("_restored_" + page) != owner:
        for key, value in saved.items():
            ss[key] = value
        ss["_restored_" + page] = owner
    current = {k: ss[k] for k in keys if k in ss and isinstance(ss[k], str | int | float | bool | list | type(None))}
    with _LOCK:
        _SAVED[slot] = current
        _SAVED.move_to_end(slot)
        while len(_SAVED) > MAX_OWNERS:
            _SAVED.popitem(last=False)
