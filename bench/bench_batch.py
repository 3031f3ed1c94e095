"""Batch mode against live calls, same sweep, same loopback server (100 ms per live call):
1,000 ICR trials (two stages) of 600-2,000-token documents, gpt-4o-mini prices. Reports wall time,
requests, batches, dollars (batch = half), the rerun (0 requests) and peak memory, each mode in its
own process.

    python -m bench.bench_batch [--strategy icr] [--tasks 50]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def one(mode: str, strategy: str, n_tasks: int) -> dict:
    from components.run.batch import run_sweep_any
    from components.run.config import SweepConfig
    from components.run.store import RunStore
    from tests.support import facts_file
    from tests.support.llm_server import LLMServer

    os.environ.setdefault("OPENAI_API_KEY", "sk-bench-not-a-key")
    with LLMServer(delay=0.1) as srv, tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        facts_file(d, n_tasks)
        (d / "s.toml").write_text(f"""[sweep]
name = "bench-{mode}"
mode = "{mode}"
tasks = "facts.jsonl"
n_tasks = {n_tasks}
lengths = [600, 1000, 1500, 2000]
positions = [0.0, 0.25, 0.5, 0.75, 1.0]
strategies = ["{strategy}"]
params = {{ k = 2 }}
concurrency = 32
[[sweep.models]]
provider = "openai"
model = "gpt-4o-mini"
base_url = "{srv.openai_url}"
""")
        cfg, store = SweepConfig.from_toml(d / "s.toml"), RunStore(d / "r.sqlite")
        kw = {"poll_interval": 0.1} if mode == "batch" else {}
        t = time.perf_counter()
        s = run_sweep_any(cfg, store, **kw)
        wall = time.perf_counter() - t
        t = time.perf_counter()
        again = run_sweep_any(cfg, store, **kw)
        rerun = time.perf_counter() - t
        return {
            "mode": mode,
            "trials": s.done,
            "errors": s.errors,
            "sent": s.calls_sent,
            "wall_s": wall,
            "usd": s.spend_usd,
            "batches": srv.counts["batches"],
            "live_calls": srv.counts["chat"],
            "rerun_sent": again.calls_sent,
            "rerun_s": rerun,
            "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        }


def measure(mode: str, strategy: str, n_tasks: int) -> dict:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.bench_batch",
            "--one",
            mode,
            "--strategy",
            strategy,
            "--tasks",
            str(n_tasks),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def run(strategy: str = "icr", n_tasks: int = 50) -> list[str]:
    live, batch = measure("live", strategy, n_tasks), measure("batch", strategy, n_tasks)
    lines = []
    for r in (live, batch):
        lines.append(
            f"{r['mode']:>5}: {r['trials']:,} {strategy} trials, {r['sent']:,} requests "
            f"({r['batches']} batches, {r['live_calls']:,} live calls) in {r['wall_s']:.1f} s, "
            f"${r['usd']:.4f}, errors {r['errors']}; rerun sends {r['rerun_sent']} in {r['rerun_s']:.2f} s; "
            f"peak {r['peak_mb']:.0f} MB"
        )
    ratio = batch["usd"] / live["usd"] if live["usd"] else float("nan")
    lines.append(
        f"batch/live dollars {ratio:.2f} (target 0.50); batch/live wall {batch['wall_s'] / live['wall_s']:.2f}"
    )
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--strategy", default="icr")
    ap.add_argument("--tasks", type=int, default=50, help="tasks; trials = tasks x 20 cells")
    ap.add_argument("--one", choices=("live", "batch"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one:
        print(json.dumps(one(args.one, args.strategy, args.tasks)))
        return 0
    for line in run(args.strategy, args.tasks):
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
