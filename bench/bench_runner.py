"""Runner throughput against the loopback server, as a ratio of the ideal.

The server (its own process) answers every call after 100 ms; at concurrency 32 the ideal is 320
calls/s. 2,000 single-call trials (baseline on tiny documents, every prompt different, so no cache
hits) are run, then the same sweep again: every trial is already in the store, so nothing is sent.
Then 1,000-token documents: of 10-token passages (about 95 pages a prompt: the worst case for building
documents and prompts) and of the bundled NQ-open passages (about 8 pages, what a real task set gives;
500 questions at positions 0.25 and 0.75). Loading and counting a task file is in each sweep's time.
Each line says how much of a core the runner and the server used, and the runner's CPU milliseconds per
call: at 1,000 tokens the runner's one event loop is close to a whole core, so that figure follows the
machine's speed, and on a machine whose cores are busy with other work the CPU per call says what the
runner would do with a core of its own (1,000 / ms calls/s at most).

Each line is measured three times (--repeat) and given as median [lowest-highest].

    python -m bench.bench_runner [--trials 2000] [--concurrency 32] [--delay 0.1] [--repeat 3]
    python -m bench runner --check    the guard: a short form against the figures in bench/runner_figures.json
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from components.run.config import SweepConfig
from components.run.runner import run_sweep
from components.run.store import RunStore
from components.tasks.importers import write_tasks
from components.tasks.model import Passage, Task

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tiny_tasks(n: int) -> list[Task]:
    return [
        Task(
            f"t{i:05d}",
            f"What is the code word of item {i}?",
            (f"word{i}",),
            (
                Passage(f"The code word of item {i} is word{i}.", gold=True),
                Passage(f"Item {i + 1} is stored in room {i % 97}."),
            ),
        )
        for i in range(n)
    ]


def sweep_config(tasks: Path, port: int, concurrency: int) -> SweepConfig:
    """Baseline on ~30-token documents, one call per task, against the loopback server on `port`."""
    return SweepConfig.from_dict(
        {
            "sweep": {
                "name": "bench",
                "tasks": str(tasks),
                "lengths": [30],
                "positions": [0.0],
                "strategies": ["baseline"],
                "concurrency": concurrency,
                "models": [
                    {
                        "provider": "openai-compatible",
                        "model": "bench",
                        "base_url": f"http://127.0.0.1:{port}/v1",
                    }
                ],
            }
        }
    )


def long_sweeps(config: SweepConfig, trials: int) -> tuple[tuple[str, SweepConfig], ...]:
    """The two 1,000-token sweeps, (label, config), on the tiny sweep's task file and server: 10-token
    passages (the tiny tasks, the whole file as the distractor pool), and NQ-open passages (its
    questions at two positions: 500 questions, 1,000 calls, at the default size)."""
    return (
        (
            "1,000-token documents of 10-token passages",
            dataclasses.replace(
                config, name="bench-1k", lengths=(1000,), positions=(0.5,), n_tasks=min(trials, 1000)
            ),
        ),
        (
            "1,000-token documents of NQ-open passages",
            dataclasses.replace(
                config,
                name="bench-1k-nq",
                tasks=str(nq_tasks()),
                lengths=(1000,),
                positions=(0.25, 0.75),
                n_tasks=min(trials // 2, 500),
            ),
        ),
    )


def start_server(port: int, delay: float) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.support.llm_server", "--port", str(port), "--delay", str(delay)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    for _ in range(100):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/admin/counts", timeout=1)
            return proc
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("the loopback server did not start")


def bare_client_rate(port: int, n: int, concurrency: int) -> float:
    """Calls/s of a bare httpx client (no SDK, no runner, no store) against the same server: what this
    machine allows right now (the server and the client share its cores with everything else)."""
    import asyncio

    import httpx2

    async def go() -> float:
        sem = asyncio.Semaphore(concurrency)
        limits = httpx2.Limits(max_connections=concurrency * 2, max_keepalive_connections=concurrency * 2)
        async with httpx2.AsyncClient(limits=limits) as client:

            async def one(i: int) -> None:
                async with sem:
                    body = {"model": "bare", "messages": [{"role": "user", "content": f"bare call {i}"}]}
                    r = await client.post(f"http://127.0.0.1:{port}/v1/chat/completions", json=body)
                    r.json()

            t0 = time.perf_counter()
            await asyncio.gather(*(one(i) for i in range(n)))
            return n / (time.perf_counter() - t0)

    return asyncio.run(go())


def warm() -> float:
    """Seconds to import the OpenAI SDK and load the tokenizer: once per process, paid by the first sweep
    of a CLI run or an app session, not by every sweep. The bare client's httpx is imported before it
    is timed too, so both are measured in a warm process; this one-off cost is printed on its own."""
    t0 = time.perf_counter()
    import openai  # noqa: F401

    from components.core.tokens import tokenizer

    tokenizer().count("warm")
    return time.perf_counter() - t0


def cpu_seconds(pid: int | None = None) -> float:
    """CPU seconds (user + system) used so far by this process, or by process `pid` (Linux /proc)."""
    if pid is None:
        t = os.times()
        return t.user + t.system
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return float("nan")


def timed(config, store, server_pid: int):
    """(summary, seconds, cores the runner used, cores the server used) of one sweep."""
    me, srv, t0 = cpu_seconds(), cpu_seconds(server_pid), time.perf_counter()
    summary = run_sweep(config, store)
    elapsed = time.perf_counter() - t0
    return summary, elapsed, (cpu_seconds() - me) / elapsed, (cpu_seconds(server_pid) - srv) / elapsed


def nq_tasks() -> Path:
    return ROOT / "sample_docs" / "tasks" / "nq-open-30docs.jsonl.gz"


def spread(values: list[float], digits: int = 2) -> str:
    """Median [lowest-highest] of repeated measurements."""
    return f"{statistics.median(values):.{digits}f} [{min(values):.{digits}f}-{max(values):.{digits}f}]"


def cold() -> None:
    """Forget the task files read and the passages counted so far in this process, so that every
    repeat pays for loading and counting its task file as a first sweep does."""
    from components.run import config as config_module
    from components.tasks import sweepdocs

    config_module._read_task_file.cache_clear()
    sweepdocs._COUNTS.clear()


def run(trials: int = 2000, concurrency: int = 32, delay: float = 0.1, repeat: int = 3) -> list[str]:
    """Each measured line is run `repeat` times (each time with another seed, so every call is sent
    again) and given as median [lowest-highest]: this VM's speed drifts from one run to the next, and
    a goal is met when the median meets it."""
    loaded = "openai" in sys.modules  # an earlier bench of `python -m bench` imported it
    took = warm()
    lines = [
        f"one-off start-up of a process (OpenAI SDK import, tokenizer load): {took:.2f}s, not counted below"
        + (" (already loaded by an earlier bench of this process)" if loaded else "")
    ]
    port = free_port()
    server = start_server(port, delay)
    ideal = concurrency / delay
    try:
        with tempfile.TemporaryDirectory() as tmp:
            write_tasks(tiny_tasks(trials), Path(tmp) / "tasks.jsonl")
            config = sweep_config(Path(tmp) / "tasks.jsonl", port, concurrency)
            store = RunStore(Path(tmp) / "bench.sqlite")
            longs = long_sweeps(config, trials)
            tiny: dict[str, list[float]] = {
                "rate": [],
                "bare": [],
                "ratio": [],
                "mine": [],
                "theirs": [],
                "ms": [],
            }
            kilo: dict[str, dict[str, list[float]]] = {
                label: {"ratio": [], "mine": [], "theirs": [], "calls": [], "ms": []} for label, _ in longs
            }
            errors = 0
            for r in range(repeat):
                cold()
                first, elapsed, mine, theirs = timed(dataclasses.replace(config, seed=r), store, server.pid)
                rate = first.calls_sent / elapsed
                bare = bare_client_rate(port, min(trials, 1000), concurrency)
                for k, v in (
                    ("rate", rate),
                    ("bare", bare),
                    ("ratio", rate / bare),
                    ("mine", mine),
                    ("theirs", theirs),
                    ("ms", 1000 * mine / rate),
                ):
                    tiny[k].append(v)
                errors += first.errors
                if r == 0:
                    t0 = time.perf_counter()
                    again = run_sweep(config, store)
                    rerun = time.perf_counter() - t0
                for label, long in longs:
                    cold()
                    done, elapsed, mine, theirs = timed(dataclasses.replace(long, seed=r), store, server.pid)
                    for k, v in (
                        ("ratio", done.calls_sent / elapsed / ideal),
                        ("mine", mine),
                        ("theirs", theirs),
                        ("calls", done.calls_sent),
                        ("ms", 1000 * mine * elapsed / max(1, done.calls_sent)),
                    ):
                        kilo[label][k].append(v)
                    errors += done.errors
            lines.append(
                f"runner, tiny documents, {first.calls_sent} calls, {repeat} runs: runner/bare "
                f"{spread(tiny['ratio'])} (goal >= 0.95 by the median); runner {spread(tiny['rate'], 0)} calls/s, "
                f"bare httpx client {spread(tiny['bare'], 0)} calls/s, ideal {ideal:.0f}/s; cores used: runner "
                f"{spread(tiny['mine'])}, server {spread(tiny['theirs'])}; runner CPU per call "
                f"{spread(tiny['ms'])} ms"
            )
            lines.append(
                f"cache rerun: {again.total} trials in {rerun:.2f}s, {again.calls_sent} calls sent (goal < 2 s)"
            )
            for label, _ in longs:
                k = kilo[label]
                lines.append(
                    f"{label}, {max(k['calls']):,.0f} calls, {repeat} runs: ratio to ideal {spread(k['ratio'])} (goal >= 0.8 by "
                    f"the median); cores used: runner {spread(k['mine'])}, server {spread(k['theirs'])}; "
                    f"runner CPU per call {spread(k['ms'])} ms"
                )
            lines.append(f"errors in all runs: {errors}")
            other = dataclasses.replace(config, name="bench-again")
            t0 = time.perf_counter()
            fresh = run_sweep(other, store)
            lines.append(
                f"new sweep, same prompts: {fresh.total} trials in {time.perf_counter() - t0:.2f}s, "
                f"{fresh.cached_calls} calls from the cache, {fresh.calls_sent} sent"
            )
    finally:
        server.terminate()
        server.wait(5)
    return lines


def grid_main(run_fn, doc: str, trials: int, argv: list[str] | None = None, repeat: int | None = None) -> int:
    """The command line of a bench run on the loopback server: --trials, --concurrency, --delay (and
    --repeat when the bench takes it)."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--trials", type=int, default=trials)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--delay", type=float, default=0.1)
    if repeat is not None:
        ap.add_argument("--repeat", type=int, default=repeat)
    args = ap.parse_args(argv)
    more = {"repeat": max(1, args.repeat)} if repeat is not None else {}
    for line in run_fn(args.trials, args.concurrency, args.delay, **more):
        print(line, flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    """`python -m bench runner [options]`; with --check, the guard (bench/runner_check.py)."""
    args = sys.argv[1:] if argv is None else argv
    if "--check" in args:
        from bench import runner_check

        return runner_check.main([a for a in args if a != "--check"])
    return grid_main(run, __doc__, 2000, args, repeat=3)


if __name__ == "__main__":
    raise SystemExit(main())
