"""Driver for bench_peer: runs HaystackBench 0.1.0's own TestRunner against a loopback server.

Executed with the peer venv's python (never imported there by our code, which lives in another venv):

    python bench/peer_haystackbench.py --base-url http://127.0.0.1:P/v1 --calls 500 --concurrency 32 --db X

Uses HaystackBench's Python API as its README shows (ExperimentConfig, TestRunner, ResultStore) with an
OpenAIProvider given `base_url` (its constructor parameter "for Azure OpenAI or proxies") and a dummy key.
Prints one line: RESULT {"cells": .., "errors": .., "correct": .., "seconds": ..}.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from urllib.parse import urlparse

RESULT = "RESULT "
LOOPBACK = {"127.0.0.1", "localhost", "::1"}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description="HaystackBench's runner against a loopback server")
    ap.add_argument("--base-url", required=True)
    ap.add_argument("--calls", type=int, required=True)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--db", required=True, help="HaystackBench's SQLite result store (a temporary file)")
    args = ap.parse_args(argv)
    if urlparse(args.base_url).hostname not in LOOPBACK:
        ap.error(f"--base-url must be a loopback address, not {args.base_url}")
    if args.calls < 1:
        ap.error("--calls must be at least 1")
    return args


def grid(calls: int) -> tuple[list[float], int]:
    """Depths and trials per cell giving exactly `calls` single-call cells at one context length
    (HaystackBench allows at most 10 trials per cell)."""
    trials = 10 if calls % 10 == 0 else 1
    n = calls // trials
    return [i / max(n - 1, 1) for i in range(n)], trials


async def measure(args: argparse.Namespace) -> dict:
    from haystackbench.config.schema import ExperimentConfig, ModelConfig, TaskType
    from haystackbench.core.runner import TestRunner
    from haystackbench.providers.openai import OpenAIProvider
    from haystackbench.storage.results import ResultStore

    depths, trials = grid(args.calls)
    config = ExperimentConfig(
        name="litm-explorer bench",
        task_type=TaskType.S_RT,
        context_lengths=[256],  # the smallest haystack its config accepts
        depth_percents=depths,
        trials_per_cell=trials,
        num_needles=[1],
        models=[ModelConfig(provider="openai", model="bench")],
        max_concurrency=args.concurrency,
    )
    store = ResultStore(db_path=args.db)
    await store.init_db()
    providers = {"openai": OpenAIProvider(api_key="dummy-not-a-key", base_url=args.base_url)}
    t0 = time.perf_counter()
    result = await TestRunner(storage=store).run_experiment(config, providers)
    seconds = time.perf_counter() - t0
    errors = [r.error for r in result.results if r.error]
    return {
        "cells": result.total_cells,
        "errors": len(errors),
        "correct": result.cells_correct,
        "seconds": seconds,
        "first_error": errors[0] if errors else None,
    }


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    print(RESULT + json.dumps(asyncio.run(measure(args))), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
