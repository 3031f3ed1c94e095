"""`litm sweep CONFIG.toml`: run (or resume) a sweep; `--dry-run` prints what it would cost."""

from __future__ import annotations

import sys
import time

from components.cli.common import EXIT_OK, EXIT_STOPPED, EXIT_TRIAL_ERRORS, add_db, db_path, warn_bad_rows
from components.core import words


def add_parser(sub, name):
    p = sub.add_parser(name, help="run or resume a sweep from a TOML config")
    p.add_argument("config", help="sweep config (TOML), or the name of a bundled one (e.g. local-qwen-facts)")
    add_db(p)
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="print the calls to send and those already cached in the store, their tokens and "
        "estimated cost; send nothing",
    )
    p.add_argument(
        "--shard",
        metavar="I/N",
        default=None,
        help="run only part I of N (0 to N-1) of the sweep's trials, the same part on every machine, into "
        "this store; `litm import` merges the parts' stores into the whole sweep (docs/sweeps.md)",
    )
    p.add_argument("--retry-errors", action="store_true", help="run again the trials that failed")
    p.add_argument("--quiet", action="store_true", help="no progress line")
    p.add_argument(
        "--mode",
        choices=("live", "batch"),
        default=None,
        help="live calls, or the providers' batch interfaces (half price, results within 24 h); "
        "default: the config's mode",
    )
    p.add_argument(
        "--poll-interval",
        type=float,
        default=None,
        metavar="SECONDS",
        help="batch mode: seconds between polls of a pending batch (default 30)",
    )
    p.add_argument(
        "--cancel",
        action="store_true",
        help="batch mode: cancel the sweep's pending batches at the provider and store what they answered",
    )
    p.add_argument(
        "--steal-claims",
        action="store_true",
        help="take over the calls other processes claimed in the store (a process killed on another "
        "machine holds its claims for 15 minutes); a call another process is still sending may then "
        "be paid twice",
    )
    p.set_defaults(func=run)


def elapsed(seconds: float) -> str:
    """'55 s', '7 min 30 s': the time a sweep has run, redrawn by the runner's ticker while a call waits."""
    seconds = int(max(0.0, seconds))
    return f"{seconds} s" if seconds < 60 else f"{seconds // 60} min {seconds % 60:02d} s"


class ClaimsNote:
    """--quiet's only progress: the first time this sweep waits for a call another process claimed (the
    runner's note, components/run/caller.py), that line once on stderr; claims on other sweeps' calls are
    never named."""

    def __init__(self, stream=None):
        self.stream = stream or sys.stderr
        self.said = False

    def __call__(self, p) -> None:
        if not self.said and p.note and "claimed by another process" in p.note:
            print(f"litm: {p.note}", file=self.stream, flush=True)
            self.said = True

    def end(self) -> None:
        """Nothing drawn, nothing to end."""


class ProgressLine:
    """A plain-text progress bar on stderr, redrawn in place."""

    def __init__(self, stream=None):
        self.stream = stream or sys.stderr
        self.width = 0

    def __call__(self, p) -> None:
        frac = p.done / p.total if p.total else 1.0
        bar = "#" * int(frac * 30)
        sent = f"sent {p.sent}" + (f" ({p.requests} HTTP requests)" if p.requests > p.sent else "")
        line = (
            f"\r[{bar:<30}] {p.done}/{p.total} trials  errors {p.errors}  {sent}  cached {p.cached}"
            f"  {p.calls_per_s:.1f} calls/s  ${p.spend_usd:.4f}  elapsed {elapsed(p.elapsed_s)}"
            + (f"  {p.note}" if p.note else "")
        )
        if getattr(p, "batch", ""):
            line += f"  | {p.batch}"
        self.width = max(self.width, len(line))
        self.stream.write(line.ljust(self.width))
        self.stream.flush()

    def end(self) -> None:
        if self.width:
            self.stream.write("\n")
            self.stream.flush()


def describe(config) -> str:
    from components.run.config import count_cells
    from components.run.plan import left_out

    if getattr(config, "design", None):
        from components.run.multiq import describe as describe_design

        return describe_design(config)
    grid = (
        f"{words.count(len(config.documents), 'document count')} x {words.count(len(config.gold_index), 'gold index', 'gold indices')}"
        if config.documents
        else f"{words.count(len(config.lengths), 'length')} x {words.count(len(config.positions), 'position')}"
        if config.positions_tokens is None
        else f"{words.count(len(config.lengths), 'length')} x the positions of positions_tokens up to each"
    )
    arms = sum(config.count_settings(s) for s in config.strategies)
    line = (
        f"sweep {config.name!r}: {words.count(len(config.models), 'model')} x {words.count(arms, 'strategy setting')} x {grid} "
        f"({words.count(count_cells(config), 'cell')})"
    )
    if config.mode == "batch":
        line += "; mode batch (the providers' batch interfaces, half price)"
    skipped = left_out(config)
    if skipped:
        more = f" and {len(skipped) - SHOWN:,} more" if len(skipped) > SHOWN else ""
        line += (
            "; left out (no such index): "
            + ", ".join(f"index {i} of {n} documents" for n, i in skipped[:SHOWN])
            + more
        )
    return line


SHOWN = 10  # left-out cells named on the sweep's first line


def planned(config, shard_text: str | None):
    """The trials to run: None (the runner plans the whole sweep itself), or part I of N (--shard)."""
    if shard_text is None:
        return None
    from components.run.plan import parse_shard, plan, shard

    index, count = parse_shard(shard_text)
    return shard(plan(config), index, count)


def dry_run(config, db, retry_errors: bool = False, specs=None):
    """The estimate of what running the sweep (or its part `specs`) would send and what the store (if there
    is one) already holds; the store is read, never created."""
    from components.run.estimate import estimate
    from components.run.plan import plan
    from components.run.store import RunStore

    specs = plan(config) if specs is None else specs  # planned once, for the estimate and the cache look-ups
    if not db.is_file():
        return estimate(config, specs=specs)
    with RunStore.for_reading(db) as store:
        return estimate(config, specs=specs, store=store, retry_errors=retry_errors)


def claims(store, steal: bool) -> None:
    """--steal-claims: calls other processes claimed in the store, taken over. Without it nothing is said
    here: a claim on one of this sweep's calls is named when the sweep waits for it (the progress line's
    note, or ClaimsNote under --quiet), and a claim on another sweep's call is none of its business."""
    if steal:
        n = store.take_claims()
        if n:
            print(
                f"litm: took over {n:,} call{'s' if n != 1 else ''} claimed by other processes",
                file=sys.stderr,
            )


def run(args) -> int:
    from components.providers.base import ProviderError
    from components.run.config import SweepConfig
    from components.run.store import RunStore
    from components.tasks.samples import config_path

    config = SweepConfig.from_toml(config_path(args.config))
    warn_bad_rows(config.tasks, config.all_tasks().errors)
    if args.mode is not None and args.mode != config.mode:
        config = SweepConfig.from_stored({**config.to_dict(), "mode": args.mode})
    check_batch_options(args, config.mode)
    specs = planned(config, args.shard)
    if args.dry_run:
        print(
            describe(config)
            + (f"; part {args.shard.strip()}: {len(specs):,} trials" if specs is not None else "")
        )
        print("\n".join(dry_run(config, db_path(args), args.retry_errors, specs).lines()))
        return 0
    from components.run.batch import POLL_INTERVAL, run_sweep_any

    db = db_path(args)
    store = RunStore(db)
    claims(store, args.steal_claims)
    if config.mode != "batch":
        warm_up(config, store)
    line: ClaimsNote | ProgressLine | None = ClaimsNote() if args.quiet else ProgressLine()
    t0 = time.perf_counter()
    try:
        extra = (
            {"poll_interval": args.poll_interval or POLL_INTERVAL, "cancel_batches": args.cancel}
            if config.mode == "batch"
            else {}
        )
        if specs is not None:
            extra["specs"] = specs
        summary = run_sweep_any(config, store, progress=line, retry_errors=args.retry_errors, **extra)
    except ProviderError as exc:  # e.g. a missing key: nothing was sent
        print(f"litm: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        if config.mode != "batch":
            raise
        if line is not None:
            line.end()
            line = None
        print(
            "litm: interrupted; the sweep's batches keep running at the provider: run the same command again "
            "to collect them (or add --cancel to cancel them)",
            file=sys.stderr,
        )
        return 130
    finally:
        if line is not None:
            line.end()
        store.close()
    report(summary, args, specs is not None, db, time.perf_counter() - t0)
    if summary.status != "done":
        return EXIT_STOPPED
    return EXIT_TRIAL_ERRORS if summary.errors else EXIT_OK


def warm_up(config, store, stream=None) -> None:
    """Before a live sweep, each local model whose speed nothing here has measured or timed yet is loaded
    and timed once by the worker (a few seconds), so the sweep's first call already says "of about N s"."""
    from components.providers import runtime
    from components.providers.base import ProviderError
    from components.providers.factory import make_provider
    from components.run.speed import local_speed

    if runtime.pending() is not None:  # the runtime is being built (or failed): the sweep says so in one line
        return
    for m in config.models:
        if m.provider != "local" or local_speed(m.spec.model, store) is not None:
            continue
        print(
            f"litm: loading the local model {m.spec.model} and timing it once on this machine (a 600-token "
            "prompt and a short answer)",
            file=stream or sys.stderr,
            flush=True,
        )
        try:
            make_provider(m.spec).warm()  # type: ignore[attr-defined]
        except ProviderError:  # no model, a crash: the sweep's first call says what is wrong
            pass


def check_batch_options(args, mode: str) -> None:
    """--cancel and --poll-interval: batch mode's, a positive number of seconds."""
    if (args.cancel or args.poll_interval is not None) and mode != "batch":
        raise ValueError('--cancel and --poll-interval are for batch mode (mode = "batch" or --mode batch)')
    if args.poll_interval is not None and args.poll_interval <= 0:
        raise ValueError(f"--poll-interval must be a positive number of seconds, got {args.poll_interval:g}")


def report(summary, args, shard: bool, db, seconds: float) -> None:
    """The sweep's last lines: its status, its trials, calls and dollars, and what stopped it."""
    print(
        f"sweep {summary.name!r} (id {summary.sweep_id}): {summary.status}"
        + (f" ({summary.reason})" if summary.reason else "")
    )
    http = (
        f" ({summary.requests} HTTP requests, retries included)"
        if summary.requests != summary.calls_sent
        else ""
    )
    print(
        f"trials {summary.done}/{summary.total} (ran {summary.ran}, already present {summary.skipped}), "
        f"errors {summary.errors}, calls sent {summary.calls_sent}{http}, cached {summary.cached_calls}, "
        f"${summary.spend_usd:.4f}, {seconds:.1f}s; store {db}"
    )
    if shard:
        print(
            f"part {args.shard.strip()} of the sweep: {summary.total:,} of its trials; merge the parts' stores "
            "into one with: litm import PART.sqlite ... --db WHOLE.sqlite"
        )
    if summary.stopped_early:
        print(f"litm: {summary.reason}", file=sys.stderr)
    for warning in summary.warnings:
        print(f"litm: {warning}", file=sys.stderr)
