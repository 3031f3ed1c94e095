"""The checks of a sweep config that read several keys at once (`CHECKS`, after every key's own rule), and
the size of its plan counted without making it (run/plan.py makes it)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from components.core import words
from components.run.config_read import fail
from components.run.config_rules import BATCH_PROVIDERS

SweepConfig = Any  # components.run.config.SweepConfig, which imports this module (no cycle)

# the trials of a sweep's whole plan (models x strategy settings x cells x tasks, run/plan.py), far above what
# a study needs (the shipped runs have at most 500 trials); each list of the grid: config_read.MAX_LIST
MAX_TRIALS = 200_000


def gold_indices(n: int, gold_index) -> list[int]:
    """The distinct 0-based indices of a gold_index list that exist for n documents, in order."""
    return list(dict.fromkeys(i if i >= 0 else n + i for i in gold_index if -n <= i < n))


def count_cells(config) -> int:
    """len(cells(config)), without building them."""
    if not config.documents:
        return sum(len(config.positions_for(length)) for length in config.lengths)
    return sum(len(gold_indices(n, config.gold_index)) for n in dict.fromkeys(config.documents))


def count_trials(config, n_tasks: int) -> int:
    """How many trials the plan of this config has with n_tasks tasks, without making it."""
    settings = sum(config.count_settings(s) for s in config.strategies)
    samples = getattr(config, "samples", 1) or 1
    return len(config.models) * settings * count_cells(config) * n_tasks * samples


def check_size(config, n_tasks: int, *, at_least: bool = False) -> None:
    """ValueError (one line) when the plan would hold more than MAX_TRIALS trials; at_least: n_tasks is
    the fewest the sweep can have (its task file not read yet)."""
    n = count_trials(config, n_tasks)
    if n > MAX_TRIALS:
        settings = sum(config.count_settings(s) for s in config.strategies)
        tasks = "a task" if at_least and n_tasks == 1 else f"{n_tasks:,} tasks"
        raise ValueError(
            f"sweep {config.name!r} has {'at least ' if at_least else ''}{n:,} trials "
            f"({words.count(len(config.models), 'model')} x {words.count(settings, 'strategy setting')} x "
            f"{count_cells(config):,} cells x {tasks}); the limit is {MAX_TRIALS:,} trials a "
            "sweep: split it into smaller sweeps"
        )


# the checks that read several keys, after every key's own rule --------------------------------------------


def _measure_fits(cfg: SweepConfig) -> None:
    # every measure: the attention strategies need a model that gives attention
    from components.run.measure import check_measure

    try:
        check_measure(cfg)
    except ValueError as exc:
        fail(str(exc))


def _batch_fits(cfg: SweepConfig) -> None:
    if cfg.mode == "batch":
        for m in cfg.models:
            if m.provider not in BATCH_PROVIDERS:
                fail(
                    'mode = "batch" works with openai, openai-compatible, anthropic and gemini models '
                    f'only; {m.label} has no batch interface (use mode = "live")'
                )


def _params_fit(cfg: SweepConfig) -> None:
    cfg.check_params()


def _size_fits(cfg: SweepConfig) -> None:
    try:
        check_size(cfg, cfg.n_tasks or 1, at_least=True)  # the plan counts the tasks it reads
    except ValueError as exc:
        fail(str(exc))


def _models_distinct(cfg: SweepConfig) -> None:
    labels = [m.label for m in cfg.models]
    if len(set(labels)) != len(labels):
        fail("the same model is listed twice")


def _judge_fits(cfg: SweepConfig) -> None:
    """metric = "judge" and [sweep.judge] come together; the judge reads answers, live."""
    if (cfg.metric == "judge") != (cfg.judge is not None):
        fail('metric = "judge" needs a [sweep.judge] table naming the judge model, and the table needs it')
    if cfg.judge is not None and (cfg.measure == "likelihood" or cfg.mode != "live" or cfg.design):
        fail('metric = "judge" judges generated answers in a live sweep (measure = "answer", mode = "live")')


def _samples_fit(cfg: SweepConfig) -> None:
    """samples > 1 asks each model again at a temperature above 0 (greedy answers would all be one)."""
    if cfg.samples > 1:
        if cfg.mode != "live" or cfg.design:
            fail("samples > 1 runs in a live sweep of lengths and positions or documents")
        for m in cfg.models:
            if not m.temperature:
                fail(
                    f"samples = {cfg.samples} needs temperature above 0 on {m.label} (e.g. temperature = 0.7)"
                )


CHECKS: tuple[Callable[[SweepConfig], None], ...] = (
    _measure_fits,
    _batch_fits,
    _params_fit,
    _size_fits,
    _models_distinct,
    _judge_fits,
    _samples_fit,
)
