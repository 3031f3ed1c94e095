"""The trial plan of a sweep: every trial in a fixed order, each with a stable key, and the document
each trial reads (built from prefix sums, R&R §4.1 / LITM §3.1)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from components.run.config import ModelConfig, SweepConfig


@dataclass(frozen=True)
class TrialSpec:
    index: int
    key: str
    task: object  # components.tasks.model.Task
    length: int
    position: float
    strategy: str
    params: dict
    model: ModelConfig


def trial_key(config: SweepConfig, task_id: str, length, position, strategy: str, params: dict,
              model: ModelConfig) -> str:
    blob = json.dumps({"task": task_id, "length": length, "position": position, "strategy": strategy,
                       "params": params, "model": model.label, "base_url": model.base_url or "",
                       "encoding": config.encoding, "max_tokens": model.max_tokens or config.max_tokens,
                       "seed": config.seed}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


def plan(config: SweepConfig, tasks: list | None = None) -> list[TrialSpec]:
    """Every trial, in a fixed order: model, strategy, length, position, task (innermost)."""
    tasks = config.load_tasks() if tasks is None else tasks
    out: list[TrialSpec] = []
    for model in config.models:
        for strategy in config.strategies:
            params = config.params_for(strategy)
            for length in config.lengths:
                for position in config.positions:
                    for task in tasks:
                        key = trial_key(config, task.id, length, position, strategy, params, model)
                        out.append(TrialSpec(len(out), key, task, length, position, strategy, params, model))
    return out


def precount(tasks: list, encoding: str) -> None:
    """Count every passage of every task in one batch (sweepdocs caches counts per text), so building
    the grid's documents tokenises nothing more."""
    from components.core.documents import neutralise_tags
    from components.tasks.sweepdocs import count_passages

    count_passages([neutralise_tags(p.text.strip()) for t in tasks for p in t.passages], encoding)


_POOLS: list[tuple[list, list]] = []  # (tasks, their shared distractor pool), most recent last


def trial_document(task, length: int, position: float, encoding: str, tasks: list | None = None):
    """sweepdocs.build_document; when a task has too few passages of its own for the length, the
    other tasks' passages are the distractor pool (R&R §4.1 takes other questions' passages)."""
    from components.tasks.sweepdocs import build_document, shared_pool

    try:
        return build_document(task, length, position, encoding=encoding)
    except ValueError as exc:
        if tasks is None or "too few" not in str(exc):
            raise
    pool = next((p for t, p in _POOLS if t is tasks), None)
    if pool is None:
        pool = shared_pool(tasks)
        _POOLS[:] = [*_POOLS[-3:], (tasks, pool)]
    return build_document(task, length, position, encoding=encoding, pool=pool)
