"""`litm import FILE ...`: add trials someone exported (csv, jsonl, parquet) to a run store, so a class can
share its runs; each sweep in the file becomes a new sweep '<name> (imported ...)'. A run store (.sqlite),
such as a part of a sweep run with `litm sweep --shard I/N`, is merged instead (run/merge.py): its sweeps
join the sweeps of the same name and config, nothing lost or doubled."""

from __future__ import annotations

from pathlib import Path

from components.cli.common import add_db, db_path


def add_parser(sub, name):
    p = sub.add_parser(name, help="add trials from an export (csv, jsonl or parquet) to a run store")
    p.add_argument(
        "path",
        nargs="+",
        help="a file written by the app's download or by `litm results`, or a run store to merge (the "
        "parts of a sweep run with --shard)",
    )
    add_db(p)
    p.set_defaults(func=run)


def run(args) -> int:
    from components.run.merge import is_sqlite, merge_store
    from components.run.store import RunStore

    paths = [Path(p) for p in args.path]
    for path in paths:
        if path.is_dir():
            raise ValueError(
                f"{path} is a folder, not a file: give an export (csv, jsonl, parquet) or a run store"
            )
        if not path.is_file():
            raise FileNotFoundError(f"cannot read {path}: no such file")
    db = db_path(args)
    with RunStore(db) as store:
        for path in paths:
            if is_sqlite(path):
                print(merge_store(store, path).line())
                continue
            ids = store.import_trials(path)
            n = sum(len(store.trial_totals(i)) for i in ids)  # counted, not read back
            print(f"imported {n} trial(s) in {len(ids)} sweep(s) into {db}")
    return 0
