"""LITM Explorer's engine: no UI. The layers, each a folder, each using only those above it:

- core/        tokens, documents, loaders, positions, prompts (+ spans), completion, parsing,
               scoring, metrics, stats
- strategies/  every strategy (+ its templates): documents and a question -> prompts -> an outcome
- tasks/       task files, generators, sweep documents, distractors, the bundled samples
- providers/   OpenAI, Anthropic, OpenAI-compatible, the local model, a fake; prices
- run/         sweep config, plan, estimate, caller (cache, limits), trial, runner, run store
- report/      analysis (accuracy with intervals), sweeps (labels, stores combined), overlays
               (published curves on our axes), charts, prompt map, published results
- cli/         `litm`, one module per command

The public API is the names below, importable from `components` directly (loaded on first use, so
`import components` is cheap): e.g. `from components import paginate, get_strategy, run_sweep`.
"""

from __future__ import annotations

from importlib import import_module

PUBLIC: dict[str, str] = {
    # core
    "tokenizer": "components.core.tokens",
    "Document": "components.core.documents",
    "Page": "components.core.documents",
    "make_document": "components.core.documents",
    "paginate": "components.core.documents",
    "read_upload": "components.core.loaders",
    "read_path": "components.core.loaders",
    "DocumentError": "components.core.loaders",
    "Prompt": "components.core.prompts",
    "Span": "components.core.prompts",
    "Completion": "components.core.completion",
    "score": "components.core.metrics",
    "METRICS": "components.core.metrics",
    "get_metric": "components.core.metrics",
    "proportion_ci": "components.core.stats",
    # strategies
    "STRATEGIES": "components.strategies",
    "get_strategy": "components.strategies",
    "ParamError": "components.strategies",
    # tasks
    "Task": "components.tasks.model",
    "read_tasks": "components.tasks.importers",
    "write_tasks": "components.tasks.importers",
    "build_document": "components.tasks.sweepdocs",
    "build_by_index": "components.tasks.sweepdocs",
    "generate": "components.tasks.generators",
    "list_samples": "components.tasks.samples",
    "list_task_sets": "components.tasks.samples",
    # providers
    "ModelSpec": "components.providers.base",
    "Settings": "components.providers.base",
    "ProviderError": "components.providers.base",
    "make_provider": "components.providers.factory",
    "cost_usd": "components.providers.pricing",
    # run
    "SweepConfig": "components.run.config",
    "plan": "components.run.plan",
    "estimate": "components.run.estimate",
    "Trial": "components.run.schema",
    "RunStore": "components.run.store",
    "run_sweep": "components.run.runner",
    "run_one": "components.run.runner",
    "run_batch_sweep": "components.run.batch",
    "run_sweep_any": "components.run.batch",
    # report
    "load_published": "components.report.published",
}

__all__ = sorted(PUBLIC)


def __getattr__(name: str):
    module = PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'components' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *PUBLIC})
