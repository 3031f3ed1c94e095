"""`litm results`: the trials of a run store as CSV or JSON (its columns: components.run.schema)."""

from __future__ import annotations

import sys

from components.cli.common import add_db, db_path


def add_parser(sub, name):
    p = sub.add_parser(name, help="print the trials of a sweep (csv or json)")
    add_db(p)
    p.add_argument("--sweep", help="sweep id or name (default: all sweeps)")
    p.add_argument("--format", choices=("csv", "json"), default="csv")
    p.add_argument("--all-columns", action="store_true", help="every stored column")
    p.set_defaults(func=run)


def run(args) -> int:
    from components.run.schema import RESULT_COLUMNS
    from components.run.store import RunStore
    from components.run.store_io import frame_bytes

    db = db_path(args)
    if not db.exists():
        raise FileNotFoundError(f"no run store at {db}")
    store = RunStore(db)
    frame = store.trials_frame(args.sweep)
    if not args.all_columns:
        frame = frame[RESULT_COLUMNS]
    if args.format == "csv":
        sys.stdout.buffer.write(frame_bytes(frame, "csv"))
    else:
        sys.stdout.write(frame.to_json(orient="records", force_ascii=False, indent=1))
        sys.stdout.write("\n")
    return 0
