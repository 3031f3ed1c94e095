"""A small run store filled with trials (and their calls) for page tests and screenshots."""

from __future__ import annotations

import random
from pathlib import Path

from components.core.completion import Completion
from components.providers.base import ModelSpec
from components.run.store import RunStore

STRATEGY_HIT = {"baseline": (0.85, 0.45, 0.8), "reprompt": (0.9, 0.65, 0.85), "rr": (0.95, 0.85, 0.9)}


def prompt_text(position: float, gold: int) -> str:
    pages = "".join(
        f"<PAGE {p}>\nText of page {p}.{' The answer is Paris.' if p == gold else ''}\n</PAGE {p}>\n"
        for p in range(1, 6)
    )
    return (
        "<INSTRUCTIONS>\nAnswer the question: Where?\n</INSTRUCTIONS>\n<DOCUMENT>\n"
        + pages
        + "</DOCUMENT>\n<INSTRUCTIONS>\nAnswer the question: Where?\n</INSTRUCTIONS>"
    )


def fill(
    path: str | Path,
    *,
    n_tasks: int = 6,
    lengths=(2000, 4000),
    positions=(0.0, 0.5, 1.0),
    name: str = "demo sweep",
    model: str = "fake-model",
    errors: int = 2,
    seed: int = 0,
) -> Path:
    rng = random.Random(seed)
    store = RunStore(path)
    config = {
        "name": name,
        "strategies": list(STRATEGY_HIT),
        "lengths": list(lengths),
        "positions": list(positions),
        "n_tasks": n_tasks,
        "task_set": "synthetic-kv",
        "models": [{"provider": "fake", "model": model}],
    }
    sid = store.open_sweep(name, config)
    spec = ModelSpec("fake", model)
    failed = 0
    for strategy, hits in STRATEGY_HIT.items():
        for length in lengths:
            for i, position in enumerate(positions):
                gold = 1 + round(position * 4)
                for t in range(n_tasks):
                    hit = rng.random() < hits[i % 3]
                    error = None
                    if failed < errors and strategy == "rr" and t == 0:
                        error, failed = "RateLimited: try again later", failed + 1
                    text = prompt_text(position, gold)
                    key = f"{strategy}-{length}-{position}-{t}"
                    response = f"Answer: Paris\nPage: {gold}" if hit else "Answer: London\nPage: 2"
                    if error is None:
                        store.put_call(
                            key,
                            spec,
                            [{"role": "user", "content": text}],
                            {"max_tokens": 64},
                            Completion(response, 120, 8, 0.01, model, False, "stop"),
                        )
                    calls = 2 if strategy == "rr" else 1
                    store.put_trial(
                        sid,
                        {
                            "trial_key": key,
                            "task": f"task-{t}",
                            "question": "Where?",
                            "answers": ["Paris"],
                            "strategy": strategy,
                            "params": '{"r": 1000}' if strategy != "baseline" else "{}",
                            "model": model,
                            "length": length,
                            "position": position,
                            "actual_length": length,
                            "actual_position": int(position * length),
                            "gold_pages": [gold],
                            "retrieved_pages": [gold] if hit else [2],
                            "answer": None if error else ("Paris" if hit else "London"),
                            "score": None if error else float(hit),
                            "subspan_em": None if error else float(hit),
                            "error": error,
                            "calls": calls,
                            "input_tokens": 120 * calls,
                            "output_tokens": 8 * calls,
                            "cost_usd": None if error else 0.0001 * calls,
                            "latency_s": 0.01,
                        },
                        [] if error else [key],
                    )
    store.finish_sweep(sid, "done")
    store.close()
    return Path(path)


def open_tab(at, label: str):
    """Open Results' tab `label` (only the open tab's view is computed) and return it."""
    at.session_state["res_tab"] = label
    at.run()
    assert not at.exception, at.exception
    return next(t for t in at.tabs if t.label == label)
