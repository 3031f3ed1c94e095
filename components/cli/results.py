"""`litm results`: the trials of a run store as CSV or JSON (columns: components.run.schema), streamed
row by row, so memory stays flat on a store of any size."""

from __future__ import annotations

import csv
import json
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
    from components.run.reader import iter_rows
    from components.run.schema import EXPORT_COLUMNS, JSON_COLUMNS, RESULT_COLUMNS
    from components.run.store import RunStore

    db = db_path(args)
    store = RunStore.for_reading(db)
    columns = EXPORT_COLUMNS if args.all_columns else RESULT_COLUMNS
    rows = iter_rows(store, columns, args.sweep)
    out = sys.stdout
    if args.format == "csv":
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(columns)
        for row in rows:
            writer.writerow(["" if v is None else v for v in row])
        return 0
    lists = {i for i, c in enumerate(columns) if c in JSON_COLUMNS}
    out.write("[")
    for n, row in enumerate(rows):
        record = {c: (json.loads(v) if i in lists and v is not None else v) for i, (c, v) in enumerate(zip(columns, row, strict=True))}
        out.write(("," if n else "") + "\n" + json.dumps(record, ensure_ascii=False))
    out.write("\n]\n")
    return 0
