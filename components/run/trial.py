"""One trial: a strategy run through a Caller, parsed and scored with every metric that applies.

A failed call is an ERROR on the trial (no score), never a wrong answer. The trial's fields are
components.run.schema.Trial; `Ran` adds what only a live view needs (the Outcome with its prompts
and completions, and the cache keys of the calls).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from components.core.completion import NoAttention
from components.core.metrics import answer_scores
from components.core.scoring import gold_fact_counts, retrieval_precision, retrieval_recall, sentence_counts
from components.providers.base import ProviderError, Settings
from components.providers.pricing import cost_usd
from components.run.caller import Asks, BudgetExceeded, Cancelled, NeedsCall
from components.run.schema import Trial
from components.run.store_batches import StoreWriteError
from components.strategies import ParamError, get_strategy

log = logging.getLogger(__name__)


@dataclass
class Ran:
    """A trial as it ran: the stored fields, the strategy's Outcome (None if it failed) and call keys."""

    trial: Trial
    outcome: object = None  # strategies.Outcome: prompts with spans, completions
    call_keys: list[str] = field(default_factory=list)


def add_totals(trial: Trial, completions: list, spec, batch: bool = False) -> None:
    """Fill a trial's call, token, latency and cost totals from its completions."""
    trial.calls = len(completions)
    trial.cached_calls = sum(1 for c in completions if c.cached)
    trial.input_tokens = sum(c.input_tokens for c in completions)
    trial.output_tokens = sum(c.output_tokens for c in completions)
    trial.latency_s = sum(c.latency_s for c in completions)
    trial.cached_input_tokens = sum(c.cached_input_tokens for c in completions)
    trial.cache_write_tokens = sum(c.cache_write_tokens for c in completions)
    costs = [
        cost_usd(
            spec.provider,
            spec.model,
            c.input_tokens,
            c.output_tokens,
            batch=batch,
            cached_input_tokens=c.cached_input_tokens,
            cache_write_tokens=c.cache_write_tokens,
        )
        for c in completions
    ]
    trial.cost_usd = None if any(c is None for c in costs) else sum(c or 0.0 for c in costs)


def score_outcome(trial: Trial, outcome, doc, answers, answer_mode: str = "any", gold_sentences=()) -> None:
    """Every metric that applies, from the outcome (R&R §4.3, LITM's evaluation, ALR2 §4 and §5.1)."""
    answers = list(answers)
    trial.answer = outcome.answer or ""
    trial.raw_answer = outcome.completions[-1].text if outcome.completions else ""
    errors = ([] if outcome.parsed.ok else [outcome.parsed.error]) + list(outcome.stage_errors)
    trial.parse_error = "; ".join(e for e in errors if e) or None
    for column, value in answer_scores(trial.answer, answers, answer_mode, raw=trial.raw_answer).items():
        setattr(trial, column, value)
    trial.retrieved_pages = list(outcome.retrieved_pages) if outcome.retrieved_pages is not None else None
    trial.cited_pages = list(outcome.cited_pages or ())
    pages = trial.retrieved_pages if trial.retrieved_pages is not None else trial.cited_pages
    trial.page_recall = retrieval_recall(pages, doc.gold)
    trial.page_precision = retrieval_precision(pages, doc.gold)
    trial.gold_pages = list(doc.gold)
    if outcome.sentences:
        trial.sentences = list(outcome.sentences)
        # ALR2 §5.1: the counts are stored, so a cell's rate pools them (components.report.analysis)
        retrieved, hallucinated = sentence_counts(outcome.sentences, [p.text for p in doc.pages])
        trial.sentences_retrieved, trial.sentences_hallucinated = retrieved, hallucinated
        trial.hallucination_rate = hallucinated / retrieved if retrieved else None
        gold, recalled = gold_fact_counts(outcome.sentences, gold_sentences)
        trial.gold_facts, trial.gold_facts_recalled = (gold, recalled) if gold else (None, None)
        trial.sentence_recall = recalled / gold if gold else None


async def execute(
    doc,
    question: str,
    answers,
    strategy_name: str,
    params: dict,
    caller: Asks,
    settings_for: Callable[[object], Settings],
    answer_mode: str = "any",
    on_call: Callable[[object, object], None] | None = None,
    gold_sentences=(),
    task_metric: str | None = None,
) -> Ran:
    """Run one trial (`task_metric`: the metric the task's benchmark scores it with, tasks.model.Task.metric,
    the primary metric of a strategy that follows it). BudgetExceeded, Cancelled, NeedsCall and StoreWriteError (the store cannot be written: a
    full disk) pass through (the trial did not happen).
    A caller with `batch = True` (run/batch.py) prices its calls at batch prices."""
    trial = Trial(gold_pages=list(doc.gold), question=question, answers=list(answers), strategy=strategy_name)
    ran = Ran(trial)
    completions: list = []

    async def ask(prompt):
        if on_call is not None:
            on_call(prompt, None)  # about to send (or read from the cache)
        hint = {"cuts": prompt.cache_cuts()} if getattr(caller, "takes_cache_cuts", False) else {}
        completion, key = await caller.ask(prompt.messages, settings_for(prompt), **hint)
        if on_call is not None:
            on_call(prompt, completion)
        completions.append(completion)
        ran.call_keys.append(key)
        return completion

    async def attend(prompt):
        """Where the model looks in `prompt`, by page (attention-sort, calibrated-attention): a cached call."""
        from components.providers.attention import regions_of

        found, key = await caller.attention(prompt.messages, regions_of(prompt))
        completions.append(found.completion())
        ran.call_keys.append(key)
        return found

    if callable(getattr(caller, "attention", None)):
        ask.attend = attend  # type: ignore[attr-defined]
    outcome = None
    try:
        strategy = get_strategy(strategy_name)
        trial.metric = strategy.metric_for(task_metric)
        outcome = await strategy.run(doc, question, params, ask)
    except (
        BudgetExceeded,
        Cancelled,
        NeedsCall,
        StoreWriteError,
    ):  # the store's: a full disk is no trial's error
        raise
    except ProviderError as exc:
        trial.error, trial.error_kind = str(exc) or exc.__class__.__name__, exc.kind
    except ParamError as exc:
        trial.error, trial.error_kind = f"invalid parameters: {exc}", "params"
    except NoAttention as exc:
        trial.error, trial.error_kind = str(exc), "cannot_score"
    except Exception as exc:  # a bug must not stop a sweep; it is recorded on the trial
        # one line for the user (the trial holds the message); the traceback only in debug logging
        log.debug("trial failed", exc_info=True)
        trial.error, trial.error_kind = f"{exc.__class__.__name__}: {exc}", "bug"
    add_totals(trial, completions, caller.spec, getattr(caller, "batch", False))
    if trial.error is None:
        ran.outcome = outcome
        score_outcome(trial, outcome, doc, answers, answer_mode, gold_sentences)
    return ran
