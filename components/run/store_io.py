"""Trials to and from files (csv, jsonl, parquet), so a class can share its runs."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

FORMATS = ("csv", "jsonl", "parquet")
TRIAL_COLUMNS = [
    "trial_id", "sweep_id", "sweep", "task", "strategy", "model", "length", "position", "actual_length",
    "actual_position", "answer", "score", "error", "calls", "input_tokens", "output_tokens", "cost_usd",
    "params", "gold_pages", "retrieved_pages", "cited_pages", "subspan_em", "exact", "page_recall",
    "page_precision", "latency_s", "parse_error", "question", "answers", "raw_answer", "cached_calls",
    "trial_key", "created", "documents", "gold_index",
]
LIST_COLUMNS = ("gold_pages", "retrieved_pages", "cited_pages", "answers")
INT_COLUMNS = ("length", "documents", "gold_index", "actual_length", "actual_position", "calls", "cached_calls", "input_tokens",
               "output_tokens")


def fmt_of(path: str | Path, fmt: str | None) -> str:
    fmt = (fmt or Path(path).suffix.lstrip(".")).lower()
    fmt = {"json": "jsonl", "pq": "parquet", "ndjson": "jsonl"}.get(fmt, fmt)
    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r}; choose one of {', '.join(FORMATS)}")
    return fmt


def export_frame(frame, path: str | Path, fmt: str | None = None) -> Path:
    path = Path(path)
    fmt = fmt_of(path, fmt)
    path.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "csv":
        out = frame.copy()
        for c in LIST_COLUMNS:
            out[c] = out[c].map(lambda v: None if v is None else json.dumps(list(v)))
        out.to_csv(path, index=False)
    elif fmt == "jsonl":
        frame.to_json(path, orient="records", lines=True, force_ascii=False)
    else:
        frame.to_parquet(path, index=False)
    return path


def read_frame(path: str | Path, fmt: str | None = None):
    import pandas as pd

    fmt = fmt_of(path, fmt)
    if fmt == "csv":
        return pd.read_csv(path, dtype={"params": str, "answer": str, "error": str, "task": str})
    if fmt == "jsonl":
        return pd.read_json(path, lines=True, dtype=False)
    return pd.read_parquet(path)


def _clean(value):
    if value is None:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    if hasattr(value, "tolist"):  # numpy arrays and scalars
        return value.tolist()
    return value


def trial_rows_from_frame(frame):
    """(source sweep name, [trial dict]) groups, with list columns decoded and a trial key on each."""
    missing = {"task", "strategy", "model", "score"} - set(frame.columns)
    if missing:
        raise ValueError(f"not a trials export: no column(s) {', '.join(sorted(missing))}")
    groups: dict[str, list[dict]] = {}
    for rec in frame.to_dict("records"):
        row = {k: _clean(v) for k, v in rec.items()}
        for c in LIST_COLUMNS:
            v = row.get(c)
            if isinstance(v, str):
                try:
                    v = json.loads(v)
                except ValueError:
                    v = [v]
            row[c] = list(v) if v is not None else None
        for c in INT_COLUMNS:
            if row.get(c) is not None:
                row[c] = int(row[c])
        if not row.get("trial_key"):
            blob = json.dumps({k: row.get(k) for k in ("task", "strategy", "params", "model", "length",
                                                        "position")}, sort_keys=True, default=str)
            row["trial_key"] = hashlib.sha256(blob.encode()).hexdigest()[:24]
        groups.setdefault(str(row.get("sweep") or "imported"), []).append(row)
    return list(groups.items())
