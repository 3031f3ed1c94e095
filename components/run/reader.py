"""Reading a run store at scale (100k trials and more) without holding every text in memory.

- `summary_frame`: the columns charts and tables aggregate (no prompts, answers or page lists), read
  by SQLite and pandas in one pass: a 100k-trial store in about a second, ~30 MB.
- `browse`: what Results and Compare hold of a store: the summary columns, the retrieved pages (the
  first-k warning) and the sweeps; texts are fetched per page shown.
- `trial_rows`: whole trials (every column, lists decoded) for the ids shown: a page of the trial table,
  one drill-down, the failures of a pair or an export.
- `iter_rows`: every trial as a tuple, streamed, for `litm results` (memory stays flat).
- `browse_kept`: `browse`, kept in this process for a store's current version (`store_version`), so that the
  app's server can read its stores while it starts (webapp/serve.py) and the first page finds them read.

Every store is opened read-only here (reading never writes: no migration, an older schema read as it is);
the `readonly` arguments are kept for the callers, and every value reads read-only.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

from components.core.cells import Cell
from components.core.metrics import SUMMARY_METRIC_COLUMNS
from components.run.schema import EXPORT_COLUMNS, JSON_COLUMNS, decode

# what Results, Compare and the cost views aggregate: everything but the long texts and lists (every
# metric's columns: components.core.metrics)
SUMMARY_COLUMNS = [
    "trial_id",
    "sweep_id",
    "sweep",
    "trial_key",
    "task",
    "strategy",
    "params",
    "model",
    *Cell.columns,
    "actual_length",
    "actual_position",
    "metric",
    *SUMMARY_METRIC_COLUMNS,
    "error",
    "error_kind",
    "calls",
    "cached_calls",
    "input_tokens",
    "output_tokens",
    "cached_input_tokens",
    "cache_write_tokens",
    "cost_usd",
    "latency_s",
    "created",
    "contexts",
    "questions_per_context",
    "mq_document",
    "question_number",
    "sample",
]


def _present(store) -> set[str]:
    return {r[1] for r in store.db.execute("PRAGMA table_info(trials)")}


def _select(store, columns: list[str]) -> str:
    """SELECT list for the given export columns; a column an older store lacks reads as NULL."""
    have = _present(store)
    out = []
    for c in columns:
        if c == "trial_id":
            out.append("t.id AS trial_id")
        elif c == "sweep":
            out.append("s.name AS sweep")
        elif c in have:
            out.append(f"t.{c} AS {c}")
        else:
            out.append(f"NULL AS {c}")
    return ", ".join(out)


def _where(store, sweep) -> tuple[str, tuple]:
    if sweep is None:
        return "", ()
    return " WHERE t.sweep_id = ?", (store.sweep_id(sweep),)


# Results and Compare: the summary columns, the retrieval stage's pages and the attention's by page (short lists)
BROWSE_COLUMNS = [*SUMMARY_COLUMNS, "retrieved_pages", "attention_pages"]  # the pages' masses: the bias


def summary_frame(store, sweep=None, columns: list[str] = SUMMARY_COLUMNS):
    """The aggregate columns of every trial (of one sweep), as a DataFrame (JSON lists decoded)."""
    import pandas as pd

    where, args = _where(store, sweep)
    sql = f"SELECT {_select(store, columns)} FROM trials t JOIN sweeps s ON s.id = t.sweep_id{where} ORDER BY t.id"
    frame = pd.read_sql_query(sql, store.db, params=args)
    for c in columns:
        if c in JSON_COLUMNS:
            frame[c] = _decoded(c, frame[c])
    return frame


def _decoded(name: str, column) -> list:
    """JSON lists decoded, each distinct text once (page lists repeat: "[1, 2, 3]"); NULL (or NaN) -> None."""
    seen: dict[str, list] = {}
    out = []
    for v in column.to_numpy(dtype=object):  # numpy objects: iterating an Arrow column costs 10x more
        if isinstance(v, str):
            got = seen.get(v)
            if got is None:
                got = seen[v] = decode(name, v)
            out.append(got)
        else:
            out.append(None)
    return out


def browse(path, readonly: bool = True):
    """(trials, sweeps) of the store at `path` as Results and Compare hold them: BROWSE_COLUMNS only."""
    from components.run.store import RunStore

    store = RunStore(path, readonly=True)
    try:
        return summary_frame(store, columns=BROWSE_COLUMNS), store.sweeps_frame()
    finally:
        store.close()


def store_version(path) -> tuple:
    """Changes whenever the store changes (the WAL file too): the version a kept read belongs to."""
    out: list[tuple[int, int] | None] = []
    for p in (Path(path), Path(f"{path}-wal")):
        try:
            s = p.stat()
            out.append((s.st_mtime_ns, s.st_size))
        except OSError:
            out.append(None)
    return tuple(out)


_KEPT: dict[tuple[str, bool], tuple[tuple, object]] = {}  # (path, readonly) -> (stamp, browse result)
_KEPT_LOCK = threading.Lock()
_READING: dict[tuple[str, bool], threading.Lock] = {}


def browse_kept(path, version: tuple, readonly: bool = True):
    """`browse(path, readonly)` of the store's version `version` (`store_version`): read once and kept (only the
    latest version of each store), so a second caller, or one arriving while the first reads, gets it
    without reading again. Callers must not change the frames they get (they copy before adding columns)."""
    key = (str(path), bool(readonly))
    with _KEPT_LOCK:
        lock = _READING.setdefault(key, threading.Lock())
    with lock:
        kept = _KEPT.get(key)
        if kept is not None and kept[0] == version:
            return kept[1]
        got = browse(path, readonly)
        _KEPT[key] = (version, got)
        return got


def whole_trials(path, trial_ids, readonly: bool = True) -> list[dict]:
    """`trial_rows` of the store at `path` (opened and closed here), fetched 900 ids at a time."""
    from components.run.store import RunStore

    ids = [int(i) for i in trial_ids]
    store = RunStore(path, readonly=True)
    try:
        out = []
        for start in range(0, len(ids), 900):  # SQLite's bound-parameter limit is 999 on old builds
            out.extend(trial_rows(store, ids[start : start + 900]))
        return out
    finally:
        store.close()


def trial_rows(store, trial_ids: list[int]) -> list[dict]:
    """Whole trials, every export column, lists decoded, in the order of `trial_ids`."""
    if not trial_ids:
        return []
    ids = [int(i) for i in trial_ids]
    marks = ", ".join("?" * len(ids))
    sql = (
        f"SELECT {_select(store, EXPORT_COLUMNS)} FROM trials t JOIN sweeps s ON s.id = t.sweep_id "
        f"WHERE t.id IN ({marks})"
    )
    found = {}
    for r in store.db.execute(sql, ids):
        row = dict(r)
        for f in JSON_COLUMNS:
            row[f] = decode(f, row.get(f))
        found[row["trial_id"]] = row
    return [found[i] for i in ids if i in found]


def iter_rows(store, columns: list[str], sweep=None, batch: int = 2000) -> Iterator[tuple]:
    """Every trial's values for `columns`, in id order, fetched `batch` at a time (JSON lists as text)."""
    where, args = _where(store, sweep)
    cur = store.db.execute(
        f"SELECT {_select(store, columns)} FROM trials t JOIN sweeps s ON s.id = t.sweep_id{where} ORDER BY t.id",
        args,
    )
    while rows := cur.fetchmany(batch):
        yield from (tuple(r) for r in rows)
