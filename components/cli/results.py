"""`litm results`: the trials of a run store as CSV or JSON (columns: components.run.schema), streamed
row by row, so memory stays flat on a store of any size; a CSV's text cells that a spreadsheet would
run as formulas get a leading `'` (store_io.csv_cell). `--json`: every curve instead (accuracy at each
answer position with n and its interval, and the curve's shape: components.report.shape), and the
multi-question design's table (a row per setting, model, K and Q: accuracy with its interval, the four
categories, calls and tokens per question: components.report.multiq.table), which has no answer positions,
and the LLM judge's audit against the string metrics (components.report.judge_audit; as text: --audit).
With `--metric attention`, also `bias`: the positional attention bias apart from relevance, the mass of the
documents that are not gold by position with n and a 95% interval (components.report.attention.bias_curves)."""

from __future__ import annotations

import csv
import json
import sys

from components.cli.common import add_db, db_path

ATTENTION = ("attention", "attention_gold")  # the attention measure's metric, by name or column


def add_parser(sub, name):
    p = sub.add_parser(name, help="print the trials of a sweep (csv or json)")
    add_db(p)
    p.add_argument("--sweep", help="sweep id or name (default: all sweeps)")
    p.add_argument("--format", choices=("csv", "json"), default="csv")
    p.add_argument("--all-columns", action="store_true", help="every stored column")
    p.add_argument(
        "--audit",
        action="store_true",
        help="the LLM judge against best subspan EM and fuzzy match: n, raw agreement, Cohen's kappa "
        "and the disagreements, for every sweep that has both (also in --json as judge_audit)",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="one JSON object: every curve (arm x sweep x size) with its points and shape statistics, "
        "and the multi-question design's table",
    )
    p.add_argument(
        "--metric",
        default="primary",
        help="with --json: the value of the curves: primary (each strategy's own metric, the default), "
        "a metric name (subspan-em, fuzzy, ...) or a numeric trial column (e.g. answer_logprob); attention "
        "also gives the positional bias (the distractors' attention by position) as bias",
    )
    p.set_defaults(func=run)


def curve_values(trials, metric: str):
    """Each trial's value for --metric: its strategy's primary metric, a named metric, or a numeric column."""
    from components.core.metrics import BY_COLUMN, METRICS
    from components.report.sweeps import primary_values
    from components.run.schema import SQL_TYPES

    if metric == "primary":
        return primary_values(trials)
    found = METRICS.get(metric) or BY_COLUMN.get(metric)
    column = found.column if found else metric
    if SQL_TYPES.get(column) not in ("REAL", "INTEGER"):
        raise ValueError(f"--metric: {metric!r} is not a metric or a numeric trial column")
    return trials[column]


def curves_json(args) -> int:
    from components.report.shape import METHOD, curves
    from components.run.reader import SUMMARY_COLUMNS, summary_frame
    from components.run.store import RunStore, shipped_paths

    db = db_path(args)
    if not db.is_file():
        raise FileNotFoundError(f"no run store at {db}")
    shipped = db.resolve() in {p.resolve() for p in shipped_paths()}  # shipped stores must not change
    store = RunStore(db, readonly=True) if shipped else RunStore.for_reading(db)
    columns = list(SUMMARY_COLUMNS)
    if args.metric not in ("primary", *columns):
        from components.core.metrics import METRICS

        columns.append(METRICS[args.metric].column if args.metric in METRICS else args.metric)
    if args.metric in ATTENTION:
        columns.append("attention_pages")  # every page's mass: the distractors' give the bias
    try:
        trials = summary_frame(store, args.sweep, columns=list(dict.fromkeys(columns)))
    finally:
        store.close()
    found = curves(trials, curve_values(trials, args.metric))
    bias = {}
    if args.metric in ATTENTION:  # the positional bias, relevance held out (report.attention.bias_curves)
        from components.report.attention import bias_curves

        bias = {"bias": bias_curves(trials)}
    obj = _clean(
        {
            "metric": args.metric,
            "curves": found,
            **bias,
            "method": METHOD,
            "multi_question": multi(trials, args.metric),
            "judge_audit": judge_audits(db, args.sweep, trials),
        }
    )
    json.dump(obj, sys.stdout, ensure_ascii=False, allow_nan=False)
    sys.stdout.write("\n")
    return 0


def judge_audits(db, sweep, trials) -> list[dict]:
    """The judge's audits (report.judge_audit) of the sweeps with judged trials; [] when there are none
    (the trials' texts are read only then)."""
    from components.report.judge_audit import audits
    from components.run.store import RunStore

    if "judge" not in trials.columns or not trials["judge"].notna().any():
        return []
    store = RunStore(db, readonly=True)
    try:
        return audits(store.trials_frame(sweep))
    finally:
        store.close()


def audit_text(args) -> int:
    from components.report.judge_audit import audits, lines
    from components.run.store import RunStore

    db = db_path(args)
    if not db.is_file():
        raise FileNotFoundError(f"no run store at {db}")
    store = RunStore(db, readonly=True)
    try:
        found = audits(store.trials_frame(args.sweep))
    finally:
        store.close()
    sys.stdout.write("\n".join(lines(found)) + "\n")
    return 0


def multi(trials, metric: str) -> list[dict]:
    """The multi-question trials' table (report.multiq.table), a dict per row; [] without such trials."""
    from components.core.metrics import BY_COLUMN, METRICS, PRIMARY
    from components.report import multiq

    found = METRICS.get(metric) or BY_COLUMN.get(metric)
    table = multiq.table(trials, PRIMARY if metric == "primary" else found.column if found else metric)
    return table.to_dict(orient="records")


def _clean(x):
    """Plain JSON: numpy numbers as Python ones, NaN as null, a record (report.shape.CurveShape) as its dict."""
    if hasattr(x, "to_dict"):
        x = x.to_dict()
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_clean(v) for v in x]
    if hasattr(x, "item") and not isinstance(x, str):
        x = x.item()
    if isinstance(x, float) and x != x:
        return None
    return x


def run(args) -> int:
    if args.json:
        return curves_json(args)
    if args.audit:
        return audit_text(args)
    from components.run.reader import iter_rows
    from components.run.schema import EXPORT_COLUMNS, JSON_COLUMNS, RESULT_COLUMNS
    from components.run.store import RunStore

    db = db_path(args)
    store = RunStore.for_reading(db)
    columns = EXPORT_COLUMNS if args.all_columns else RESULT_COLUMNS
    rows = iter_rows(store, columns, args.sweep)
    out = sys.stdout
    if args.format == "csv":
        from components.run.store_io import csv_cell, csv_quoting

        writer = csv.writer(out, lineterminator="\n")
        quoted = csv.writer(
            out, lineterminator="\n", quoting=csv.QUOTE_ALL
        )  # a row holding a carriage return
        writer.writerow(columns)
        for row in rows:
            cells = ["" if v is None else csv_cell(v) for v in row]
            (writer if csv_quoting(cells) == csv.QUOTE_MINIMAL else quoted).writerow(cells)
        return 0
    lists = {i for i, c in enumerate(columns) if c in JSON_COLUMNS}
    out.write("[")
    for n, row in enumerate(rows):
        record = {
            c: (json.loads(v) if i in lists and v is not None else v)
            for i, (c, v) in enumerate(zip(columns, row, strict=True))
        }
        out.write(("," if n else "") + "\n" + json.dumps(record, ensure_ascii=False))
    out.write("\n]\n")
    return 0
