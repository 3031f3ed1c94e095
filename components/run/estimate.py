"""What a sweep will cost, before it runs: calls, input and output tokens, dollars.

First-stage prompts are built for real (their token counts are exact, from the documents' counted
pages). Later stages depend on answers not yet given, so they are ESTIMATED: ICR-type stage 2 reads
about k pages (k per chunk for chunked ICR, at most the whole document); another multi-stage strategy's
later stages are taken as a tenth of its first stage. Outputs are taken as ~12 tokens for a page list
and ~24 for an answer (never more than max_tokens).

Given the run store, calls it already holds are counted apart as cached (free): the sweep's trials
already stored are not run again; a trial whose calls another sweep sent is replayed from the store
(exact tokens); `litm sweep --dry-run` prints both, priced apart.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace

from components.providers.base import cache_key
from components.providers.likelihood import score_key
from components.providers.pricing import cost_usd
from components.run.caller import NeedsCall, stored_completion
from components.run.judging import judge_estimate, judges
from components.run.measure import aliases
from components.run.schema import params_json
from components.strategies import STRATEGIES
from components.strategies.rr import ICR

RETRIEVAL_OUT, ANSWER_OUT = 12, 24


@dataclass(frozen=True)
class Estimate:
    calls: int  # calls to send (the store's cached calls are counted apart, below)
    input_tokens: int
    output_tokens: int
    usd: float | None  # None when no model in the sweep has a known price
    trials: int = 0
    unpriced: tuple[str, ...] = ()  # models whose price is unknown (left out of usd)
    note: str = "an estimate: later stages depend on the model's answers"
    batch: bool = False  # mode = "batch": usd is at the providers' batch prices (half the list price)
    list_usd: float | None = None  # the same calls at list prices (live mode)
    done_trials: int = 0  # trials the sweep has in the store already: not run again
    cached_calls: int = 0  # calls the store answers (free): done trials' calls and stored prompts
    cached_input_tokens: int = 0
    cached_output_tokens: int = 0
    cached_usd: float | None = 0.0  # what the cached calls cost when they were sent; None if unknown

    def lines(self) -> list[str]:
        usd = "unknown (no price for these models)" if self.usd is None else f"${self.usd:,.4f}"
        if self.batch and self.usd is not None:
            usd += f" at batch prices (half of ${self.list_usd:,.4f} live)"
        paid = "unknown" if self.cached_usd is None else f"${self.cached_usd:,.4f}"
        done = f" ({self.done_trials:,} already in the store: not run again)" if self.done_trials else ""
        out = [
            f"trials:        {self.trials:,}{done}",
            f"calls:         {self.calls:,} to send; {self.cached_calls:,} already cached in the store",
            f"input tokens:  {self.input_tokens:,} to send; {self.cached_input_tokens:,} cached",
            f"output tokens: {self.output_tokens:,} to send; {self.cached_output_tokens:,} cached",
            f"cost:          {usd} to send; cached calls are free ({paid} when they were sent)",
        ]
        if self.unpriced:
            out.append(
                f"no price for:  {', '.join(self.unpriced)} (edit components/data/prices.json or LITM_PRICES)"
            )
        out.append(f"({self.note})")
        return out


class StoredOnly:
    """A caller that answers from the store only and sends nothing (a dry run): NeedsCall at the first
    call the store does not hold."""

    batch = False

    def __init__(self, spec, store):
        self.spec, self.store = spec, store

    async def ask(self, messages, settings):
        key = cache_key(self.spec, messages, settings)
        row = self.store.get_call(key)
        if row is None:
            raise NeedsCall(key)
        return stored_completion(row), key


def _page_tokens(prompt) -> int:
    return sum(s.end_token - s.start_token for s in prompt.spans if s.kind in ("page", "gold"))


def estimate_trial(
    doc, question: str, strategy_name: str, params: dict, first: list | None = None
) -> tuple[int, int, int]:
    """(calls, input tokens, output tokens) of one trial; later stages estimated. first: the trial's
    first-stage prompts, when already built."""
    strategy = STRATEGIES[strategy_name]
    first = strategy.first_prompts(doc, question, params) if first is None else first
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
        # a later stage that keeps the first's exchange (ALR2 Fig. 3) resends the whole first prompt
        tin += extra * int((1.0 if getattr(strategy, "keeps_context", False) else 0.1) * tin + 200)
        tout += extra * ANSWER_OUT
    return calls, tin, tout


def measured(config, spec, trial: tuple[int, int, int]) -> tuple[int, int, int]:
    """A trial's (calls, input, output) under the sweep's measure (run/measure.py): the likelihood scores
    each gold alias after the first prompt (no output); "both" adds that to the answer's; "attention" reads
    the first prompt once (no output)."""
    measure = getattr(config, "measure", "answer")
    if measure == "answer":
        return trial
    if measure == "attention":
        return (1, trial[1] if STRATEGIES[spec.strategy].stages == 1 else 0, 0)
    golds = max(1, len(aliases(spec.task.answers)))
    first_in = trial[1] if STRATEGIES[spec.strategy].stages == 1 else 0
    scored = (golds, golds * first_in, 0)
    if measure == "likelihood":
        return scored
    return tuple(a + b for a, b in zip(trial, scored, strict=True))


def estimate(
    config,
    tasks: list | None = None,
    skip_keys: set[str] | None = None,
    *,
    specs: list | None = None,
    store=None,
    retry_errors: bool = False,
) -> Estimate:
    """The cost of a sweep's trials (those not in skip_keys), before running it. specs: the plan, when
    already made. store: the run store the sweep would write to: its trials already there are not run
    again and their calls count as cached; a trial not there yet whose calls the store holds (another
    sweep sent the same prompts) is replayed from it and counts as cached; of the others, the first-stage
    calls found in the store count as cached and the rest as to send."""
    from components.run.plan import Documents, plan, precount

    if getattr(config, "design", None):
        return _estimate_multi(
            config, specs if specs is not None else plan(config, tasks), store, retry_errors
        )
    pool_tasks = config.all_tasks().tasks if tasks is None else tasks
    tasks = config.load_tasks() if tasks is None else tasks
    specs = plan(config, tasks) if specs is None else specs
    specs = [s for s in specs if not skip_keys or s.key not in skip_keys]
    done = _done_trials(config, store, {s.key for s in specs}, retry_errors)
    pending = [s for s in specs if s.key not in done]
    if pending:
        precount(tasks, config.encoding)
    documents = Documents(config.encoding, pool_tasks)
    tally = _Tally(getattr(config, "mode", "live") == "batch")
    for _failed, calls, tin, tout, usd in done.values():
        tally.cached(calls or 0, tin or 0, tout or 0, usd)
    replay = _count_pending(config, store, documents, pending, tally)
    if replay:
        asyncio.run(_replay(config, store, documents, replay, tally))
    if judges(config):  # one judge call per trial still to run, priced at the judge's prices
        tally.send(config.judge, *judge_estimate(config, pending))
    return tally.estimate(len(specs), len(done))


def _count_pending(config, store, documents, pending: list, tally) -> list:
    """Count the trials still to run into `tally`; return those whose first-stage calls the store holds
    every one of (perhaps the whole trial: replayed)."""
    per: dict = {}
    first = {c: i for i, c in enumerate(dict.fromkeys(s.document_key for s in pending))}
    replay = []
    cell = None
    # a cell's trials together (the sum does not depend on order): each document is built once, kept or not,
    # and its prompts are dropped when the next cell begins (a dry run of 20,000 trials held every prompt:
    # 874 MB), so what a dry run holds does not grow with the sweep beyond its plan and the kept documents
    for s in sorted(pending, key=lambda s: first[s.document_key]):
        if s.document_key != cell:
            cell = s.document_key
            per.clear()
        pkey = (s.strategy, params_json(s.params))
        if pkey not in per:
            per[pkey] = _first_prompts(config, documents, s)
        est, prompts = per[pkey]
        if getattr(config, "measure", "answer") == "likelihood":
            # it sends one scoring call per gold alias after its one prompt (run/measure.score_trial), not
            # the prompts: those scoring calls are what the store may hold
            tally.partly(s.model, est, _scoring_hits(store, s, prompts))
            continue
        hits = (
            [row for row in (_stored(store, s, p, config) for p in prompts) if row is not None]
            if store
            else []
        )
        if hits and len(hits) == len(prompts):
            replay.append((s, est, hits))  # every first-stage call stored: perhaps the whole trial
            continue
        tally.partly(s.model, est, hits)
    return replay


def _first_prompts(config, documents, s) -> tuple[tuple[int, int, int], list]:
    """A trial's estimate (calls, input, output) under the sweep's measure, and its first prompts; nothing
    for a trial that will be an error (no document, or a parameter it cannot take)."""
    try:
        doc = documents.get(s).document
        prompts = STRATEGIES[s.strategy].first_prompts(doc, s.task.question, s.params)
        return measured(
            config, s, estimate_trial(doc, s.task.question, s.strategy, s.params, prompts)
        ), prompts
    except ValueError:
        return (0, 0, 0), []


def _scoring_hits(store, s, prompts: list) -> list:
    """The stored scoring calls of a likelihood trial: one per gold alias, after its first prompt."""
    if not store or not prompts:
        return []
    keys = (score_key(s.model.spec, prompts[0].messages, a) for a in aliases(s.task.answers))
    return [row for row in (store.get_call(k) for k in keys) if row is not None]


def _estimate_multi(config, specs: list, store, retry_errors: bool) -> Estimate:
    """The multi-question design (run/multiq.py): its prompts are all known before any answer."""
    from components.run.multiq import estimate_units

    done = _done_trials(config, store, {s.key for s in specs}, retry_errors)
    tally = _Tally(False)
    for _failed, calls, tin, tout, usd in done.values():
        tally.cached(calls or 0, tin or 0, tout or 0, usd)
    for model, est, hits in estimate_units(config, specs, store, set(done)):
        tally.partly(model, est, hits)
    return replace(
        tally.estimate(len(specs), len(done)),
        note="an estimate: calls and input tokens are exact, output tokens estimated",
    )


def _stored(store, spec, prompt, config):
    """The stored call of a trial's prompt, or None."""
    return store.get_call(
        cache_key(
            spec.model.spec,
            prompt.messages,
            config.settings(spec.model, prompt.max_tokens, getattr(spec, "sample", None)),
        )
    )


def _done_trials(config, store, keys: set[str], retry_errors: bool) -> dict[str, tuple]:
    """The sweep's trials the store has (those that failed too, unless retry_errors): the runner skips them."""
    if store is None:
        return {}
    try:
        sweep_id = store.sweep_id(config.name)
    except LookupError:
        return {}
    return {
        k: v for k, v in store.trial_totals(sweep_id).items() if k in keys and not (retry_errors and v[0])
    }


async def _replay(config, store, documents, replay: list, tally) -> None:
    """Trials whose first-stage calls are all stored, run against the store only: one that finishes
    is cached whole (its real tokens); one that needs a call the store lacks is counted as partly cached."""
    from components.run.trial import execute

    callers: dict = {}
    for s, est, hits in replay:
        caller = callers.setdefault(s.model.label, StoredOnly(s.model.spec, store))
        try:
            ran = await execute(
                documents.get(s).document,
                s.task.question,
                s.task.answers,
                s.strategy,
                s.params,
                caller,
                lambda p, m=s.model, i=s.sample: config.settings(m, p.max_tokens, i),
                answer_mode=s.task.meta.get("answer_mode", "any"),
                gold_sentences=s.task.gold_sentences,
                task_metric=s.task.metric,
            )
        except NeedsCall:
            tally.partly(s.model, est, hits)
            continue
        t = ran.trial
        tally.cached(
            t.calls or 0,
            t.input_tokens or 0,
            t.output_tokens or 0,
            cost_usd(s.model.provider, s.model.model, t.input_tokens or 0, t.output_tokens or 0),
        )


class _Tally:
    """Calls, tokens and dollars to send and cached, summed over trials."""

    def __init__(self, batch: bool):
        self.batch = batch
        self.calls = self.tin = self.tout = 0
        self.usd = self.list_usd = 0.0
        self.priced = False
        self.unpriced: set[str] = set()
        self.c_calls = self.c_in = self.c_out = 0
        self.c_usd: float | None = 0.0

    def cached(self, calls: int, tin: int, tout: int, usd: float | None) -> None:
        self.c_calls, self.c_in, self.c_out = self.c_calls + calls, self.c_in + tin, self.c_out + tout
        if self.c_usd is not None:
            self.c_usd = None if usd is None and calls else self.c_usd + (usd or 0.0)

    def send(self, model, calls: int, tin: int, tout: int) -> None:
        self.calls, self.tin, self.tout = self.calls + calls, self.tin + tin, self.tout + tout
        cost = cost_usd(model.provider, model.model, tin, tout)
        if cost is None:
            self.unpriced.add(model.label)
        else:
            self.usd += cost_usd(model.provider, model.model, tin, tout, batch=self.batch)
            self.list_usd += cost
            self.priced = True

    def partly(self, model, est: tuple[int, int, int], hits: list) -> None:
        """A trial's estimate, less the stored calls among its first-stage ones (cached, at their real tokens)."""
        c, i, o = est
        hin = sum(h["input_tokens"] or 0 for h in hits)
        hout = sum(h["output_tokens"] or 0 for h in hits)
        if hits:
            self.cached(len(hits), hin, hout, cost_usd(model.provider, model.model, hin, hout))
        self.send(model, max(0, c - len(hits)), max(0, i - hin), max(0, o - hout))

    def estimate(self, trials: int, done: int) -> Estimate:
        known = self.priced or not self.unpriced  # nothing to send is known to cost nothing
        return Estimate(
            self.calls,
            self.tin,
            self.tout,
            self.usd if known else None,
            trials,
            tuple(sorted(self.unpriced)),
            batch=self.batch,
            list_usd=self.list_usd if known else None,
            done_trials=done,
            cached_calls=self.c_calls,
            cached_input_tokens=self.c_in,
            cached_output_tokens=self.c_out,
            cached_usd=self.c_usd,
        )
