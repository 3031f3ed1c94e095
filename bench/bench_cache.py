"""Dollars per 1,000 questions of a "Lost in the Middle" 20-document sweep with prompt caching, in plan
order against prefix order, on the loopback server (tests/support/llm_server.py, prompt_cache mode).

The sweep: 50 NQ-open questions (sample_docs/tasks/nq-open-30docs.jsonl.gz), 20 documents, the gold one at
index 0, 4, 9, 14 and 19 (250 calls), one call at a time. Two providers' ways of caching:
- OpenAI (gpt-4o-mini list prices): the server caches every prompt's prefix by itself (1,024+ tokens, in
  128-token steps) and reports usage.prompt_tokens_details.cached_tokens;
- Anthropic (claude-haiku-4-5, [models] cache_prefix = true): the prefix before the gold document is
  marked with cache_control; the server reports cache reads and writes.
The server's cache keeps the prefixes of the last --capacity prompts, as a real one forgets within
minutes: plan order (cell by cell, every question before the next position) asks a question's next
position 50 calls later, prefix order asks it next.

Prefix order: the sweep's own `[sweep] order = "prefix"` when this version has it; otherwise this bench
orders the planned trials itself, by their prompt text (sorted, so prompts sharing the longest prefix
are neighbours), a stand-in until that option lands. The line says which was used.

    python -m bench.bench_cache [--tasks 50] [--capacity 16]
"""

from __future__ import annotations

import argparse
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path

from components.report import compare
from components.run import runner
from components.run.config import SweepConfig
from components.run.store import RunStore
from tests.support.llm_server import LLMServer

ROOT = Path(__file__).resolve().parent.parent
NQ30 = ROOT / "sample_docs" / "tasks" / "nq-open-30docs.jsonl.gz"
MODELS = {"openai": ("gpt-4o-mini", False), "anthropic": ("claude-haiku-4-5", True)}
HAS_ORDER = "order" in getattr(SweepConfig, "__dataclass_fields__", {})


def config(server: LLMServer, provider: str, n_tasks: int, order: str) -> SweepConfig:
    model, marked = MODELS[provider]
    m = {
        "provider": provider,
        "model": model,
        "base_url": server.openai_url if provider == "openai" else server.anthropic_url,
    }
    if marked:
        m["cache_prefix"] = True
    sweep = {
        "name": f"cache-{provider}-{order}",
        "tasks": str(NQ30),
        "n_tasks": n_tasks,
        "documents": [20],
        "gold_index": [0, 4, 9, 14, 19],
        "strategies": ["litm"],
        "concurrency": 1,
        "models": [m],
    }
    if order == "prefix" and HAS_ORDER:
        sweep["order"] = "prefix"
    return SweepConfig.from_dict({"sweep": sweep})


def by_prompt(specs, cfg: SweepConfig):
    """The planned trials sorted by their first prompt's text: the longest shared prefixes side by side."""
    from components.run.plan import trial_document
    from components.strategies import get_strategy

    tasks = [s.task for s in specs]

    def text(spec) -> str:
        doc = trial_document(spec, cfg.encoding, tasks).document
        return get_strategy(spec.strategy).first_prompts(doc, spec.task.question, spec.params)[0].text

    return sorted(specs, key=text)


@contextmanager
def prefix_order(cfg: SweepConfig, order: str):
    """Run the sweep's trials in prefix order when the sweep cannot be told to (see the docstring)."""
    if order != "prefix" or HAS_ORDER:
        yield
        return
    planned = runner.plan

    def ordered(config, tasks=None):
        return by_prompt(planned(config, tasks), config)

    runner.plan = ordered
    try:
        yield
    finally:
        runner.plan = planned


def one(server: LLMServer, provider: str, n_tasks: int, order: str, folder: Path, capacity: int) -> dict:
    server.reset()
    server.set(prompt_cache=True, cache_capacity=capacity)
    cfg = config(server, provider, n_tasks, order)
    store = RunStore(folder / f"{provider}-{order}.sqlite")
    with prefix_order(cfg, order):
        summary = runner.run_sweep(cfg, store)
    trials = store.trials_frame()
    store.close()
    arm = compare.arms(trials).iloc[0]
    n = len(trials)
    tin, tout = trials["input_tokens"].sum() / n, trials["output_tokens"].sum() / n
    plain = compare.cost_per_1000(tin, tout, f"{provider}:{MODELS[provider][0]}")
    return {
        "errors": summary.errors,
        "trials": n,
        "cost": float(arm["cost_per_1000_usd"]),
        "plain": plain,
        "cached_share": trials["cached_input_tokens"].sum() / trials["input_tokens"].sum(),
        "written_share": trials["cache_write_tokens"].sum() / trials["input_tokens"].sum(),
    }


def run(n_tasks: int = 50, capacity: int = 16) -> list[str]:
    """The bench's lines (python -m bench cache)."""
    os.environ.setdefault("OPENAI_API_KEY", "sk-loopback")  # the loopback server takes any key
    os.environ.setdefault("ANTHROPIC_API_KEY", "sk-ant-loopback")
    how = (
        'the sweep\'s order = "prefix"'
        if HAS_ORDER
        else "this bench's stand-in (planned trials sorted by prompt)"
    )
    out = [
        f"LITM 20 documents, {n_tasks} NQ-open questions x 5 gold positions; the loopback cache keeps "
        f"{capacity} prompts; prefix order by {how}"
    ]
    with tempfile.TemporaryDirectory() as tmp, LLMServer() as server:
        for provider in MODELS:
            plan_ = one(server, provider, n_tasks, "plan", Path(tmp), capacity)
            pref = one(server, provider, n_tasks, "prefix", Path(tmp), capacity)
            assert plan_["errors"] == pref["errors"] == 0
            model = MODELS[provider][0]
            out.append(
                f"{provider}:{model}: $/1,000 questions without caching {plan_['plain']:.4f}; "
                f"plan order {plan_['cost']:.4f} ({100 * plan_['cached_share']:.0f}% of input read from the "
                f"cache, {100 * plan_['written_share']:.0f}% written); prefix order {pref['cost']:.4f} "
                f"({100 * pref['cached_share']:.0f}% read, {100 * pref['written_share']:.0f}% written); "
                f"prefix/plan = {pref['cost'] / plan_['cost']:.3f}, "
                f"prefix/uncached = {pref['cost'] / pref['plain']:.3f}"
            )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=50)
    ap.add_argument(
        "--capacity", type=int, default=16, help="prompts whose prefixes the loopback cache keeps"
    )
    args = ap.parse_args(argv)
    for line in run(args.tasks, args.capacity):
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
