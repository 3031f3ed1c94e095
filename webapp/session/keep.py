"""A page's settings kept on the server per workspace token, so a refreshed page (a new Streamlit session
with the same ?run= token in its URL) finds them again. In memory only: nothing is written to disk, and
API keys are never among the keys kept (only the page's own widget keys are)."""

from __future__ import annotations

import threading
from collections import OrderedDict

from webapp.session.state import Key, State

_LOCK = threading.Lock()
_SAVED: OrderedDict[str, dict] = OrderedDict()  # "page:owner" -> {key: value}
MAX_OWNERS = 500
KEPT = (str, int, float, bool, list, type(None))


def keep(page: str, owner: str, keys: list[Key]) -> None:
    """Restore this page's settings once per session (a refresh), then remember the current ones.
    Call before the page's widgets are drawn: a widget's new value is already in the session then."""
    slot = f"{page}:{owner}"
    with _LOCK:
        saved = dict(_SAVED.get(slot, {}))
    by_name = {k.key: k for k in keys}
    if State().restored.get(page) != owner:
        for name, value in saved.items():
            if name in by_name:
                by_name[name].value = value
        restored(page, owner)
    current = {k.key: k.value for k in keys if k.given() and isinstance(k.value, KEPT)}
    with _LOCK:
        _SAVED[slot] = current
        _SAVED.move_to_end(slot)
        while len(_SAVED) > MAX_OWNERS:
            _SAVED.popitem(last=False)


def restored(page: str, owner: str) -> None:
    """Mark `page`'s kept settings as restored in this session: the values set now win."""
    State().restored = {**State().restored, page: owner}
