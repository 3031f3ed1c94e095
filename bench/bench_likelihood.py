"""The likelihood measure on a local model: KV-cache reuse across consecutive prompts, against
evaluating every prompt whole.

A 20-document gold-index sweep (NQ-open, gold at 0/4/9/14/19, the LITM QA prompt, measure =
"likelihood") is run into fresh stores, in this one process: no reuse (every prompt evaluated whole)
and reuse in prefix order (the default); with --plan also reuse in plan order (grid order: with more
than one question, consecutive prompts are of different questions). Each line gives the
tokens the model evaluated over the tokens prompted, the wall time, the speed-up over no reuse, and
whether every stored answer_logprob equals the no-reuse run's bit for bit; the process's CPU time too,
which moves less than the wall time on a machine busy with other work. Goal: prefix order with
reuse at least 1.3x faster, the same numbers.

    python -m bench likelihood
    python -m bench.bench_likelihood [--model smollm2-135m-instruct] [--questions 1] [--threads N] [--plan]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOAL = 1.3


def config(model: str, questions: int, order: str, name: str):
    from components.run.config import SweepConfig

    return SweepConfig.from_dict(
        {
            "sweep": {
                "name": name,
                "tasks": str(ROOT / "sample_docs/tasks/nq-open-30docs.jsonl.gz"),
                "n_tasks": questions,
                "documents": [20],
                "gold_index": [0, 4, 9, 14, 19],
                "strategies": ["litm"],
                "measure": "likelihood",
                "order": order,
                "concurrency": 1,
                "models": [{"provider": "local", "model": model}],
            }
        }
    )


def one(model: str, questions: int, order: str, reuse: bool, folder: Path) -> dict:
    from components.providers.base import ModelSpec
    from components.providers.local import LocalProvider
    from components.run.runner import run_sweep
    from components.run.store import RunStore

    prov = LocalProvider(ModelSpec("local", model), reuse=reuse)
    loaded = prov.ensure_loaded()
    loaded.llm.reset()
    loaded.chunked = 0
    before = (loaded.prompted, loaded.evaluated)
    cfg = config(model, questions, order, f"bench-{order}-{reuse}")
    store = RunStore(folder / f"{order}-{reuse}.sqlite")
    t0, c0 = time.perf_counter(), time.process_time()
    summary = run_sweep(cfg, store, providers={cfg.models[0].label: prov})
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    frame = store.trials_frame()
    store.close()
    return {
        "wall": wall,
        "cpu": cpu,
        "prompted": loaded.prompted - before[0],
        "evaluated": loaded.evaluated - before[1],
        "trials": summary.ran,
        "errors": summary.errors,
        "values": dict(zip(frame["trial_key"], frame["answer_logprob"], strict=True)),
    }


def shared_share(sweep: dict, order: str) -> float:
    """Of all prompt characters of a sweep, the share each prompt has in common with the prompt before it
    (its longest common prefix), with the trials in the given order: what a KV cache (or a prompt
    cache) can keep. No model is called: the first prompts are built."""
    from components.run.config import SweepConfig
    from components.run.plan import Documents, ordered, plan
    from components.run.runner import first_prompt_text

    cfg = SweepConfig.from_dict({"sweep": {**sweep, "order": order}})
    docs = Documents(cfg.encoding, cfg.all_tasks().tasks)
    texts = [
        first_prompt_text(s, docs) for s in ordered(plan(cfg), order, lambda s: first_prompt_text(s, docs))
    ]
    shared = 0
    for a, b in zip(texts, texts[1:], strict=False):
        n = len(os.path.commonprefix([a, b]))
        shared += n
    return shared / max(sum(len(t) for t in texts), 1)


ORDER_SWEEPS = {
    "LITM QA, 20 documents x gold at 0/4/9/14/19, 10 questions": {
        "tasks": str(ROOT / "sample_docs/tasks/nq-open-30docs.jsonl.gz"),
        "n_tasks": 10,
        "documents": [20],
        "gold_index": [0, 4, 9, 14, 19],
        "strategies": ["litm"],
    },
    "baseline, 2,000 tokens x gold at 0/25/50/75/100%, 10 questions": {
        "tasks": str(ROOT / "sample_docs/tasks/facts.jsonl"),
        "n_tasks": 10,
        "lengths": [2000],
        "positions": [0.0, 0.25, 0.5, 0.75, 1.0],
        "strategies": ["baseline"],
    },
    "reprompt r = 500, 2,000 tokens x 5 positions, 10 questions": {
        "tasks": str(ROOT / "sample_docs/tasks/facts.jsonl"),
        "n_tasks": 10,
        "lengths": [2000],
        "positions": [0.0, 0.25, 0.5, 0.75, 1.0],
        "strategies": ["reprompt"],
        "params": {"r": 500},
    },
}


def order_lines() -> list[str]:
    out = []
    for label, sweep in ORDER_SWEEPS.items():
        base = {"name": "order", "models": [{"provider": "fake", "model": "fake"}], **sweep}
        plan_share, prefix_share = shared_share(base, "plan"), shared_share(base, "prefix")
        out.append(
            f"prompt characters shared with the prompt before, {label}: plan order {plan_share:.2f}, "
            f"prefix order {prefix_share:.2f}"
        )
    return out


def run(argv: list[str] | None = None) -> list[str]:
    ap = argparse.ArgumentParser(prog="bench_likelihood")
    ap.add_argument("--model", default="smollm2-135m-instruct")
    ap.add_argument("--questions", type=int, default=1)
    ap.add_argument("--plan", action="store_true", help="also reuse in plan order")
    ap.add_argument("--orders-only", action="store_true", help="only the shared-prefix lines (no model)")
    ap.add_argument("--threads", type=int, default=None, help="llama.cpp threads (LITM_LOCAL_THREADS)")
    args = ap.parse_args(argv or [])
    lines = order_lines()
    if args.orders_only:
        return lines
    if args.threads:
        os.environ["LITM_LOCAL_THREADS"] = str(args.threads)
    from components.providers.localmodel import LocalModelError, find_model

    try:
        find_model(args.model)
    except LocalModelError as exc:
        return [*lines, f"skipped: {exc}"]
    lines += [
        f"{args.model}, {args.questions} question(s) x 20 documents x gold at 0/4/9/14/19, "
        f"{os.environ.get('LITM_LOCAL_THREADS', '2')} thread(s)"
    ]
    with tempfile.TemporaryDirectory() as tmp:
        base = one(args.model, args.questions, "prefix", False, Path(tmp))
        runs = [("no reuse", "prefix", False), ("reuse, prefix order", "prefix", True)]
        if args.plan:
            runs.insert(1, ("reuse, plan order", "plan", True))
        for label, order, reuse in runs:
            r = base if not reuse else one(args.model, args.questions, order, reuse, Path(tmp))
            same = r["values"] == base["values"]
            speed, cpu_speed = base["wall"] / r["wall"], base["cpu"] / max(r["cpu"], 1e-9)
            verdict = ""
            if reuse and order == "prefix":
                verdict = f"  goal >= {GOAL}x: {'met' if speed >= GOAL and same else 'NOT met'}"
            lines.append(
                f"{label}: evaluated/prompted {r['evaluated']:,}/{r['prompted']:,} = "
                f"{r['evaluated'] / max(r['prompted'], 1):.2f}, {r['trials']} trials, wall {r['wall']:.1f} s "
                f"({speed:.2f}x), CPU {r['cpu']:.1f} s ({cpu_speed:.2f}x), numbers "
                f"{'identical' if same else 'DIFFERENT'}{verdict}"
            )
    return lines


if __name__ == "__main__":
    import sys

    for line in run(sys.argv[1:]):
        print(line)
