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

from components.providers.base import FATAL_KINDS, ModelSpec, ProviderError, Settings
from components.providers.factory import make_provider
from components.run.caller import Budget, BudgetExceeded, Caller, Cancelled
from components.run.config import SweepConfig
from components.run.gcpace import paced
from components.run.judging import judge_trial, judges
from components.run.measure import ATTENDS, GENERATES, SCORES, attend_trial, score_trial
from components.run.plan import Documents, ordered, plan, precount
from components.run.schema import Trial, params_json
from components.run.trial import Ran, execute
from components.strategies import get_strategy

# turns of the event loop a call is given to reach the network before the next document is built
PREFETCH_YIELDS = 8
JUDGE = "[sweep.judge]"  # the judge's provider and Caller, beside the models' (keyed by label)

__all__ = [
    "LiveRun",
    "Progress",
    "Ran",
    "SweepRun",
    "SweepSummary",
    "api_key_for",
    "run_one",
    "run_sweep",
    "workers_for",
]


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
    warnings: tuple[str, ...] = ()  # lines the user should read (batch mode: results that could not be used)


def workers_for(concurrency: int, in_process: bool = False) -> int:
    """Trial workers per model: half as many again as the calls it may have in flight; exactly
    `concurrency` for a model in this process (llama.cpp runs one call at a time, so a spare worker hides
    no latency, and its calls would interleave with a trial's own: a likelihood trial scores each gold
    alias in turn, and alternating two trials' prompts throws away the KV cache of their shared prefix:
    on the shipped 20-document likelihood sweep an alias after the first took 10-25 s instead of about
    1.5 s). The Caller's
    semaphore still holds requests to `concurrency`; the spare workers have their next trial's document
    built, its cache key looked up and its call claimed, and wait at the semaphore, so a request starts
    the moment one returns while the answered worker scores and writes its trial. Measured on 3,000 tiny
    trials against the bench's loopback server (5 interleaved runs each): runner/bare 0.87-0.91 with one
    worker per call in flight, 0.88-0.96 with 1.25 and 0.91-0.95 with 2 workers per call."""
    return concurrency if in_process else concurrency + concurrency // 2 + 1


def api_key_for(model, api_keys: dict | None) -> str | None:
    """The key a sweep's model uses from `api_keys` ({model label | env var name | provider: key}), or None
    (the provider then reads its environment variable)."""
    keys = api_keys or {}
    return keys.get(model.label) or keys.get(model.api_key_env or "") or keys.get(model.provider)


def already_run(store, sweep_id: int, specs: list, retry_errors: bool) -> tuple[set[str], int]:
    """(keys of the plan's trials the store has, how many of those failed): a resumed sweep skips them;
    with retry_errors only the trials without an error are skipped (and none of the skipped failed)."""
    keys = {s.key for s in specs}
    present_all = store.trial_keys(sweep_id) & keys
    present_ok = store.trial_keys(sweep_id, with_errors=False) & keys
    return (present_ok, 0) if retry_errors else (present_all, len(present_all - present_ok))


def label_trial(trial, spec, built) -> None:
    """Fill in what a trial is of (its plan spec and built document): the one place both the live
    runner and the batch runner take these fields from."""
    trial.trial_key, trial.task, trial.question = spec.key, spec.task.id, spec.task.question
    trial.answers, trial.strategy, trial.params = (
        list(spec.task.answers),
        spec.strategy,
        params_json(spec.params),
    )
    trial.model, trial.length, trial.position = spec.model.label, spec.length, spec.position
    trial.documents, trial.gold_index = spec.documents, spec.gold_index
    trial.sample = getattr(spec, "sample", None)
    if built is not None:
        trial.actual_length, trial.actual_position = built.length_tokens, built.position_tokens
        trial.gold_pages = list(built.gold_pages)


def first_prompt_text(spec, docs: Documents) -> str:
    """The text of a trial's first prompt ("" when its document or prompt cannot be built: the trial
    then fails when it runs, with the reason)."""
    try:
        built = docs.get(spec)
        return (
            get_strategy(spec.strategy).first_prompts(built.document, spec.task.question, spec.params)[0].text
        )
    except ValueError:
        return ""


def run_sweep(
    config: SweepConfig,
    store,
    *,
    progress: Callable[[Progress], None] | None = None,
    cancel: threading.Event | None = None,
    api_keys: dict | None = None,
    retry_errors: bool = False,
    providers: dict | None = None,
    owner: str | None = None,
    specs: list | None = None,
) -> SweepSummary:
    """Run (or resume) a sweep. api_keys: {model label | env var name | provider: key}, kept in memory
    only. providers: {model label: provider object} to use instead of making one (tests). owner: who
    made the sweep (the app's workspace token; None from the command line), kept when it resumes.
    specs: the sweep's plan when the caller has made it already (plan(config)), so it is made once.
    A config with mode = "batch" runs through components.run.batch.run_batch_sweep instead."""
    if getattr(config, "mode", "live") != "live":
        raise ValueError(
            f"sweep {config.name!r} has mode = {config.mode!r}: run it with components.run.batch"
        )
    run = LiveRun(config, store, progress, cancel, api_keys, retry_errors, providers or {}, owner, specs)
    with paced():  # fewer garbage collections while trials run (components/run/gcpace.py)
        return asyncio.run(run.go())


class SweepRun:
    """One sweep as it runs, live (LiveRun) or in batches (run/batch.py's BatchRun): its state in one
    object, a method per phase. `go` opens nothing itself: `prepare` plans and opens the sweep, `execute`
    runs the trials, `outcome` names how it ended; the sweep is then closed, progress reported a last
    time and the providers closed, whatever happened. Counts: done (trials present), ran (written in this
    run), skipped (present before), errors (trials that failed); `stopped` says why the sweep stops ("" while
    it runs; the first reason is kept)."""

    INTERRUPTED: tuple[str, str] | None = None  # (status, reason) on Ctrl-C; None: a failure like any other

    def __init__(
        self, config, store, progress, cancel, api_keys, retry_errors, given, owner=None, specs=None
    ):
        self.config, self.store, self.progress, self.cancel = config, store, progress, cancel
        self.api_keys, self.retry_errors, self.given, self.owner = api_keys, retry_errors, given, owner
        self.specs = specs
        self.t0 = time.perf_counter()
        self.done = self.errors = self.ran = self.skipped = self.total = 0
        self.last = 0.0  # when progress was last reported
        self.stopped = ""
        self.provs: dict = {}

    def providers(self) -> dict:
        """{model label: provider}: a given one (tests) or one made with the sweep's key for it (every key
        resolved before the sweep starts: MissingKey means nothing was sent or written)."""
        provs = {
            m.label: self.given.get(m.label) or make_provider(m.spec, api_key_for(m, self.api_keys))
            for m in self.config.models
        }
        if judges(self.config):  # the judge: given under its label (tests) or made like a model
            j = self.config.judge
            provs[JUDGE] = self.given.get(j.label) or make_provider(j.spec, api_key_for(j, self.api_keys))
        return provs

    def open(self, specs: list) -> list:
        """Open (or resume) the sweep in the store; the specs still to run."""
        self.total = len(specs)
        self.sweep_id = self.store.open_sweep(self.config.name, self.config.to_dict(), owner=self.owner)
        present, self.errors = already_run(self.store, self.sweep_id, specs, self.retry_errors)
        self.done = self.skipped = len(present)
        return [s for s in specs if s.key not in present]

    def failed_reason(self) -> str:
        """Why a finished run's trials failed, in one line: how many, each error kind with its count, the
        first message of the most common kind (it says what to do, e.g. the local model's fix), then
        --retry-errors. Empty when no trial failed."""
        if not self.errors:
            return ""
        kinds = self.store.error_kinds(self.sweep_id)
        if not kinds:
            return f"{self.errors} trial(s) failed: rerun with --retry-errors"
        counts = ", ".join(f"{kind} x{n}" for kind, n, _ in kinds)
        first = " ".join(str(kinds[0][2]).split())
        first = first if len(first) <= 400 else first[:397] + "..."
        return f"{self.errors} trial(s) failed ({counts}; {first}): rerun with --retry-errors"

    def stop(self, reason: str) -> None:
        """The sweep stops; the first reason is kept."""
        self.stopped = self.stopped or reason

    def counted(self, trial, call_keys) -> None:
        """Store one finished trial and count it."""
        self.store.put_trial(self.sweep_id, trial.row(), call_keys)
        self.done += 1
        self.ran += 1
        self.errors += trial.error is not None

    # progress -----------------------------------------------------------------------------------
    def report(self, force: bool = False) -> None:
        """Progress, at most every 0.1 s unless forced."""
        now = time.perf_counter()
        if self.progress is None or (not force and now - self.last < 0.1):
            return
        self.last = now
        self.progress(self.snapshot(now - self.t0))

    def snapshot(self, elapsed: float) -> Progress:
        raise NotImplementedError

    # the run ------------------------------------------------------------------------------------
    def prepare(self) -> list:
        raise NotImplementedError

    async def execute(self, todo: list) -> None:
        raise NotImplementedError

    def outcome(self) -> tuple[str, str]:
        raise NotImplementedError

    def summary(self, status: str, reason: str) -> SweepSummary:
        raise NotImplementedError

    async def go(self) -> SweepSummary:
        todo = self.prepare()
        status, reason = "failed", "interrupted"
        try:
            await self.execute(todo)
            status, reason = self.outcome()
        except (KeyboardInterrupt, asyncio.CancelledError) as exc:
            status, reason = self.INTERRUPTED or ("failed", f"{exc.__class__.__name__}: {exc}")
            raise
        except BaseException as exc:
            reason = f"{exc.__class__.__name__}: {exc}"
            raise
        finally:
            self.store.finish_sweep(self.sweep_id, status, reason)
            self.report(force=True)
            for p in self.provs.values():
                close = getattr(p, "aclose", None)
                if close is not None:
                    await close()
        return self.summary(status, reason)


class LiveRun(SweepRun):
    """A live sweep. Per model, `workers_for(concurrency)` workers take trials in plan order; each trial is
    built, run through the model's Caller, scored and written as it finishes."""

    def __init__(
        self, config, store, progress, cancel, api_keys, retry_errors, given, owner=None, specs=None
    ):
        super().__init__(config, store, progress, cancel, api_keys, retry_errors, given, owner, specs)
        self.early = False  # fail-fast stopped it
        self.first: list = []  # (error_kind, error) of the first trials run, for fail-fast
        self.callers: dict[str, Caller] = {}

    # progress -----------------------------------------------------------------------------------
    @property
    def requests(self) -> int:
        return sum(c.requests for c in self.callers.values())

    def snapshot(self, elapsed: float) -> Progress:
        budget = self.budget
        note = "; ".join(line for c in self.callers.values() for line in (c.waiting, c.running()) if line)
        return Progress(
            self.done,
            self.total,
            self.errors,
            budget.spent,
            budget.sent / elapsed if elapsed > 0 else 0.0,
            budget.cached,
            budget.sent,
            elapsed,
            self.requests,
            note,
        )

    # stopping -----------------------------------------------------------------------------------
    def stop(self, reason: str) -> None:
        """The sweep stops: the first reason is kept, and no caller starts another request (a spare
        worker already past its semaphore would otherwise send one more)."""
        super().stop(reason)
        for c in self.callers.values():
            c.halted = self.stopped

    def fail_fast(self, trial) -> None:
        n = self.config.fail_fast
        if not n or len(self.first) >= n:
            return
        self.first.append((trial.error_kind if trial.error else None, trial.error))
        kinds = {k for k, _ in self.first}
        if len(self.first) == n and len(kinds) == 1 and next(iter(kinds)) in FATAL_KINDS:
            self.early = True
            self.stop(
                f"stopped early: the first {n} trials all failed ({self.first[0][0]}): {self.first[0][1]}"
            )

    # the run ------------------------------------------------------------------------------------
    def prepare(self) -> list:
        """Plan (unless given), make the providers, open the sweep; the trials still to run, in order."""
        config, store = self.config, self.store
        tasks = config.load_tasks()
        pool_tasks = config.all_tasks().tasks  # the whole file is the distractor pool, not only n_tasks
        specs = self.specs if self.specs is not None else plan(config, tasks)
        self.provs = self.providers()
        todo = self.open(specs)
        self.docs = Documents(config.encoding, pool_tasks)
        if getattr(config, "design", None):  # run/multiq.py: the trials sharing prompts run as one group
            from components.run.multiq import groups

            todo = groups(config, tasks, specs, todo)
        elif todo:
            if config.documents:  # a LITM cell takes a task's passages from the first: counted in one batch
                precount(tasks, config.encoding)
            # a token cell counts only the passages its document takes (sweepdocs._counts_until): about 8
            # of NQ-open's 30 at 1,000 tokens, where counting all of them was a tenth of the sweep's time
            todo = ordered(todo, config.run_order, lambda s: first_prompt_text(s, self.docs))
        self.budget = Budget(config.max_calls, config.max_usd)
        self.callers = {
            m.label: Caller(
                self.provs[m.label],
                store,
                concurrency=config.concurrency,
                rpm=m.requests_per_minute,
                budget=self.budget,
                cancel=self.cancel,
                max_retry_after=config.max_retry_after,
            )
            for m in config.models
        }
        if judges(config):  # the judge's own Caller: cached, limited and budgeted like the models'
            self.callers[JUDGE] = Caller(
                self.provs[JUDGE],
                store,
                concurrency=config.concurrency,
                rpm=config.judge.requests_per_minute,
                budget=self.budget,
                cancel=self.cancel,
                max_retry_after=config.max_retry_after,
            )
        return todo

    async def execute(self, todo: list) -> None:
        """Every model's workers, the cancel watcher and the progress ticker, until the workers return."""
        config = self.config
        workers = []
        for m in config.models:
            queue = [s for s in todo if s.model.label == m.label][::-1]  # pop() takes them in run order
            workers += [
                asyncio.create_task(self.worker(queue))
                for _ in range(min(workers_for(config.concurrency, m.provider == "local"), len(queue)))
            ]
        watcher = asyncio.create_task(self.watch(workers)) if self.cancel is not None else None
        ticker = asyncio.create_task(self.tick()) if self.progress is not None else None
        results = await asyncio.gather(*workers, return_exceptions=True)
        for t in (watcher, ticker):
            if t is not None:
                t.cancel()
        for r in results:
            if isinstance(r, Exception):
                raise r

    def summary(self, status: str, reason: str) -> SweepSummary:
        b = self.budget
        return SweepSummary(
            self.sweep_id,
            self.config.name,
            status,
            reason,
            self.total,
            self.done,
            self.ran,
            self.skipped,
            self.errors,
            b.sent,
            b.cached,
            b.spent,
            time.perf_counter() - self.t0,
            self.requests,
            self.early,
        )

    def outcome(self) -> tuple[str, str]:
        """(status, reason) of a run whose workers have all returned."""
        if self.early:
            return "failed", self.stopped
        if self.stopped:
            return "cancelled", "cancelled by the user" if self.stopped == "cancelled" else self.stopped
        return "done", self.failed_reason()

    # trials -------------------------------------------------------------------------------------
    async def one(self, spec) -> None:
        """Build, run, score and write one trial (or a multi-question group's trials: run/multiq.py)."""
        if getattr(spec, "multi", False):
            from components.run.multiq import run_group

            for trial, keys in await run_group(spec, self.callers[spec.model.label], self.config):
                self.write(trial, keys)
            return
        try:
            built = self.docs.get(spec)
        except ValueError as exc:
            built, ran = None, Ran(Trial(error=f"document: {exc}", error_kind="document"))
        config = self.config
        if built is not None and config.measure in GENERATES:
            ran = await execute(
                built.document,
                spec.task.question,
                spec.task.answers,
                spec.strategy,
                spec.params,
                self.callers[spec.model.label],
                lambda p, m=spec.model, i=spec.sample: config.settings(m, p.max_tokens, i),
                answer_mode=spec.task.meta.get("answer_mode", "any"),
                gold_sentences=spec.task.gold_sentences,
                task_metric=spec.task.metric,
            )
        elif built is not None:
            ran = Ran(
                Trial(
                    gold_pages=list(built.document.gold),
                    metric=get_strategy(spec.strategy).metric_for(spec.task.metric),
                )
            )
        if built is not None and config.measure in SCORES and ran.trial.error is None:
            ran.call_keys += await score_trial(
                ran.trial,
                built.document,
                spec.task.question,
                spec.task.answers,
                spec.strategy,
                spec.params,
                self.callers[spec.model.label],
            )
        if built is not None and config.measure in ATTENDS:
            ran.call_keys += await attend_trial(
                ran.trial,
                built.document,
                spec.task.question,
                spec.strategy,
                spec.params,
                self.callers[spec.model.label],
            )
        trial = ran.trial
        label_trial(trial, spec, built)
        if (
            JUDGE in self.callers
            and built is not None
            and trial.error is None
            and trial.raw_answer is not None
        ):
            try:
                ran.call_keys.append(await judge_trial(trial, self.callers[JUDGE], config))
            except (
                ProviderError
            ) as exc:  # the judge failed: the trial is an error (--retry-errors asks again)
                trial.error, trial.error_kind = f"judge: {str(exc) or exc.__class__.__name__}", exc.kind
        self.write(trial, ran.call_keys)

    def write(self, trial, call_keys) -> None:
        """Store one finished trial and count it."""
        self.counted(trial, call_keys)
        self.fail_fast(trial)
        self.report()

    async def worker(self, queue: list) -> None:
        while queue and not self.stopped:
            if self.cancel is not None and self.cancel.is_set():
                self.stop("cancelled")
                return
            try:
                await self.overlapped(queue.pop(), queue)
            except BudgetExceeded as exc:
                self.stop(str(exc))
            except Cancelled:
                self.stop("cancelled")

    async def overlapped(self, spec, queue: list) -> None:
        """one(spec), with the document of the trial this worker takes next built while spec's call is
        on its way (Documents keeps it): when the answer comes, the next call goes out without building
        first. The same documents and prompts, in the same order; only the wait for them moves."""
        running = asyncio.ensure_future(self.one(spec))
        try:
            ahead = queue[-1] if queue else None
            if ahead is not None and not getattr(ahead, "multi", False):
                for _ in range(PREFETCH_YIELDS):  # let spec's call reach the network first
                    if running.done():
                        break
                    await asyncio.sleep(0)
                if not running.done():
                    try:
                        self.docs.get(ahead)
                    except ValueError:  # one(ahead) builds it again and stores the trial's error
                        pass
            await running
        finally:
            if not running.done():  # the worker was cancelled: its trial goes with it
                running.cancel()

    async def tick(self) -> None:
        """The progress line moves (and says why) while calls wait."""
        while True:
            await asyncio.sleep(1.0)
            self.report()

    async def watch(self, workers: list[asyncio.Task]) -> None:
        while self.cancel is not None and not self.cancel.is_set():
            await asyncio.sleep(0.05)
        self.stop("cancelled")
        for w in workers:
            w.cancel()  # in-flight calls are dropped; their trials are simply not written


def run_one(
    doc,
    question: str,
    answers,
    strategy: str,
    params: dict | None,
    spec: ModelSpec,
    store=None,
    api_key: str | None = None,
    settings: Settings | None = None,
    provider=None,
    on_call=None,
) -> Ran:
    """One live trial (the Playground). Cached in `store` like every sweep call. `settings` replaces the
    per-prompt defaults (max_tokens from each prompt, temperature 0, seed 0). `on_call(prompt, None)` is
    called before each call and `on_call(prompt, completion)` after it: progress for the UI."""

    async def go() -> Ran:
        prov = provider or make_provider(spec, api_key)
        caller = Caller(prov, store, concurrency=4)
        try:
            ran = await execute(
                doc,
                question,
                answers,
                strategy,
                dict(params or {}),
                caller,
                lambda p: settings or Settings(max_tokens=p.max_tokens),
                on_call=on_call,
            )
            ran.trial.model, ran.trial.params = spec.label, params_json(dict(params or {}))
            return ran
        finally:
            if provider is None and hasattr(prov, "aclose"):
                await prov.aclose()

    return asyncio.run(go())
