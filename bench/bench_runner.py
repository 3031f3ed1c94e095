"""Runner throughput against the loopback server, as a ratio of the ideal.

The server (its own process) answers every call after 100 ms; at concurrency 32 the ideal is 320
calls/s. 2,000 single-call trials (baseline on tiny documents, every prompt different, so no cache
hits) are run, then the same sweep again: every trial is already in the store, so nothing is sent.

    python -m bench.bench_runner [--trials 2000] [--concurrency 32] [--delay 0.1]
"""

from __future__ import annotations

import argparse
import dataclasses
import socket
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
    return [Task(f"t{i:05d}", f"What is the code word of item {i}?", (f"word{i}",),
                 (Passage(f"The code word of item {i} is word{i}.", gold=True),
                  Passage(f"Item {i + 1} is stored in room {i % 97}."))) for i in range(n)]


def sweep_config(tasks: Path, port: int, concurrency: int) -> SweepConfig:
    """Baseline on ~30-token documents, one call per task, against the loopback server on `port`."""
    return SweepConfig.from_dict({"sweep": {
        "name": "bench", "tasks": str(tasks), "lengths": [30], "positions": [0.0],
        "strategies": ["baseline"], "concurrency": concurrency,
        "models": [{"provider": "openai-compatible", "model": "bench",
                    "base_url": f"http://127.0.0.1:{port}/v1"}]}})


def start_server(port: int, delay: float) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-m", "tests.support.llm_server", "--port", str(port),
                             "--delay", str(delay)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
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


def run(trials: int = 2000, concurrency: int = 32, delay: float = 0.1) -> list[str]:
    lines = [f"one-off start-up of a process (OpenAI SDK import, tokenizer load): {warm():.2f}s, "
             "not counted below"]
    port = free_port()
    server = start_server(port, delay)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            write_tasks(tiny_tasks(trials), Path(tmp) / "tasks.jsonl")
            config = sweep_config(Path(tmp) / "tasks.jsonl", port, concurrency)
            store = RunStore(Path(tmp) / "bench.sqlite")
            t0 = time.perf_counter()
            first = run_sweep(config, store)
            elapsed = time.perf_counter() - t0
            ideal = concurrency / delay
            rate = first.calls_sent / elapsed
            bare = bare_client_rate(port, min(trials, 1000), concurrency)
            lines.append(f"runner: {first.calls_sent} calls in {elapsed:.2f}s = {rate:.0f} calls/s; "
                         f"ratio to ideal {ideal:.0f}/s: {rate / ideal:.2f}; errors {first.errors}; "
                         f"bare httpx client now: {bare:.0f} calls/s (runner/bare {rate / bare:.2f}, goal >= 0.95)")
            t0 = time.perf_counter()
            again = run_sweep(config, store)
            rerun = time.perf_counter() - t0
            lines.append(f"cache rerun: {again.total} trials in {rerun:.2f}s, {again.calls_sent} calls sent (goal < 2 s)")
            long = dataclasses.replace(config, name="bench-1k", lengths=(1000,), positions=(0.5,),
                                       n_tasks=min(trials, 1000))
            t0 = time.perf_counter()
            kilo = run_sweep(long, store)
            elapsed = time.perf_counter() - t0
            lines.append(f"1,000-token documents: {kilo.calls_sent} calls in {elapsed:.2f}s = "
                         f"{kilo.calls_sent / elapsed:.0f} calls/s; ratio to ideal {kilo.calls_sent / elapsed / ideal:.2f} "
                         f"(goal >= 0.8)")
            other = dataclasses.replace(config, name="bench-again")
            t0 = time.perf_counter()
            fresh = run_sweep(other, store)
            lines.append(f"new sweep, same prompts: {fresh.total} trials in {time.perf_counter() - t0:.2f}s, "
                         f"{fresh.cached_calls} calls from the cache, {fresh.calls_sent} sent")
    finally:
        server.terminate()
        server.wait(5)
    return lines


def grid_main(run_fn, doc: str, trials: int, argv: list[str] | None = None) -> int:
    """The command line of a bench run on the loopback server: --trials, --concurrency, --delay."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--trials", type=int, default=trials)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--delay", type=float, default=0.1)
    args = ap.parse_args(argv)
    for line in run_fn(args.trials, args.concurrency, args.delay):
        print(line, flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    return grid_main(run, __doc__, 2000, argv)


if __name__ == "__main__":
    raise SystemExit(main())
