"""Reading a run store at scale (100k trials and more) without holding every text in memory.

- `summary_frame`: the columns charts and tables aggregate (no prompts, answers or page lists), read
  by SQLite and pandas in one pass: a 100k-trial store in about a second, ~30 MB.
- `trial_rows`: whole trials (every column, lists decoded) for the ids shown: a page of the trial table
  or one drill-down.
- `iter_rows`: every trial as a tuple, streamed, for `litm results` (memory stays flat).
"""

from __future__ import annotations

from collections.abc import Iterator

from components.run.schema import EXPORT_COLUMNS, JSON_COLUMNS, STORED, decode, encode

# what Results, Compare and the cost views aggregate: everything but the long texts and lists
SUMMARY_COLUMNS = ["trial_id", "sweep_id", "sweep", "trial_key", "task", "strategy", "params", "model", "length",
                   "position", "documents", "gold_index", "actual_length", "actual_position", "metric", "score",
                   "subspan_em", "exact", "page_recall", "page_precision", "hallucination_rate", "sentence_recall",
                   "error", "error_kind", "calls", "cached_calls", "input_tokens", "output_tokens", "cost_usd",
                   "latency_s", "created"]


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


def summary_frame(store, sweep=None):
    """The aggregate columns of every trial (of one sweep), as a DataFrame."""
    import pandas as pd

    where, args = _where(store, sweep)
    sql = f"SELECT {_select(store, SUMMARY_COLUMNS)} FROM trials t JOIN sweeps s ON s.id = t.sweep_id{where} ORDER BY t.id"
    return pd.read_sql_query(sql, store.db, params=args)


def trial_rows(store, trial_ids: list[int]) -> list[dict]:
    """Whole trials, every export column, lists decoded, in the order of `trial_ids`."""
    if not trial_ids:
        return []
    ids = [int(i) for i in trial_ids]
    marks = ", ".join("?" * len(ids))
    sql = (f"SELECT {_select(store, EXPORT_COLUMNS)} FROM trials t JOIN sweeps s ON s.id = t.sweep_id "
           f"WHERE t.id IN ({marks})")
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
        f"SELECT {_select(store, columns)} FROM trials t JOIN sweeps s ON s.id = t.sweep_id{where} ORDER BY t.id", args)
    while rows := cur.fetchmany(batch):
        yield from (tuple(r) for r in rows)


def put_trials(store, sweep_id: int, trials: list[dict]) -> int:
    """Many trials (schema rows, no call keys) in one transaction: imports and benchmarks."""
    cols = ", ".join(STORED)
    values = [(sweep_id, *[encode(f, t.get(f)) for f in STORED]) for t in trials]
    db = store.db
    db.execute("BEGIN IMMEDIATE")
    try:
        db.executemany(f"INSERT OR REPLACE INTO trials (sweep_id, {cols}, created) "
                       f"VALUES ({', '.join('?' * (len(STORED) + 1))}, strftime('%s','now'))", values)
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    return len(values)
