"""What Results and Compare show every student the same, computed once per store version per server
process: the statistics (curves, intervals, shapes, Holm tables, verdicts) and the figures built from
them. A student's own choices (another sweep, a filter, a metric) are keyed the same way, so the second
student with the same choice pays nothing.

How a frame is recognised without reading it: `services/stores.load_all` stamps the frames it returns
with their data version (`stamp`: the stores' paths and file versions, and which sweeps of the user's
store this viewer sees); pandas carries that stamp through filtering, `assign` and column selection.
A frame's key is then its stamp, its index (which rows: a digest of the row labels, about a millisecond
for 100k rows) and its columns. A small frame without a stamp (a curve's table) is keyed by its
content; a large one without a stamp is computed every time (never a wrong answer from a guess). A
page that renames columns of a stamped frame, or puts other values under a column's name, passes
`fresh(frame)` (keyed by its content) instead.

`kept(fn)` wraps a pure function of frames and plain values: its result is kept per server process
(least recently used dropped) and each caller gets its own shallow copy (pandas copy-on-write: a page's
change never reaches the kept frame; a figure is a `LazyFigure`, copied only when read). `kept(fn,
disk=True)`
also writes the result beside the stores in the user's cache folder (`cache_dir()`: `$LITM_CACHE`, else
`$XDG_CACHE_HOME/litm-explorer/views`), never inside the package: a new server process reads the
bootstrap bands, McNemar and Holm tables and shape tests there instead of computing them again. A
cached file belongs to one version of the engine's code (`code_version`): a changed statistic is
computed afresh. Results of a store being written (a sweep running) stay in memory only."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import os
import pickle
import tempfile
import threading
from collections import OrderedDict
from pathlib import Path

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

STAMP = "litm_data"  # the attrs key of a frame's data version
SETTLED = "litm_settled"  # and whether its stores have stopped changing (services/stores.py)
KEEP_FILES = 2_000  # files in the cache folder; the least recently written beyond them are removed
SMALL = 20_000  # rows: a frame this small without a stamp is keyed by its content
KEPT = 512  # results kept per server process
KEPT_BYTES = 300_000_000  # and the frames they hold, at most (a filtered 100k-trial frame: tens of MB)
FORMAT = 1  # of the files in the cache folder


class Unkeyable(Exception):
    """An argument has no key (a large frame without a stamp, an object without a value): call through."""


# ------------------------------------------------------------------ keys


def stamp(frame, version, settled: bool = True) -> None:
    """Mark a frame (or series) as rows of the data `version` (plain values: paths, file versions).
    `settled`: none of its stores is being written (a sweep running): what is computed from it may go to
    the cache folder; a store that changes every few seconds would only fill it."""
    frame.attrs[STAMP] = version
    frame.attrs[SETTLED] = settled


def _settled(values) -> bool:
    for v in values:
        if isinstance(v, (pd.DataFrame, pd.Series)) and not v.attrs.get(SETTLED, True):
            return False
    return True


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _index_key(index: pd.Index) -> tuple:
    if isinstance(index, pd.RangeIndex):
        return ("range", index.start, index.stop, index.step)
    values = index.to_numpy()
    if values.dtype.kind in "iub":
        return ("rows", len(values), _digest(np.ascontiguousarray(values).tobytes()))
    return ("rows", len(values), _digest(pickle.dumps(list(values))))


def _content(obj) -> str:
    try:
        hashed = pd.util.hash_pandas_object(obj, index=True).to_numpy()
        head = repr(
            (
                list(obj.columns) if isinstance(obj, pd.DataFrame) else obj.name,
                list(obj.dtypes) if isinstance(obj, pd.DataFrame) else str(obj.dtype),
            )
        )
        return _digest(head.encode() + hashed.tobytes())
    except (TypeError, ValueError):  # list or dict cells: pickled
        return _digest(pickle.dumps(obj))


def fresh(frame):
    """`frame` without its data version (a shallow copy): for a frame whose columns were renamed or replaced
    by other values under the same names, which must be keyed by its content."""
    out = frame.copy(deep=False)
    out.attrs.pop(STAMP, None)
    return out


def key_of(value):
    """A hashable, process-independent key for an argument, or Unkeyable."""
    if value is None or isinstance(value, (str, int, float, bool, bytes)):
        return value
    if isinstance(value, (pd.DataFrame, pd.Series)):
        cols = tuple(map(str, value.columns)) if isinstance(value, pd.DataFrame) else (str(value.name),)
        version = value.attrs.get(STAMP)
        if version is not None:
            return ("stamped", version, _index_key(value.index), cols)
        if len(value) <= SMALL:
            return ("content", _content(value))
        raise Unkeyable(f"a frame of {len(value)} rows without a data version")
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(key_of(v) for v in value))
    if isinstance(value, (set, frozenset)):
        return ("set", tuple(sorted((key_of(v) for v in value), key=repr)))
    if isinstance(value, dict):
        return ("dict", tuple(sorted(((repr(k), key_of(v)) for k, v in value.items()), key=lambda kv: kv[0])))
    if isinstance(value, (np.integer, np.floating, np.bool_)):
        return value.item()
    text = repr(value)
    if " at 0x" in text or " object at " in text:  # identity only: no value to key on
        raise Unkeyable(f"{type(value).__name__} has no value to key on")
    return (type(value).__qualname__, text)


# ------------------------------------------------------------------ copies


# What a page does to a figure before showing it: recorded on a kept figure's stand-in, not done, until
# something reads the figure. ui/charts.py themes a figure once per content: for a stand-in, the content is
# the kept figure's key and these calls, so a student whose chart is another's gets the themed chart kept
# for the first without the figure being copied or serialized again.
RECORDED = frozenset(
    {
        "update_layout",
        "update_xaxes",
        "update_yaxes",
        "update_traces",
        "add_hline",
        "add_vline",
        "add_hrect",
        "add_vrect",
        "add_annotation",
        "add_shape",
    }
)
_OWN = frozenset({"lazy_key", "__class__", "__dict__", "_lazy_state"})


class LazyFigure(go.Figure):
    """A kept figure's copy, made when first read: until then the calls in RECORDED are recorded."""

    def __init__(self, kept_figure: go.Figure, origin: str):  # no plotly __init__ until read
        object.__setattr__(self, "_lazy_state", [kept_figure, origin, []])

    def __getattribute__(self, name):
        state = object.__getattribute__(self, "__dict__").get("_lazy_state")
        if state is None or name in _OWN:
            return object.__getattribute__(self, name)
        if name in RECORDED:
            return functools.partial(_record, self, state, name)
        _materialize(self)
        return object.__getattribute__(self, name)

    def __setattr__(self, name, value):
        if object.__getattribute__(self, "__dict__").get("_lazy_state") is not None:
            _materialize(self)
        super().__setattr__(name, value)

    def lazy_key(self) -> str | None:
        """The figure's content as a key while it is still only the kept figure plus recorded calls."""
        state = object.__getattribute__(self, "__dict__").get("_lazy_state")
        if state is None:
            return None
        text = repr(state[2])
        return None if " at 0x" in text else _digest(f"{state[1]}|{text}".encode())


def _record(fig, state, name, *args, **kwargs):
    state[2].append((name, args, kwargs))
    return fig


def _materialize(fig) -> None:
    state = object.__getattribute__(fig, "__dict__").pop("_lazy_state", None)
    if state is None:
        return
    kept_figure, _, calls = state
    go.Figure.__init__(fig, kept_figure.to_dict(), skip_invalid=False, _validate=False)
    for name, args, kwargs in calls:
        getattr(fig, name)(*args, **kwargs)


def figure_key(fig) -> str | None:
    """A kept figure's key (its builder's key and what was done to it since), or None: then its content
    is the key (ui/charts.py serializes it)."""
    return fig.lazy_key() if isinstance(fig, LazyFigure) else None


def _copied(value, digest: str = ""):
    if isinstance(value, (pd.DataFrame, pd.Series)):
        return value.copy(deep=False)
    if isinstance(value, go.Figure):
        if digest and not isinstance(value, LazyFigure):
            return LazyFigure(value, digest)
        return go.Figure(value.to_dict(), _validate=False)
    if isinstance(value, tuple) and not hasattr(value, "_fields"):  # a named tuple is a record: kept as it is
        return tuple(_copied(v, f"{digest}/{i}" if digest else "") for i, v in enumerate(value))
    if isinstance(value, list):
        return [_copied(v, f"{digest}/{i}" if digest else "") for i, v in enumerate(value)]
    if isinstance(value, dict):
        return {k: _copied(v, f"{digest}/{k}" if digest else "") for k, v in value.items()}
    if _is_record(value):  # a record holding frames (report.compare.Comparison): a copy with copied parts
        parts = {
            f.name: _copied(getattr(value, f.name), f"{digest}/{f.name}" if digest else "")
            for f in _fields(value)
        }
        if all(parts[k] is getattr(value, k) for k in parts):
            return value
        return dataclasses.replace(value, **parts)
    return value  # numbers, strings, frozen records


def _stamped(value, digest: str, settled: bool = True):
    """Frames in a kept result carry the result's key, so what is computed from them is keyed too."""
    if isinstance(value, (pd.DataFrame, pd.Series)):
        stamp(value, ("derived", digest), settled)
    elif isinstance(value, (tuple, list)):
        for i, v in enumerate(value):
            _stamped(v, f"{digest}/{i}", settled)
    elif isinstance(value, dict):
        for k, v in value.items():
            _stamped(v, f"{digest}/{k}", settled)
    elif _is_record(value):
        for f in _fields(value):
            _stamped(getattr(value, f.name), f"{digest}/{f.name}", settled)
    return value


def _is_record(value) -> bool:
    """A result record holding frames or figures (report.compare.Comparison): a dataclass instance with
    a field that is one. Other records (a Prompt, a Verdict) are frozen values, kept as they are."""
    return (
        dataclasses.is_dataclass(value)
        and not isinstance(value, type)
        and any(
            isinstance(getattr(value, f.name), pd.DataFrame | pd.Series | go.Figure) for f in _fields(value)
        )
    )


def _fields(value) -> tuple:
    return dataclasses.fields(value)


# ------------------------------------------------------------------ the keep


def _size(value) -> int:
    """Bytes a kept result holds, roughly: its frames' columns (shared with nothing else once kept)."""
    if isinstance(value, pd.DataFrame):
        return int(value.memory_usage(index=True, deep=False).sum())
    if isinstance(value, pd.Series):
        return int(value.memory_usage(index=True, deep=False))
    if isinstance(value, (tuple, list)):
        return 64 + sum(_size(v) for v in value)
    if isinstance(value, dict):
        return 64 + sum(_size(v) for v in value.values())
    if _is_record(value):
        return 64 + sum(_size(getattr(value, f.name)) for f in _fields(value))
    return 1_000


@st.cache_resource(show_spinner=False)
def _keep() -> tuple[OrderedDict, threading.Lock, dict, dict]:
    """Kept results by key, as (value, bytes), least recently used dropped; the lock of the dict; one lock
    per key being computed (the first session computes, the others wait for it); counts (hits, computed,
    read from the cache folder, bytes held)."""
    return OrderedDict(), threading.Lock(), {}, {"hits": 0, "computed": 0, "read": 0, "bytes": 0}


def counts() -> dict:
    """How many results were found kept, computed, read from the cache folder in this process."""
    return dict(_keep()[3])


def clear() -> None:
    kept, lock, _, n = _keep()
    with lock:
        kept.clear()
        n.update(hits=0, computed=0, read=0, bytes=0)


def cache_dir() -> Path:
    """Where kept statistics are written: $LITM_CACHE, else $XDG_CACHE_HOME/litm-explorer/views (the user's
    cache folder, never the package's: shipped stores and the checkout stay as they are)."""
    given = os.environ.get("LITM_CACHE")
    if given:
        return Path(given)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "litm-explorer" / "views"


@functools.cache
def code_version() -> str:
    """A digest of the engine's and the services' code: a file cached by another version is not read."""
    roots = [Path(__file__).resolve().parents[2] / "components", Path(__file__).resolve().parent]
    h = hashlib.blake2b(digest_size=8)
    for root in roots:
        for p in sorted(root.rglob("*.py")):
            try:
                h.update(p.read_bytes())
            except OSError:
                continue
    return h.hexdigest()


def _disk_path(name: str, digest: str) -> Path:
    return cache_dir() / f"{name}-{code_version()}-{digest}.pickle"


def _read(path: Path):
    try:
        with open(path, "rb") as f:
            found = pickle.load(f)  # the user's own cache folder, written by this module
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError, ValueError):
        return None
    return found if isinstance(found, tuple) and len(found) == 2 and found[0] == FORMAT else None


def _write(path: Path, value) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        with os.fdopen(fd, "wb") as f:
            pickle.dump((FORMAT, value), f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
        _prune(path.parent)
    except (OSError, pickle.PicklingError, TypeError, AttributeError):
        pass  # a read-only home: computed again next time, nothing lost


def _prune(folder: Path) -> None:
    """Keep the KEEP_FILES most recently written files of the cache folder (each store version writes its
    own: old ones are never read again)."""
    found = list(folder.glob("*.pickle"))
    if len(found) <= KEEP_FILES:
        return
    found.sort(key=lambda p: p.stat().st_mtime if p.exists() else 0)
    for old in found[: len(found) - KEEP_FILES]:
        old.unlink(missing_ok=True)


@functools.cache
def prices_version() -> str:
    """The price table this process prices with (the shipped one with the override file merged over it,
    read at start): part of the key of whatever prices arms."""
    from components.providers import pricing

    return _digest(repr(pricing.PRICES).encode())


def kept(fn=None, *, disk: bool = False, name: str | None = None, priced: bool = False):
    """`fn` (frames and plain values in; anything picklable out) computed once per server process and
    key of its arguments (`key_of`); with `disk`, once per store version across processes too.
    `priced`: the result depends on the price table too."""
    if fn is None:
        return functools.partial(kept, disk=disk, name=name, priced=priced)
    label = name or f"{fn.__module__.rsplit('.', 1)[-1]}.{fn.__qualname__}"

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            key = (label, key_of(args), key_of(kwargs), prices_version() if priced else "")
        except Unkeyable:
            return fn(*args, **kwargs)
        digest = _digest(repr(key).encode())
        store, lock, computing, n = _keep()
        with lock:
            if digest in store:
                store.move_to_end(digest)
                n["hits"] += 1
                return _copied(store[digest][0], digest)
            mine = computing.setdefault(digest, threading.Lock())
        with mine:
            with lock:
                if digest in store:  # computed by another session while this one waited
                    n["hits"] += 1
                    return _copied(store[digest][0], digest)
            value, found = None, None
            settled = _settled([*args, *kwargs.values()])
            path = _disk_path(label, digest) if disk and settled else None
            if path is not None:
                found = _read(path)
            if found is not None:
                value = found[1]
                with lock:
                    n["read"] += 1
            else:
                value = fn(*args, **kwargs)
                with lock:
                    n["computed"] += 1
                if path is not None:
                    _write(path, value)
            value = _stamped(_copied(value), digest, settled)  # never the caller's own object
            size = _size(value)
            with lock:
                computing.pop(digest, None)
                if size <= KEPT_BYTES // 4:  # a huge result (an export) is not kept
                    store[digest] = (value, size)
                    n["bytes"] += size
                while store and (len(store) > KEPT or n["bytes"] > KEPT_BYTES):
                    n["bytes"] -= store.popitem(last=False)[1][1]
        return _copied(value, digest)

    wrapper.uncached = fn  # type: ignore[attr-defined]  # the function itself, for tests and benches
    return wrapper
