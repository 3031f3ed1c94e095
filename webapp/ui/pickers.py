"""Select widgets whose options depend on the data: a stored choice that is no longer offered falls
back to a default instead of raising, and the widget is created with `key=` only (its value lives in
the session under a key declared in webapp/session/state.py: callers pass the Key itself)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from webapp.session import Key


def select(where, label: str, options: Sequence, key: Key, default: Any = None, **kwargs) -> Any:
    options = list(options)
    if not options:
        return None
    if key.value not in options:
        key.value = default if default in options else options[0]
    return where.selectbox(label, options, key=key.key, **kwargs)


def radio(where, label: str, options: Sequence, key: Key, default: Any = None, **kwargs) -> Any:
    options = list(options)
    if key.value not in options:
        key.value = default if default in options else options[0]
    return where.radio(label, options, key=key.key, **kwargs)


def multi(where, label: str, options: Sequence, key: Key, default: Sequence = (), **kwargs) -> list:
    """A multiselect; its choice falls back to `default` when none (or none still offered) is chosen,
    so a stale choice never leaves it empty."""
    options = list(options)
    current = key.value
    kept = [v for v in (current or []) if v in options]
    if current is None or (current and not kept):
        kept = [v for v in default if v in options]
    key.value = kept
    return where.multiselect(label, options, key=key.key, **kwargs)


def toggle(where, label: str, key: Key, default: bool = False, **kwargs) -> bool:
    if not isinstance(key.value, bool):
        key.value = default
    return where.toggle(label, key=key.key, **kwargs)


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


def numbers(
    where,
    label: str,
    presets: Sequence,
    key: Key,
    default: Sequence,
    *,
    integer: bool,
    bounds: tuple[float | None, float | None] = (None, None),
    **kwargs,
) -> list:
    """A multiselect of numbers that also takes a typed one (40000 or 40k; 0.3): the presets plus every
    value chosen so far are the options, so a typed number stays chosen on the next run; values out of
    `bounds` are dropped."""
    lo, hi = bounds

    def ok(v) -> bool:
        return v is not None and (lo is None or v >= lo) and (hi is None or v <= hi)

    current = key.value
    current = list(default) if current is None else list(current if isinstance(current, list) else [current])
    values = list(dict.fromkeys(v for v in (number(x, integer) for x in current) if ok(v)))
    key.value = values
    options = sorted(set(presets) | set(values))
    # select_all=False: Enter after typing adds the first match, never "Select N matches" (typing 200 where
    # 200 and 2,000 are offered added both: a silent extra arm)
    chosen = where.multiselect(
        label, options, key=key.key, accept_new_options=True, select_all=False, **kwargs
    )
    return sorted(dict.fromkeys(v for v in (number(x, integer) for x in chosen) if ok(v)))


def picked_row(event, keys: Sequence) -> Any:
    """The key of the row a click selected in a selectable table (`st.dataframe(on_select=...)`'s event,
    an object or, restored from the session, a dict), or None."""
    rows = getattr(getattr(event, "selection", None), "rows", None)
    if rows is None and isinstance(event, dict):
        rows = event.get("selection", {}).get("rows")
    return keys[rows[0]] if rows and rows[0] < len(keys) else None
