"""One question's likelihood at several gold positions, for a page: an estimate first, then the scores
as they come (progress callback, cancel).

    est = estimate(docs, question, answers, spec)        # seconds, from this machine's measured speed
    scores = score_positions(docs, question, answers, spec, store=store,
                             progress=lambda p: ..., cancel=event)

`docs` maps a position label (a gold index, a fraction) to the Document with the gold page there
(tasks.sweepdocs.move_gold or tasks.sweepdocs.cell_document build them). Positions run in prefix order (run/plan.prefix_key),
so a local model's KV cache keeps what consecutive prompts share; the result is keyed as given.
Calls are cached in `store` like any sweep call: asking again costs nothing.

The estimate: tokens the model must evaluate (each prompt's tokens less the prefix it shares with the
prompt before it, in whole 512-token chunks as local.keep_prefix keeps them; prompt tokens counted with
the prompt's own tokenizer), divided by the model's prompt tokens per second on this machine
(LocalProvider.speed(): measured from this process's own scoring once it has scored 2,000 tokens, else
once per process on a fixed 600-token text, about 1-3 s). A provider without a measured speed (a
server) gives no seconds.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from components.providers.base import ModelSpec
from components.providers.factory import make_provider
from components.run.caller import Caller, Cancelled
from components.run.measure import score_trial
from components.run.plan import prefix_key
from components.run.schema import Trial
from components.strategies import get_strategy

CHUNK = 512  # local.BATCH: the KV cache is kept in whole chunks


@dataclass(frozen=True)
class LiveEstimate:
    prompts: int
    tokens: int  # prompt tokens of all positions
    evaluated: int  # of those, tokens to evaluate with the shared prefixes kept
    tokens_per_s: float | None
    seconds: float | None


@dataclass(frozen=True)
class ScoreProgress:
    done: int
    total: int
    elapsed_s: float
    estimate_s: float | None
    position: object = None  # the label just scored (None before the first)
    trial: Trial | None = None


def _prompts(docs: dict, question: str, strategy: str, params: dict | None):
    strat = get_strategy(strategy)
    return {k: strat.first_prompts(d, question, params)[0] for k, d in docs.items()}


def run_order(prompts: dict) -> list:
    """Position labels in prefix order (the sweep's `order = "prefix"` rule)."""
    return sorted(prompts, key=lambda k: (prefix_key(prompts[k].text), str(k)))


def estimate(
    docs: dict,
    question: str,
    answers,
    spec: ModelSpec,
    *,
    strategy: str = "litm",
    params: dict | None = None,
    provider=None,
    measure_speed: bool = True,
) -> LiveEstimate:
    prompts = _prompts(docs, question, strategy, params)
    order = run_order(prompts)
    n_alias = max(1, len([a for a in dict.fromkeys(answers) if isinstance(a, str) and a.strip()]))
    tokens = evaluated = 0
    previous = ""
    for k in order:
        p = prompts[k]
        text = p.text
        shared = 0
        for a, b in zip(previous, text, strict=False):
            if a != b:
                break
            shared += 1
        shared_tokens = int(p.tokens * shared / max(len(text), 1))
        kept = shared_tokens - shared_tokens % CHUNK
        tokens += p.tokens * n_alias
        evaluated += (p.tokens - kept) + (n_alias - 1) * min(p.tokens, CHUNK)  # a second alias keeps the rest
        previous = text
    rate = None
    prov = provider
    if measure_speed and spec.provider == "local":
        prov = prov or make_provider(spec)
    speed = getattr(prov, "speed", None) if prov is not None else None
    if callable(speed):
        rate = float(speed())
    return LiveEstimate(len(prompts), tokens, evaluated, rate, evaluated / rate if rate else None)


def score_positions(
    docs: dict,
    question: str,
    answers,
    spec: ModelSpec,
    *,
    strategy: str = "litm",
    params: dict | None = None,
    store=None,
    provider=None,
    api_key: str | None = None,
    progress: Callable[[ScoreProgress], None] | None = None,
    cancel: threading.Event | None = None,
    estimate_s: float | None = None,
) -> dict:
    """{position label: Trial with answer_logprob (or its error)}; a cancelled run returns the positions
    scored so far."""
    prompts = _prompts(docs, question, strategy, params)
    order = run_order(prompts)
    t0 = time.perf_counter()

    async def go() -> dict:
        prov = provider or make_provider(spec, api_key)
        caller = Caller(prov, store, concurrency=1, cancel=cancel)
        out: dict = {}
        try:
            if progress is not None:
                progress(ScoreProgress(0, len(order), 0.0, estimate_s))
            for k in order:
                if cancel is not None and cancel.is_set():
                    break
                doc = docs[k]
                trial = Trial(
                    question=question,
                    answers=list(answers),
                    strategy=strategy,
                    model=spec.label,
                    gold_pages=list(doc.gold),
                    metric=get_strategy(strategy).metric,
                )
                try:
                    await score_trial(trial, doc, question, answers, strategy, dict(params or {}), caller)
                except Cancelled:
                    break
                out[k] = trial
                if progress is not None:
                    progress(
                        ScoreProgress(len(out), len(order), time.perf_counter() - t0, estimate_s, k, trial)
                    )
        finally:
            if provider is None and hasattr(prov, "aclose"):
                await prov.aclose()
        return out

    return asyncio.run(go())
