"""The runner's speed guard: `python -m bench runner --check` (`make bench-check`; `make test` runs it).

A short form of the runner bench (bench/bench_runner.py), a few hundred calls a sweep against the same
loopback server, each figure a ratio measured in one run, so that the machine's own speed (or the other
work it does) cancels out:

- tiny: a bare httpx client's CPU time per call over the runner's, on tiny documents, measured one after
  the other in the same process against the same server;
- 10-token / nq: the same for the 1,000-token sweeps (10-token passages, whose pool is the whole task
  file of 2,000 tiny tasks as in the full bench; NQ-open passages).

CPU time per call, not calls/s: on a machine whose two cores other work shares, the runner's calls/s
over the bare client's followed the load (0.79 at a load average of 2.6, 0.54 at 10, the same build),
while its CPU time per call is the work it does for each trial, and that is what a regression adds.

Each figure is the median of `repeat` runs. The check FAILS (exit 1) when one falls more than TOLERANCE
below the figure stored with the bench (bench/runner_figures.json: the figures, their date and the
command that measured them), printing the figure and the stored one. A figure below it is measured again
(up to three measurements in all, each sweep judged by its best) before the check fails, so that one busy
moment of a shared machine is not taken for a regression (a regression is below it every time).

    python -m bench runner --check               the check (exit 0: every figure holds)
    python -m bench runner --check --record      measure, and store the figures with today's date
    python -m bench runner --check --slow-ms 3   the check's own test: every trial of the runner burns
                                                 3 ms of CPU first (a deliberately slowed build)
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

FIGURES = Path(__file__).with_name("runner_figures.json")
TOLERANCE = 0.10  # a figure more than this fraction below the stored one fails the check
COMMAND = "python -m bench runner --check --record"
SHORT = {"trials": 240, "pool": 2000, "concurrency": 32, "delay": 0.1, "repeat": 3}
LABELS = {
    "tiny": "tiny documents, bare/runner CPU per call",
    "10-token": "1,000-token documents of 10-token passages, bare/runner CPU per call",
    "nq": "1,000-token documents of NQ-open passages, bare/runner CPU per call",
}


@dataclasses.dataclass(frozen=True)
class Verdict:
    name: str
    figure: float
    stored: float
    floor: float

    @property
    def ok(self) -> bool:
        return self.figure >= self.floor

    def line(self) -> str:
        word = "ok" if self.ok else "FAILED"
        return (
            f"{word}: {LABELS.get(self.name, self.name)} {self.figure:.2f} (stored {self.stored:.2f}, "
            f"floor {self.floor:.2f} = {1 - TOLERANCE:.0%} of it)"
        )


def judge(figures: dict[str, float], stored: dict[str, float], tolerance: float = TOLERANCE) -> list[Verdict]:
    """One verdict per stored figure: a measured figure below (1 - tolerance) x the stored one fails, and
    so does a stored figure that was not measured (figure 0)."""
    return [
        Verdict(name, float(figures.get(name, 0.0)), float(value), float(value) * (1 - tolerance))
        for name, value in stored.items()
    ]


def read_figures(path: Path | None = None) -> dict:
    """The stored figures ({"figures": {...}, "date", "command", "machine", "short_form"})."""
    path = path or FIGURES
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data.get("figures"), dict) or not data["figures"]:
        raise ValueError(f"{path} holds no figures: measure them with {COMMAND}")
    return data


@contextmanager
def slowed(ms: float) -> Iterator[None]:
    """Every trial of the live runner first burns `ms` of CPU (the check's own test: a slowed build)."""
    if ms <= 0:
        yield
        return
    from components.run import runner

    original = runner.LiveRun.one

    async def one(self, spec):
        end = time.perf_counter() + ms / 1000
        while time.perf_counter() < end:
            pass
        return await original(self, spec)

    runner.LiveRun.one = one  # type: ignore[method-assign]
    try:
        yield
    finally:
        runner.LiveRun.one = original  # type: ignore[method-assign]


def measure(trials: int, pool: int, concurrency: int, delay: float, repeat: int) -> dict[str, float]:
    """The short form's figures, each the median of `repeat` runs (see the module's docstring)."""
    from bench import bench_runner as br
    from components.run.runner import run_sweep
    from components.run.store import RunStore
    from components.tasks.importers import write_tasks

    br.warm()
    port = br.free_port()
    server = br.start_server(port, delay)
    got: dict[str, list[float]] = {name: [] for name in LABELS}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            write_tasks(br.tiny_tasks(max(pool, trials)), Path(tmp) / "tasks.jsonl")
            config = br.sweep_config(Path(tmp) / "tasks.jsonl", port, concurrency)
            store = RunStore(Path(tmp) / "check.sqlite")
            sweeps = {
                "tiny": dataclasses.replace(config, n_tasks=trials),
                **dict(zip(("10-token", "nq"), (c for _, c in br.long_sweeps(config, trials)), strict=True)),
            }
            for r in range(repeat):
                for name, sweep in sweeps.items():
                    br.cold()
                    c0 = time.process_time()  # this process's CPU time, in ns (os.times ticks every 10 ms)
                    done = run_sweep(dataclasses.replace(sweep, seed=r), store)
                    c1 = time.process_time()
                    br.bare_client_rate(port, trials, concurrency)
                    mine = (c1 - c0) / max(1, done.calls_sent)
                    bare = (time.process_time() - c1) / trials
                    got[name].append(bare / mine if mine > 0 else 0.0)
    finally:
        server.terminate()
        server.wait(5)
    return {name: statistics.median(values) for name, values in got.items()}


def check(measure_fn: Callable[[], dict[str, float]], stored: dict[str, float], attempts: int = 3) -> int:
    """0 when every figure holds, each at its best over up to `attempts` measurements (a busy moment of a
    shared machine lowers one sweep's figure one time; a regression lowers it every time), 1 when one
    stays below its floor; prints each measurement's verdicts."""
    best: dict[str, float] = {}
    for attempt in range(1, attempts + 1):
        for name, value in measure_fn().items():
            best[name] = max(best.get(name, 0.0), value)
        verdicts = judge(best, stored)
        for v in verdicts:
            print(v.line(), flush=True)
        if all(v.ok for v in verdicts):
            return 0
        if attempt < attempts:
            print(
                f"measuring again (attempt {attempt + 1} of {attempts}; each sweep keeps its best)",
                flush=True,
            )
    print(
        f"the runner is slower than the figures stored in {FIGURES.name} (more than {TOLERANCE:.0%} below); "
        "profile it (docs/benchmarks.md) or, if the machine changed, store new figures with " + COMMAND,
        flush=True,
    )
    return 1


def record(figures: dict[str, float], short: dict, path: Path | None = None) -> None:
    path = path or FIGURES
    given = "".join(f" --{k} {v}" for k, v in short.items() if v != SHORT[k])
    data = {
        "command": COMMAND + given,
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "machine": "2-core virtual machine (AMD EPYC), shared with other work",
        "short_form": short,
        "tolerance": TOLERANCE,
        "figures": {k: round(v, 2) for k, v in figures.items()},
    }
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="the runner's speed guard (bench/runner_check.py)")
    ap.add_argument("--record", action="store_true", help="store the measured figures with today's date")
    ap.add_argument("--slow-ms", type=float, default=0.0, help="burn this much CPU per trial (self-test)")
    ap.add_argument("--attempts", type=int, default=3)
    for k, v in SHORT.items():
        ap.add_argument(f"--{k}", type=type(v), default=v)
    args = ap.parse_args(argv)
    short = {k: getattr(args, k) for k in SHORT}
    t0 = time.perf_counter()
    with slowed(args.slow_ms):
        if args.record:
            figures = measure(**short)
            record(figures, short)
            print(f"stored in {FIGURES.name}: {figures}")
            return 0
        try:
            data = read_figures()
        except (OSError, ValueError) as exc:
            print(f"runner check: cannot read the stored figures: {exc}", file=sys.stderr)
            return 2
        print(
            f"runner check: {short['trials']} calls a sweep, median of {short['repeat']}, against the "
            f"figures of {data.get('date', '?')} ({data.get('command', COMMAND)})"
            + (f"; every trial slowed by {args.slow_ms:g} ms of CPU" if args.slow_ms else ""),
            flush=True,
        )
        code = check(lambda: measure(**short), data["figures"], max(1, args.attempts))
    print(f"runner check: {'passed' if code == 0 else 'FAILED'} in {time.perf_counter() - t0:.0f} s")
    return code


if __name__ == "__main__":
    raise SystemExit(main())
