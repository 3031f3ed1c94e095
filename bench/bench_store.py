"""Stores of 100k trials: time to the first Results chart, and `litm results` memory.

Builds a run store of N synthetic trials (5 lengths x 5 positions x 4 strategies, answers 70% right),
then measures, in this one run:
- the first Results chart: read the store, label its sweeps, aggregate the U-curve with Wilson
  intervals, build the plotly figure; with every column decoded (trials_frame, what Results read
  before) and with the aggregate columns only (reader.summary_frame, what it reads now); target < 3 s;
- `litm results` (CSV) in a subprocess: wall time and peak memory (it streams rows).

    python -m bench.bench_store [--trials 100000]
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from components.report import analysis, charts
from components.run.reader import put_trials, summary_frame
from components.run.schema import Trial, params_json
from components.run.store import RunStore

ROOT = Path(__file__).resolve().parent.parent
TARGET_S = 3.0


def build(path: Path, n: int) -> RunStore:
    store = RunStore(path)
    sid = store.open_sweep("bench-100k", {"name": "bench-100k"})
    rng = random.Random(0)
    strategies = ["baseline", "reprompt", "rr", "icr"]
    rows = []
    for i in range(n):
        s, pos = strategies[i % 4], (0.0, 0.25, 0.5, 0.75, 1.0)[(i // 4) % 5]
        length = (2000, 4000, 8000, 16000, 32000)[(i // 20) % 5]
        ok = rng.random() < 0.7
        rows.append(Trial(
            trial_key=f"k{i:07d}", task=f"task-{i // 100}", question=f"What is the code word of item {i}?",
            answers=[f"word{i}"], strategy=s, params=params_json({"r": 1000, "k": 3} if s != "baseline" else {}),
            model="openai:gpt-4o-mini", length=length, position=pos, actual_length=length,
            actual_position=int(pos * length), gold_pages=[3], retrieved_pages=[3, 4] if s in ("rr", "icr") else None,
            cited_pages=[3], answer=f"word{i}" if ok else "unknown", raw_answer=f"Answer: word{i}\nPage: 3",
            metric="fuzzy", score=float(ok), subspan_em=float(ok), exact=float(ok), page_recall=1.0,
            page_precision=0.5, calls=2 if s in ("rr", "icr") else 1, input_tokens=length + 200, output_tokens=20,
            cost_usd=(length + 200) * 0.15e-6, latency_s=1.2).row())
    put_trials(store, sid, rows)
    store.finish_sweep(sid, "done")
    return store


def first_chart(store: RunStore, path: Path, lean: bool) -> float:
    t0 = time.perf_counter()
    trials = summary_frame(store) if lean else store.trials_frame()
    combined, _ = analysis.combine_stores([("your runs", False, str(path), trials, store.sweeps_frame())])
    table = analysis.u_curve(combined, "primary", ("strategy",))
    charts.u_curve(table, title="U-curve")
    return time.perf_counter() - t0


# A child forked from this (large) process would report this process's pages as its own peak, so a
# small launcher process starts the command and reports its child's peak (ru_maxrss, KB).
LAUNCHER = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL); "
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")


def peak_of(cmd: list[str]) -> tuple[float, float]:
    """(seconds, peak MB) of a command run in a fresh process."""
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", LAUNCHER, *cmd], cwd=ROOT, check=True, capture_output=True, text=True)
    return time.perf_counter() - t0, int(out.stdout.strip()) / 1024


def results_cli(path: Path) -> tuple[float, float]:
    """(seconds, peak MB) of `litm results --db path` writing CSV to /dev/null."""
    return peak_of([sys.executable, "-m", "components.cli", "results", "--db", str(path)])


def run(n: int = 100_000) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.sqlite"
        t0 = time.perf_counter()
        store = build(path, n)
        built = time.perf_counter() - t0
        old = first_chart(store, path, lean=False)
        new = first_chart(store, path, lean=True)
        seconds, peak = results_cli(path)
        store.close()
        return [f"built a store of {n:,} trials in {built:.1f} s ({path.stat().st_size / 2**20:.0f} MB)",
                f"first Results chart, every column decoded (before): {old:.2f} s",
                f"first Results chart, aggregate columns (now): {new:.2f} s; target {TARGET_S:.0f} s: "
                f"{'met' if new < TARGET_S else 'NOT met'} ({new / TARGET_S:.2f} of the target; {old / new:.1f}x faster)",
                f"litm results (csv, streamed): {seconds:.2f} s, peak {peak:.0f} MB"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=100_000)
    args = ap.parse_args(argv)
    for line in run(args.trials):
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
