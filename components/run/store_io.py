"""Trials to and from files (csv, jsonl, parquet), so a class can share its runs."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

from components.run.schema import INT_COLUMNS, JSON_COLUMNS, STORED

FORMATS = ("csv", "jsonl", "parquet")



def fmt_of(path: str | Path, fmt: str | None) -> str:
    fmt = (fmt or Path(path).suffix.lstrip(".")).lower()
    fmt = {"json": "jsonl", "pq": "parquet", "ndjson": "jsonl"}.get(fmt, fmt)
    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r}; choose one of {', '.join(FORMATS)}")
    return fmt


def frame_bytes(frame, fmt: str) -> bytes:
    """A trials frame as the bytes of a csv, jsonl or parquet file (the app's downloads; the CLI's export)."""
    import io

    fmt = fmt_of(f"x.{fmt}", fmt)
    out = frame.copy()
    present = [c for c in JSON_COLUMNS if c in out]
    if fmt == "csv":
        for c in present:
            out[c] = out[c].map(lambda v: None if v is None else json.dumps(list(v)))
        return out.to_csv(index=False).encode("utf-8")
    if fmt == "jsonl":
        return out.to_json(orient="records", lines=True, force_ascii=False).encode("utf-8")
    for c in out.columns:  # parquet wants one type per column: lists stay lists, the rest text
        if out[c].dtype == object:
            out[c] = out[c].map(lambda v: v if v is None or isinstance(v, str | list) else str(v))
    buf = io.BytesIO()
    out.to_parquet(buf, index=False)
    return buf.getvalue()


def export_frame(frame, path: str | Path, fmt: str | None = None) -> Path:
    path = Path(path)
    data = frame_bytes(frame, fmt_of(path, fmt))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
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
        for c in JSON_COLUMNS:
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
                                                        "position", "documents", "gold_index")
                               if row.get(k) is not None}, sort_keys=True, default=str)
            row["trial_key"] = hashlib.sha256(blob.encode()).hexdigest()[:24]
        sweep = str(row.get("sweep") or "imported")
        groups.setdefault(sweep, []).append({k: row[k] for k in STORED if k in row})
    return list(groups.items())
