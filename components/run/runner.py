"""Running sweeps (and single Playground runs): asyncio inside, a plain function outside.

run_sweep(config, store) plans the grid, skips trials the store already has (resume), runs the rest
with per-model concurrency and requests-per-minute limits, writes each trial as it finishes, and
stops cleanly on cancel (a threading.Event) or when the budget is used up, and stops early when the
first `fail_fast` trials all fail with the same error that every later call would repeat (a refused
key, an unknown model, a request the server refuses: providers.base.FATAL_KINDS). It runs its own event loop,
so it can be called from any thread (a Streamlit script thread, the CLI).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from components.providers.base import FATAL_KINDS, ModelSpec, Settings
from components.providers.factory import make_provider
from components.run.caller import Budget, BudgetExceeded, Caller, Cancelled
from components.run.config import SweepConfig
from components.run.gcpace import paced
from components.run.measure import GENERATES, SCORES, score_trial
from components.run.plan import Documents, ordered, plan, precount
from components.run.schema import Trial, params_json
from components.run.trial import Ran, execute
from components.strategies import get_strategy

__all__ = ["Progress", "Ran", "SweepSummary", "run_one", "run_sweep", "workers_for"]


@dataclass(frozen=True)
class Progress:
    done: int  # trials present (including those done before this run)
    total: int
    errors: int
    spend_usd: float  # dollars sent in this run (cached calls are free)
    calls_per_s: float  # requests sent per second in this run
    cached: int  # calls answered from the store in this run
    sent: int = 0  # calls sent in this run
    elapsed_s: float = 0.0
    requests: int = 0  # HTTP requests the servers saw in this run (SDK retries included)
    note: str = ""  # why the sweep is waiting right now (a rate limit), "" when it is not
    batch: str = ""  # batch mode: the provider batches' own counts (components/run/batch.py)


@dataclass(frozen=True)
class SweepSummary:
    sweep_id: int
    name: str
    status: str  # done | cancelled | failed
    reason: str
    total: int
    done: int
    ran: int  # trials run (and written) in this run
    skipped: int  # trials already present, not run again
    errors: int
    calls_sent: int
    cached_calls: int
    spend_usd: float
    elapsed_s: float
    requests: int = 0  # HTTP requests the servers saw (SDK retries included)
    stopped_early: bool = False  # fail-fast: the first trials all failed alike


def workers_for(concurrency: int) -> int:
    """Trial workers per model: half as many again as the calls it may have in flight. The Caller's
    semaphore still holds requests to `concurrency`; the spare workers have their next trial's document
    built, its cache key looked up and its call claimed, and wait at the semaphore, so a request starts
    the moment one returns while the answered worker scores and writes its trial. Measured on 3,000 tiny
    trials against the bench's loopback server (5 interleaved runs each): runner/bare 0.87-0.91 with one
    worker per call in flight, 0.88-0.96 with 1.25 and 0.91-0.95 with 2 workers per call."""
    return concurrency + concurrency // 2 + 1


def _key_for(model, api_keys: dict | None) -> str | None:
    keys = api_keys or {}
    return keys.get(model.label) or keys.get(model.api_key_env or "") or keys.get(model.provider)


def stamp(trial, spec, built) -> None:
    """Fill in what a trial is of (its plan spec and built document): the one place both the live
    runner and the batch runner take these fields from."""
    trial.trial_key, trial.task, trial.question = spec.key, spec.task.id, spec.task.question
    trial.answers, trial.strategy, trial.params = list(spec.task.answers), spec.strategy, params_json(spec.params)
    trial.model, trial.length, trial.position = spec.model.label, spec.length, spec.position
    trial.documents, trial.gold_index = spec.documents, spec.gold_index
    if built is not None:
        trial.actual_length, trial.actual_position = built.length_tokens, built.position_tokens
        trial.gold_pages = list(built.gold_pages)


def first_prompt_text(spec, docs: Documents) -> str:
    """The text of a trial's first prompt ("" when its document or prompt cannot be built: the trial
    then fails when it runs, with the reason)."""
    try:
        built = docs.get(spec)
        return get_strategy(spec.strategy).first_prompts(built.document, spec.task.question, spec.params)[0].text
    except ValueError:
        return ""


def run_sweep(config: SweepConfig, store, *, progress: Callable[[Progress], None] | None = None,
              cancel: threading.Event | None = None, api_keys: dict | None = None, retry_errors: bool = False,
              providers: dict | None = None, owner: str | None = None) -> SweepSummary:
    """Run (or resume) a sweep. api_keys: {model label | env var name | provider: key}, kept in memory
    only. providers: {model label: provider object} to use instead of making one (tests). owner: who
    made the sweep (the app's workspace token; None from the command line), kept when it resumes.
    A config with mode = "batch" runs through components.run.batch.run_batch_sweep instead."""
    if getattr(config, "mode", "live") != "live":
        raise ValueError(f"sweep {config.name!r} has mode = {config.mode!r}: run it with components.run.batch")
    with paced():  # fewer garbage collections while trials run (components/run/gcpace.py)
        return asyncio.run(_run_sweep(config, store, progress, cancel, api_keys, retry_errors, providers or {},
                                      owner))


async def _run_sweep(config, store, progress, cancel, api_keys, retry_errors, given, owner) -> SweepSummary:
    t0 = time.perf_counter()
    tasks = config.load_tasks()
    pool_tasks = config.all_tasks().tasks  # the whole file is the distractor pool, not only n_tasks
    specs = plan(config, tasks)
    # every key is resolved before the sweep starts: MissingKey means nothing was sent or written
    provs = {m.label: given.get(m.label) or make_provider(m.spec, _key_for(m, api_keys)) for m in config.models}
    sweep_id = store.open_sweep(config.name, config.to_dict(), owner=owner)
    keys = {s.key for s in specs}
    present_all = store.trial_keys(sweep_id) & keys
    present_ok = store.trial_keys(sweep_id, with_errors=False) & keys
    present = present_ok if retry_errors else present_all
    todo = [s for s in specs if s.key not in present]
    docs = Documents(config.encoding, pool_tasks)
    if todo:
        precount(tasks, config.encoding)
        todo = ordered(todo, config.run_order, lambda s: first_prompt_text(s, docs))
    budget = Budget(config.max_calls, config.max_usd)
    callers = {m.label: Caller(provs[m.label], store, concurrency=config.concurrency, rpm=m.requests_per_minute,
                               budget=budget, cancel=cancel, max_retry_after=config.max_retry_after)
               for m in config.models}
    state = {"done": len(present), "errors": len(present_all - present_ok) if not retry_errors else 0,
             "ran": 0, "last": 0.0, "stop": "", "early": False}
    first: list = []  # (error_kind, error) of the first trials run, for fail-fast

    def report(force: bool = False) -> None:
        now = time.perf_counter()
        if progress is None or (not force and now - state["last"] < 0.1):
            return
        state["last"] = now
        elapsed = now - t0
        note = "; ".join(c.waiting for c in callers.values() if c.waiting)
        progress(Progress(state["done"], len(specs), state["errors"], budget.spent,
                          budget.sent / elapsed if elapsed > 0 else 0.0, budget.cached, budget.sent, elapsed,
                          requests(), note))

    def requests() -> int:
        return sum(c.requests for c in callers.values())

    def stop(reason: str) -> None:
        """The sweep stops: the first reason is kept, and no caller starts another request (a spare
        worker already past its semaphore would otherwise send one more)."""
        state["stop"] = state["stop"] or reason
        for c in callers.values():
            c.halted = state["stop"]

    def fail_fast(trial) -> None:
        n = config.fail_fast
        if not n or len(first) >= n:
            return
        first.append((trial.error_kind if trial.error else None, trial.error))
        kinds = {k for k, _ in first}
        if len(first) == n and len(kinds) == 1 and next(iter(kinds)) in FATAL_KINDS:
            state["early"] = True
            stop(f"stopped early: the first {n} trials all failed ({first[0][0]}): {first[0][1]}")

    async def one(spec) -> None:
        try:
            built = docs.get(spec)
        except ValueError as exc:
            built, ran = None, Ran(Trial(error=f"document: {exc}", error_kind="document"))
        if built is not None and config.measure in GENERATES:
            ran = await execute(built.document, spec.task.question, spec.task.answers, spec.strategy,
                                spec.params, callers[spec.model.label],
                                lambda p, m=spec.model: config.settings(m, p.max_tokens),
                                answer_mode=spec.task.meta.get("answer_mode", "any"),
                                gold_sentences=spec.task.gold_sentences)
        elif built is not None:
            ran = Ran(Trial(gold_pages=list(built.document.gold), metric=get_strategy(spec.strategy).metric))
        if built is not None and config.measure in SCORES and ran.trial.error is None:
            ran.call_keys += await score_trial(ran.trial, built.document, spec.task.question, spec.task.answers,
                                               spec.strategy, spec.params, callers[spec.model.label])
        trial = ran.trial
        stamp(trial, spec, built)
        store.put_trial(sweep_id, trial.row(), ran.call_keys)
        state["done"] += 1
        state["ran"] += 1
        state["errors"] += trial.error is not None
        fail_fast(trial)
        report()

    async def worker(queue: list) -> None:
        while queue and not state["stop"]:
            if cancel is not None and cancel.is_set():
                stop("cancelled")
                return
            try:
                await one(queue.pop())
            except BudgetExceeded as exc:
                stop(str(exc))
            except Cancelled:
                stop("cancelled")

    async def tick() -> None:  # the progress line moves (and says why) while calls wait
        while True:
            await asyncio.sleep(1.0)
            report()

    async def watch(workers: list[asyncio.Task]) -> None:
        while cancel is not None and not cancel.is_set():
            await asyncio.sleep(0.05)
        stop("cancelled")
        for w in workers:
            w.cancel()  # in-flight calls are dropped; their trials are simply not written

    status, reason = "failed", "interrupted"
    try:
        workers = []
        for m in config.models:
            queue = [s for s in todo if s.model.label == m.label][::-1]  # pop() takes them in run order
            workers += [asyncio.create_task(worker(queue)) for _ in range(min(workers_for(config.concurrency),
                                                                               len(queue)))]
        watcher = asyncio.create_task(watch(workers)) if cancel is not None else None
        ticker = asyncio.create_task(tick()) if progress is not None else None
        results = await asyncio.gather(*workers, return_exceptions=True)
        for t in (watcher, ticker):
            if t is not None:
                t.cancel()
        for r in results:
            if isinstance(r, Exception):
                raise r
        if state["early"]:
            status, reason = "failed", state["stop"]
        elif state["stop"]:
            status = "cancelled"
            reason = "cancelled by the user" if state["stop"] == "cancelled" else state["stop"]
        else:
            status = "done"
            reason = f"{state['errors']} trial(s) failed: rerun with --retry-errors" if state["errors"] else ""
    except BaseException as exc:
        reason = f"{exc.__class__.__name__}: {exc}"
        raise
    finally:
        store.finish_sweep(sweep_id, status, reason)
        report(force=True)
        for p in provs.values():
            close = getattr(p, "aclose", None)
            if close is not None:
                await close()
    return SweepSummary(sweep_id, config.name, status, reason, len(specs), state["done"], state["ran"],
                        len(present), state["errors"], budget.sent, budget.cached, budget.spent,
                        time.perf_counter() - t0, requests(), state["early"])


def run_one(doc, question: str, answers, strategy: str, params: dict | None, spec: ModelSpec, store=None,
            api_key: str | None = None, settings: Settings | None = None, provider=None,
            on_call=None) -> Ran:
    """One live trial (the Playground). Cached in `store` like every sweep call. `settings` replaces the
    per-prompt defaults (max_tokens from each prompt, temperature 0, seed 0). `on_call(prompt, None)` is
    called before each call and `on_call(prompt, completion)` after it: progress for the UI."""

    async def go() -> Ran:
        prov = provider or make_provider(spec, api_key)
        caller = Caller(prov, store, concurrency=4)
        try:
            ran = await execute(doc, question, answers, strategy, dict(params or {}), caller,
                                lambda p: settings or Settings(max_tokens=p.max_tokens), on_call=on_call)
            ran.trial.model, ran.trial.params = spec.label, params_json(dict(params or {}))
            return ran
        finally:
            if provider is None and hasattr(prov, "aclose"):
                await prov.aclose()

    return asyncio.run(go())
