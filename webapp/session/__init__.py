"""Session state and the URL: every key in one typed place (state.State), one URL sync (url), a page's
settings kept across a refresh (keep). `start(page)` opens a page: defaults once, then the URL's values.

This package imports nothing else of the app; ui, services and the pages build on it."""

from __future__ import annotations

import threading

from webapp.session import url
from webapp.session.state import CONTROL, VALUE, WIDGET, Family, Key, State

__all__ = ["CONTROL", "VALUE", "WIDGET", "Family", "Key", "State", "in_app", "start", "url"]

_RUN = threading.local()  # per script thread: the app (webapp/app.py) set the session up in this run


def in_app(value: bool | None = None) -> bool:
    """Whether this script run goes through webapp/app.py (set there), or runs a page file on its own
    (a test): then the page sets its own defaults."""
    if value is not None:
        _RUN.active = value
    return bool(getattr(_RUN, "active", False))


def start(page: str) -> State:
    """Open `page`: the session's defaults (once, when the page runs on its own; app.py does it for
    every page otherwise), then the URL's values for it."""
    if not in_app():
        State.init()
    url.read(page)
    return State()
