"""What a sweep will cost, before it runs: calls, input and output tokens, dollars.

First-stage prompts are built for real (their token counts are exact, from the documents' counted
pages). Later stages depend on answers not yet given, so they are ESTIMATED: ICR-type stage 2 reads
about k pages (k per chunk for chunked ICR, at most the whole document); another multi-stage strategy's
later stages are taken as a tenth of its first stage. Outputs are taken as ~12 tokens for a page list
and ~24 for an answer (never more than max_tokens).
"""

from __future__ import annotations

from dataclasses import dataclass

from components.providers.pricing import cost_usd
from components.strategies import STRATEGIES
from components.strategies.rr import ICR

RETRIEVAL_OUT, ANSWER_OUT = 12, 24


@dataclass(frozen=True)
class Estimate:
    calls: int
    input_tokens: int
    output_tokens: int
    usd: float | None  # None when no model in the sweep has a known price
    trials: int = 0
    unpriced: tuple[str, ...] = ()  # models whose price is unknown (left out of usd)
    note: str = "an estimate: later stages depend on the model's answers"
    batch: bool = False  # mode = "batch": usd is at the providers' batch prices (half the list price)
    list_usd: float | None = None  # the same calls at list prices (live mode)

    def lines(self) -> list[str]:
        usd = "unknown (no price for these models)" if self.usd is None else f"${self.usd:,.4f}"
        if self.batch and self.usd is not None:
            usd += f" at batch prices (half of ${self.list_usd:,.4f} live)"
        out = [f"trials:        {self.trials:,}",
               f"calls:         {self.calls:,}",
               f"input tokens:  {self.input_tokens:,}",
               f"output tokens: {self.output_tokens:,}",
               f"cost:          {usd}"]
        if self.unpriced:
            out.append(f"no price for:  {', '.join(self.unpriced)} (edit components/data/prices.json or LITM_PRICES)")
        out.append(f"({self.note})")
        return out


def _page_tokens(prompt) -> int:
    return sum(s.end_token - s.start_token for s in prompt.spans if s.kind in ("page", "gold"))


def estimate_trial(doc, question: str, strategy_name: str, params: dict) -> tuple[int, int, int]:
    """(calls, input tokens, output tokens) of one trial; later stages estimated."""
    strategy = STRATEGIES[strategy_name]
    first = strategy.first_prompts(doc, question, params)
    calls = len(first)
    tin = sum(p.tokens for p in first)
    retrieval = isinstance(strategy, ICR)
    tout = sum(min(p.max_tokens, RETRIEVAL_OUT if retrieval else ANSWER_OUT) for p in first)
    if retrieval:
        k = params.get("k", 5)
        n = len(doc.pages)
        avg = doc.tokens / n if n else 0
        overhead = first[0].tokens - _page_tokens(first[0])
        tin += int(overhead + min(k * len(first), n) * avg)
        tout += ANSWER_OUT
        calls += 1
    elif strategy.stages > 1:
        extra = strategy.stages - 1
        calls += extra
        tin += extra * int(0.1 * tin + 200)
        tout += extra * ANSWER_OUT
    return calls, tin, tout


def measured(config, spec, trial: tuple[int, int, int]) -> tuple[int, int, int]:
    """A trial's (calls, input, output) under the sweep's measure (run/measure.py): the likelihood scores
    each gold alias after the first prompt (no output); "both" adds that to the answer's."""
    measure = getattr(config, "measure", "answer")
    if measure == "answer":
        return trial
    aliases = max(1, len(dict.fromkeys(a for a in spec.task.answers if a.strip())))
    first_in = trial[1] if STRATEGIES[spec.strategy].stages == 1 else 0
    scored = (aliases, aliases * first_in, 0)
    if measure == "likelihood":
        return scored
    return tuple(a + b for a, b in zip(trial, scored, strict=True))


def estimate(config, tasks: list | None = None, skip_keys: set[str] | None = None) -> Estimate:
    """The cost of a sweep's trials (those not in skip_keys), before running it."""
    from components.run.plan import Documents, plan, precount
    from components.run.schema import params_json

    pool_tasks = config.all_tasks().tasks if tasks is None else tasks
    tasks = config.load_tasks() if tasks is None else tasks
    precount(tasks, config.encoding)
    specs = [s for s in plan(config, tasks) if not skip_keys or s.key not in skip_keys]
    documents = Documents(config.encoding, pool_tasks)
    per: dict = {}
    calls = tin = tout = 0
    batch = getattr(config, "mode", "live") == "batch"
    usd = list_usd = 0.0
    priced = False
    unpriced: set[str] = set()
    first = {c: i for i, c in enumerate(dict.fromkeys(s.cell for s in specs))}
    # a cell's trials together (the sum does not depend on order): each document is built once, kept or not
    for s in sorted(specs, key=lambda s: first[s.cell]):
        pkey = (*s.cell, s.strategy, params_json(s.params))
        if pkey not in per:
            try:
                per[pkey] = measured(config, s, estimate_trial(documents.get(s).document, s.task.question,
                                                               s.strategy, s.params))
            except ValueError:  # no document, or a parameter it cannot take: the trial will be an error
                per[pkey] = (0, 0, 0)
        c, i, o = per[pkey]
        calls, tin, tout = calls + c, tin + i, tout + o
        cost = cost_usd(s.model.provider, s.model.model, i, o)
        if cost is None:
            unpriced.add(s.model.label)
        else:
            usd += cost_usd(s.model.provider, s.model.model, i, o, batch=batch)
            list_usd += cost
            priced = True
    return Estimate(calls, tin, tout, usd if priced else None, len(specs), tuple(sorted(unpriced)), batch=batch,
                    list_usd=list_usd if priced else None)
