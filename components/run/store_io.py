"""Trials to and from files (csv, jsonl, parquet), so a class can share its runs.

Every CSV this project writes goes through `csv_cell`: a text cell that a spreadsheet would run as a
formula (it starts with = + - @, a tab or a carriage return) gets a leading `'`, and reading a CSV
takes it off again (`csv_text`), so an export imports back unchanged. Numbers stay numbers.

An import is bounded before its data is read: at most MAX_IMPORT_ROWS rows and MAX_IMPORT_BYTES
bytes unpacked (a CSV or JSON-lines file by its size; a parquet file by its metadata, and its text
columns by what they would unpack to, computed from their dictionaries before any value is copied).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from components.core.cells import Cell
from components.run.schema import FIELDS, INT_COLUMNS, JSON_COLUMNS, STORED, encode, key_of

FORMATS = ("csv", "jsonl", "parquet")
MAX_IMPORT_ROWS = 25_000  # trials in one imported file
MAX_IMPORT_BYTES = 32 * 1024 * 1024  # an imported file's data, unpacked
MAX_IMPORT_COLUMNS = 1_000
REAL_COLUMNS = tuple(f.name for f in FIELDS if f.metadata["sql"] == "REAL")
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")  # what makes a spreadsheet read a cell as a formula


def csv_cell(value):
    """A value as a CSV cell that no spreadsheet runs: a text starting with = + - @, a tab or a carriage
    return gets a leading `'` (as does a text starting with `'` and then one of those, or a second `'`,
    so `csv_text` gives back exactly what was written). Anything that is not text (a number, None) is
    returned as it is: a negative score is a number, not a formula."""
    if (
        isinstance(value, str)
        and value
        and (value.startswith(FORMULA_START) or (value[0] == "'" and value[1:2] in (*FORMULA_START, "'")))
    ):
        return "'" + value
    return value


def csv_quoting(cells) -> int:
    """How to quote a row (or a whole file) of cells: csv.QUOTE_ALL when a text holds a carriage return,
    which Python's csv leaves unquoted when lines end in \\n (a reader would start a new row there, and the
    rest of the cell would be a cell of its own, unneutralised), else csv.QUOTE_MINIMAL."""
    import csv

    return csv.QUOTE_ALL if any(isinstance(v, str) and "\r" in v for v in cells) else csv.QUOTE_MINIMAL


def csv_text(value):
    """The text `csv_cell` was given back from the cell it wrote (a text cell read from a CSV)."""
    if isinstance(value, str) and value[:1] == "'" and value[1:2] in (*FORMULA_START, "'"):
        return value[1:]
    return value


def fmt_of(path: str | Path, fmt: str | None) -> str:
    fmt = (fmt or Path(path).suffix.lstrip(".")).lower()
    fmt = {"json": "jsonl", "pq": "parquet", "ndjson": "jsonl"}.get(fmt, fmt)
    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r}; choose one of {', '.join(FORMATS)}")
    return fmt


def _text_columns(frame) -> list:
    import pandas as pd

    return [
        c for c in frame.columns if frame[c].dtype == object or isinstance(frame[c].dtype, pd.StringDtype)
    ]


def frame_bytes(frame, fmt: str) -> bytes:
    """A trials frame as the bytes of a csv, jsonl or parquet file (the app's downloads; the CLI's export)."""
    import io

    fmt = fmt_of(f"x.{fmt}", fmt)
    out = frame.copy()
    present = [c for c in JSON_COLUMNS if c in out]
    if fmt == "csv":
        for c in present:
            out[c] = out[c].map(lambda v: None if v is None else json.dumps(list(v)))
        texts = _text_columns(out)
        for c in texts:  # a numeric column is never a formula
            out[c] = out[c].map(csv_cell)
        quoting = csv_quoting(v for c in texts for v in out[c])
        return out.to_csv(index=False, quoting=quoting).encode("utf-8")
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


class ImportTooLarge(ValueError):
    """An export too large to import; the message is one line for the user."""


def _too_many_rows(name: str, rows: str) -> ImportTooLarge:
    return ImportTooLarge(
        f"{name} holds {rows} rows; the limit is {MAX_IMPORT_ROWS:,} trials a file: "
        "export fewer sweeps at a time"
    )


def _too_big(name: str, size: str) -> ImportTooLarge:
    return ImportTooLarge(
        f"{name} unpacks to {size}; the limit is {MAX_IMPORT_BYTES // 2**20} MB a file: "
        "export fewer sweeps at a time"
    )


def _mb(n: float) -> str:
    return f"{n / 2**20:,.0f} MB" if n >= 2**20 else f"{n / 2**20:.1f} MB"


def read_frame(path: str | Path, fmt: str | None = None):
    """The trials of an export as a frame, bounded (rows, bytes unpacked) before its data is read;
    ImportTooLarge (a ValueError) with one line past a bound."""
    import pandas as pd

    path = Path(path)
    fmt = fmt_of(path, fmt)
    if fmt == "parquet":
        return _read_parquet(path)
    size = path.stat().st_size
    if size > MAX_IMPORT_BYTES:
        raise _too_big(path.name, _mb(size))
    try:
        if fmt == "csv":
            frame = pd.read_csv(
                path,
                dtype={"params": str, "answer": str, "error": str, "task": str},
                nrows=MAX_IMPORT_ROWS + 1,
            )
            for c in _text_columns(frame):
                frame[c] = frame[c].map(csv_text)
        else:
            frame = pd.read_json(path, lines=True, dtype=False, nrows=MAX_IMPORT_ROWS + 1)
    except UnicodeDecodeError:
        raise _unreadable(path.name, fmt, "not UTF-8 text") from None
    except pd.errors.EmptyDataError:
        raise _unreadable(path.name, fmt, "it is empty") from None
    except (
        ValueError,
        TypeError,
        OverflowError,
        RecursionError,
    ) as exc:  # pandas' parser errors are ValueErrors
        raise _unreadable(
            path.name, fmt, str(exc).strip().splitlines()[0][:100] if str(exc).strip() else ""
        ) from None
    if len(frame) > MAX_IMPORT_ROWS:
        raise _too_many_rows(path.name, f"more than {MAX_IMPORT_ROWS:,}")
    return frame


def _unreadable(name: str, fmt: str, why: str) -> ValueError:
    because = f" ({why})" if why else ""
    return ValueError(
        f"{name} is not a readable {fmt} export{because}; give a file written by Results' download or by "
        f"`litm results --format {fmt}`"
    )


def _unpacked_bytes(array) -> int:
    """What an Arrow array takes once its dictionaries are unpacked, computed without unpacking them."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(array, pa.DictionaryArray):
        kind = array.dictionary.type
        if not any(
            test(kind)
            for test in (
                pa.types.is_string,
                pa.types.is_large_string,
                pa.types.is_binary,
                pa.types.is_large_binary,
            )
        ):
            return array.indices.nbytes + array.dictionary.nbytes
        total = pc.sum(pc.take(pc.binary_length(array.dictionary), array.indices)).as_py() or 0
        return 8 * len(array) + int(total)  # offsets and values once unpacked
    if isinstance(array, pa.ListArray | pa.LargeListArray):
        return array.offsets.nbytes + _unpacked_bytes(array.flatten())
    if isinstance(array, pa.StructArray):
        return sum(_unpacked_bytes(array.field(i)) for i in range(array.type.num_fields))
    return array.nbytes


def _read_parquet(path: Path):
    """A parquet export: rows, columns and sizes from its metadata first, then its text columns read as
    dictionaries and what they unpack to summed from the dictionaries (a 35 KB file of 2,000,000
    dictionary-encoded rows, or of a long text repeated on every row, stops here), only then unpacked."""
    import pyarrow.parquet as pq

    try:
        meta = pq.ParquetFile(path)
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path.name} is not a readable parquet file ({exc.__class__.__name__})") from None
    info = meta.metadata
    if info.num_rows > MAX_IMPORT_ROWS:
        raise _too_many_rows(path.name, f"{info.num_rows:,}")
    if info.num_columns > MAX_IMPORT_COLUMNS:
        raise ValueError(f"{path.name} has {info.num_columns:,} columns; is it a trials export?")
    stored = sum(info.row_group(i).total_byte_size for i in range(info.num_row_groups))
    if stored > MAX_IMPORT_BYTES:
        raise _too_big(path.name, _mb(stored))
    texts = [
        meta.schema.column(i).path
        for i in range(info.num_columns)
        if meta.schema.column(i).physical_type == "BYTE_ARRAY"
    ]
    table = pq.ParquetFile(path, read_dictionary=texts).read()
    unpacked = sum(_unpacked_bytes(chunk) for column in table.columns for chunk in column.chunks)
    if unpacked > MAX_IMPORT_BYTES:
        raise _too_big(path.name, _mb(unpacked))
    return table.cast(meta.schema_arrow).to_pandas()


def _clean(value):
    if value is None:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    if hasattr(value, "tolist"):  # numpy arrays and scalars
        return value.tolist()
    return value


def _records(frame, size: int = 5_000):
    """The rows of a frame as dicts, a few thousand at a time (never a second copy of the whole frame)."""
    for start in range(0, len(frame), size):
        yield from frame.iloc[start : start + size].to_dict("records")


def _number(row: dict, column: str, whole: bool, name: str, n: int):
    """A number column's value as the store keeps it (None when empty); anything else is one line naming the
    file, the row and the column."""
    value = row.get(column)
    if value is None or (isinstance(value, int | float) and not isinstance(value, bool) and not whole):
        return value
    try:
        number = float(value)
        if whole:
            if not number.is_integer() or not -(2**63) <= int(number) < 2**63:
                raise ValueError
            return int(number)
        return number
    except (ValueError, TypeError, OverflowError):
        kind = "a whole number" if whole else "a number"
        raise ValueError(
            f"{name}: row {n}: {column} must be {kind}, got {str(value)[:40]!r}; is it a trials export "
            "written by Results' download or by `litm results`?"
        ) from None


def trial_rows_from_frame(frame, name: str = "the file"):
    """(source sweep name, [trial dict]) groups, with list columns decoded, number columns checked and a
    trial key on each; a file that is not a trials export is one line naming it (`name`)."""
    missing = {"task", "strategy", "model", "score"} - set(frame.columns)
    if missing:
        raise ValueError(
            f"{name} is not a trials export (it lacks the column(s) {', '.join(sorted(missing))}); give a file written by "
            "Results' download or by `litm results --format csv`"
        )
    groups: dict[str, list[dict]] = {}
    for n, rec in enumerate(_records(frame), 1):
        row = {k: _clean(v) for k, v in rec.items()}
        for c in JSON_COLUMNS:
            v = row.get(c)
            if isinstance(v, str):
                try:
                    v = json.loads(v)
                except (ValueError, RecursionError):
                    v = [v]
            row[c] = list(v) if isinstance(v, list | tuple) else None if v is None else [v]
        for c in INT_COLUMNS:
            row[c] = _number(row, c, True, name, n)
        for c in REAL_COLUMNS:
            row[c] = _number(row, c, False, name, n)
        if not row.get("trial_key"):
            named = ("task", "strategy", "params", "model", *Cell.columns)
            row["trial_key"] = key_of({k: row.get(k) for k in named if row.get(k) is not None})
        sweep = str(row.get("sweep") or "imported")
        groups.setdefault(sweep, []).append({k: row[k] for k in STORED if k in row})
    return list(groups.items())


def put_trials(store, sweep_id: int, trials: list[dict]) -> int:
    """Many trials (schema rows, no call keys) in one transaction: imports and benchmarks."""
    cols = ", ".join(STORED)
    values = [(sweep_id, *[encode(f, t.get(f)) for f in STORED]) for t in trials]
    with store.transaction(immediate=True) as db:
        db.executemany(
            f"INSERT OR REPLACE INTO trials (sweep_id, {cols}, created) "
            f"VALUES ({', '.join('?' * (len(STORED) + 1))}, strftime('%s','now'))",
            values,
        )
    return len(values)
