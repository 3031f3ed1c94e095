"""One trial: a strategy run through a Caller, parsed and scored. A failed call is an ERROR on the
trial (score None), never a wrong answer."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from components.core.scoring import (
    best_subspan_em,
    exact_match,
    fuzzy_match,
    retrieval_precision,
    retrieval_recall,
    scorer_for,
)
from components.providers.base import ProviderError, Settings
from components.providers.pricing import cost_usd
from components.run.caller import BudgetExceeded, Caller, Cancelled
from components.strategies import ParamError, get_strategy

log = logging.getLogger(__name__)


@dataclass
class TrialResult:
    answer: str = ""
    raw_answer: str = ""
    parse_error: str | None = None
    score: float | None = None  # fuzzy match (R&R §4.3)
    subspan_em: float | None = None
    exact: float | None = None
    page_recall: float | None = None
    page_precision: float | None = None
    error: str | None = None
    calls: int = 0
    cached_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = 0.0
    latency_s: float = 0.0
    gold_pages: tuple[int, ...] = ()
    retrieved_pages: tuple[int, ...] | None = None
    cited_pages: tuple[int, ...] = ()
    call_keys: list[str] = field(default_factory=list)
    outcome: object = None  # strategies.Outcome (prompts with spans, completions), when it ran

    def row(self) -> dict:
        """The fields a trial row stores."""
        keys = ("answer", "raw_answer", "parse_error", "score", "subspan_em", "exact", "page_recall",
                "page_precision", "error", "calls", "cached_calls", "input_tokens", "output_tokens", "cost_usd",
                "latency_s", "gold_pages", "retrieved_pages", "cited_pages")
        return {k: getattr(self, k) for k in keys}


def params_json(params: dict) -> str:
    return json.dumps(params, sort_keys=True)


def _totals(result: TrialResult, completions: list, spec) -> None:
    result.calls = len(completions)
    result.cached_calls = sum(1 for c in completions if c.cached)
    result.input_tokens = sum(c.input_tokens for c in completions)
    result.output_tokens = sum(c.output_tokens for c in completions)
    result.latency_s = sum(c.latency_s for c in completions)
    costs = [cost_usd(spec.provider, spec.model, c.input_tokens, c.output_tokens) for c in completions]
    result.cost_usd = None if any(c is None for c in costs) else sum(costs)


async def execute(doc, question: str, answers, strategy_name: str, params: dict, caller: Caller,
                  settings_for: Callable[[object], Settings], answer_mode: str = "any",
                  on_call: Callable[[object, object], None] | None = None) -> TrialResult:
    """Run one trial. BudgetExceeded and Cancelled pass through (the trial did not happen)."""
    result = TrialResult(gold_pages=tuple(doc.gold))
    completions: list = []

    async def ask(prompt):
        if on_call is not None:
            on_call(prompt, None)  # about to send (or read from the cache)
        completion, key = await caller.ask(prompt.messages, settings_for(prompt))
        if on_call is not None:
            on_call(prompt, completion)
        completions.append(completion)
        result.call_keys.append(key)
        return completion

    try:
        strategy = get_strategy(strategy_name)
        outcome = await strategy.run(doc, question, params, ask)
    except (BudgetExceeded, Cancelled):
        raise
    except ProviderError as exc:
        result.error = str(exc) or exc.__class__.__name__
    except ParamError as exc:
        result.error = f"invalid parameters: {exc}"
    except Exception as exc:  # a bug must not stop a sweep; it is recorded on the trial
        log.exception("trial failed")
        result.error = f"{exc.__class__.__name__}: {exc}"
    _totals(result, completions, caller.spec)
    if result.error is not None:
        return result
    result.outcome = outcome
    answers = list(answers)
    result.answer = outcome.answer or ""
    result.raw_answer = outcome.completions[-1].text if outcome.completions else ""
    errors = ([] if outcome.parsed.ok else [outcome.parsed.error]) + list(outcome.stage_errors)
    result.parse_error = "; ".join(e for e in errors if e) or None
    prediction = result.answer or result.raw_answer
    result.score = scorer_for(fuzzy_match, answer_mode)(result.answer, answers)
    result.subspan_em = scorer_for(best_subspan_em, answer_mode)(prediction, answers)
    result.exact = scorer_for(exact_match, answer_mode)(result.answer, answers)
    result.retrieved_pages = tuple(outcome.retrieved_pages) if outcome.retrieved_pages is not None else None
    result.cited_pages = tuple(outcome.cited_pages or ())
    pages = result.retrieved_pages if result.retrieved_pages is not None else result.cited_pages
    result.page_recall = retrieval_recall(pages, doc.gold)
    result.page_precision = retrieval_precision(pages, doc.gold)
    return result
