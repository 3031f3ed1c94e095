"""`litm sweep CONFIG.toml` runs (or resumes) a sweep; `litm results` prints its trials as CSV or JSON."""

from __future__ import annotations

import sys
import time

DEFAULT_DB = "runs/litm.sqlite"
RESULT_COLUMNS = ["sweep", "task", "strategy", "model", "params", "length", "position", "actual_length",
                  "actual_position", "answer", "score", "subspan_em", "exact", "page_recall", "page_precision",
                  "error", "calls", "input_tokens", "output_tokens", "cost_usd", "latency_s"]


def add_parser(sub, name):
    if name == "sweep":
        p = sub.add_parser(name, help="run or resume a sweep from a TOML config")
        p.add_argument("config", help="sweep config (TOML)")
        p.add_argument("--db", default=DEFAULT_DB, help=f"run store (default {DEFAULT_DB})")
        p.add_argument("--dry-run", action="store_true", help="print calls, tokens and estimated cost; send nothing")
        p.add_argument("--retry-errors", action="store_true", help="run again the trials that failed")
        p.add_argument("--quiet", action="store_true", help="no progress line")
        p.set_defaults(func=run)
    elif name == "import":
        p = sub.add_parser(name, help="add trials from an export (csv, jsonl or parquet) to a run store")
        p.add_argument("path", help="a file written by the app's download or by the run store's export")
        p.add_argument("--db", default=DEFAULT_DB, help=f"run store (default {DEFAULT_DB})")
        p.set_defaults(func=run_import)
    else:
        p = sub.add_parser(name, help="print the trials of a sweep (csv or json)")
        p.add_argument("--db", default=DEFAULT_DB, help=f"run store (default {DEFAULT_DB})")
        p.add_argument("--sweep", help="sweep id or name (default: all sweeps)")
        p.add_argument("--format", choices=("csv", "json"), default="csv")
        p.add_argument("--all-columns", action="store_true", help="every stored column")
        p.set_defaults(func=run_results)


class ProgressLine:
    """A plain-text progress bar on stderr, redrawn in place."""

    def __init__(self, stream=None):
        self.stream = stream or sys.stderr
        self.width = 0

    def __call__(self, p) -> None:
        frac = p.done / p.total if p.total else 1.0
        bar = "#" * int(frac * 30)
        line = (f"\r[{bar:<30}] {p.done}/{p.total} trials  errors {p.errors}  sent {p.sent}  cached {p.cached}"
                f"  {p.calls_per_s:.1f} calls/s  ${p.spend_usd:.4f}")
        self.width = max(self.width, len(line))
        self.stream.write(line.ljust(self.width))
        self.stream.flush()

    def end(self) -> None:
        if self.width:
            self.stream.write("\n")
            self.stream.flush()


def run(args) -> int:
    from components.providers.base import ProviderError
    from components.run.config import SweepConfig
    from components.run.estimate import estimate
    from components.run.store import RunStore

    config = SweepConfig.from_toml(args.config)
    if args.dry_run:
        est = estimate(config)
        print(f"sweep {config.name!r}: {len(config.models)} model(s) x {len(config.strategies)} strategies x "
              f"{len(config.lengths)} lengths x {len(config.positions)} positions")
        print("\n".join(est.lines()))
        return 0
    from components.run.runner import run_sweep

    store = RunStore(args.db)
    line = None if args.quiet else ProgressLine()
    t0 = time.perf_counter()
    try:
        summary = run_sweep(config, store, progress=line, retry_errors=args.retry_errors)
    except ProviderError as exc:  # e.g. a missing key: nothing was sent
        print(f"litm: {exc}", file=sys.stderr)
        return 1
    finally:
        if line is not None:
            line.end()
    print(f"sweep {summary.name!r} (id {summary.sweep_id}): {summary.status}"
          + (f" ({summary.reason})" if summary.reason else ""))
    print(f"trials {summary.done}/{summary.total} (ran {summary.ran}, already present {summary.skipped}), "
          f"errors {summary.errors}, calls sent {summary.calls_sent}, cached {summary.cached_calls}, "
          f"${summary.spend_usd:.4f}, {time.perf_counter() - t0:.1f}s; store {args.db}")
    return 0 if summary.status == "done" else 1


def run_results(args) -> int:
    from pathlib import Path

    from components.run.store import RunStore

    if not Path(args.db).exists():
        raise FileNotFoundError(f"no run store at {args.db}")
    store = RunStore(args.db)
    frame = store.trials_frame(args.sweep)
    if not args.all_columns:
        frame = frame[RESULT_COLUMNS]
    if args.format == "csv":
        import json

        frame = frame.copy()
        for c in ("gold_pages", "retrieved_pages", "cited_pages", "answers"):
            if c in frame:
                frame[c] = frame[c].map(lambda v: None if v is None else json.dumps(list(v)))
        frame.to_csv(sys.stdout, index=False)
    else:
        sys.stdout.write(frame.to_json(orient="records", force_ascii=False, indent=1))
        sys.stdout.write("\n")
    return 0


def run_import(args) -> int:
    """So a class can share runs: each sweep in the file becomes a new sweep '<name> (imported ...)'."""
    from pathlib import Path

    from components.run.store import RunStore

    path = Path(args.path)
    if not path.is_file():
        raise FileNotFoundError(f"no such file: {path}")
    store = RunStore(args.db)
    try:
        ids = store.import_trials(path)
        n = sum(len(store.trials_frame(i)) for i in ids)
    finally:
        store.close()
    print(f"imported {n} trial(s) in {len(ids)} sweep(s) into {args.db}")
    return 0
