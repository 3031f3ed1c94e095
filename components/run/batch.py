"""Batch mode: a sweep through the providers' batch interfaces (OpenAI Batch API, Anthropic Message
Batches): half the price, no rate limits, results within 24 hours.

How a batch sweep runs (`run_batch_sweep`, same arguments and summary as runner.run_sweep):
1. every trial not yet in the store runs against the cache only (CacheCaller): a call already stored
   answers; the first call that is not raises NeedsCall, and its request (plus every first-stage
   prompt of the trial, built up front) is WANTED. A trial whose calls are all stored is written.
2. the wanted requests not already in an open batch of this store are submitted: built by the
   provider's own `request()` (the same body a live call sends), custom_id = the live call's cache
   key, split by the provider's limits. Each batch is written to the store (state 'submitting', with
   its requests) BEFORE the provider is asked, then gets its id: a killed process finds it again.
   Writing the row claims its requests: a request another open batch holds (another process's, on the
   same store) is left out in the same transaction, and waited for instead.
3. open batches holding wanted calls are polled every `poll_interval` seconds (progress shows their
   own counts); when one has ended, each result is checked like a live answer and stored as a normal
   cached call; a failed request, a result line that cannot be used, and a request the results do not
   answer at all are errors (the trial is written with that error: kind `batch` or `bad_response`),
   and step 1 runs again: the second stage of ICR, R&R and chunked strategies is wanted now that the
   first has come back.
The loop ends when every trial is written (or the budget, a cancel, or errors leave nothing to send).
No request is submitted twice in one run, whatever its batch answered; a rerun finds every call cached
and sends nothing; only `--retry-errors` sends the requests that ended in error again.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

from components.core.completion import Completion
from components.providers.base import (
    BadResponse,
    PromptTooLong,
    ProviderError,
    Settings,
    Transient,
    cache_key,
)
from components.providers.batch_interfaces import batch_api
from components.providers.batches import BatchRequestError, split
from components.providers.guard import check_fits, count_message_tokens
from components.providers.pricing import cost_usd
from components.run.caller import NeedsCall, stored_completion
from components.run.gcpace import paced
from components.run.plan import Documents, plan, precount
from components.run.runner import Progress, SweepRun, SweepSummary, label_trial, run_sweep
from components.run.schema import Trial
from components.run.trial import Ran, execute
from components.strategies import get_strategy

log = logging.getLogger(__name__)
POLL_INTERVAL = 30.0  # seconds between polls of a provider batch (the CLI's --poll-interval)
PART_BYTES = 64 * 1024 * 1024  # wanted prompt text that is submitted at once, mid-pass (bounds memory)
LOST_AFTER = 120.0  # a 'submitting' batch row this old, with no provider id, was lost by a killed process


def run_sweep_any(config, store, **kw) -> SweepSummary:
    """runner.run_sweep for mode = "live", run_batch_sweep for mode = "batch"."""
    if getattr(config, "mode", "live") == "batch":
        return run_batch_sweep(config, store, **kw)
    kw.pop("poll_interval", None)
    kw.pop("cancel_batches", None)
    return run_sweep(config, store, **kw)


def request_error(kind: str, message: str) -> ProviderError:
    """The error a trial gets for a request of a batch: the provider's own error, or a result that could
    not be used (bad_response: never cached, `--retry-errors` sends it again)."""
    return BadResponse(message) if kind == "bad_response" else BatchRequestError(message)


class CacheCaller:
    """A Caller that never sends: a stored call answers (cached unless its batch came back in this
    run); a call not stored is WANTED and the trial stops with NeedsCall; a call whose batch request
    failed raises its error (the trial's error). Calls are priced at batch prices (`batch = True`)."""

    batch = True

    def __init__(self, provider, store, failed: dict[str, tuple[str, str]], fresh: set[str]):
        self.provider = provider
        self.spec = provider.spec
        self.store = store
        self.failed = failed  # cache key -> (kind, error): the batch request failed
        self.fresh = fresh
        self.wanted: dict[str, tuple[list[dict], Settings]] = {}
        self.wanted_bytes = 0  # about the size of the wanted requests (their text), to submit in parts

    def _add(self, key: str, messages: list[dict], settings: Settings) -> None:
        self.wanted[key] = (messages, settings)
        self.wanted_bytes += sum(len(str(m.get("content", ""))) for m in messages)

    def clear(self) -> None:
        self.wanted.clear()
        self.wanted_bytes = 0

    def want(self, messages: list[dict], settings: Settings) -> None:
        """Ask for a call ahead of the trial reaching it (a strategy's first-stage prompts)."""
        key = cache_key(self.spec, messages, settings)
        if key in self.wanted or key in self.failed or self.store.get_call(key) is not None:
            return
        try:
            check_fits(self.spec, messages, settings)
        except PromptTooLong:
            return  # the trial records it when it reaches this call
        self._add(key, messages, settings)

    async def ask(
        self, messages: list[dict], settings: Settings, cuts: tuple[int, ...] = ()
    ) -> tuple[Completion, str]:
        """The stored answer of a call, else NeedsCall (its batch request is wanted). `cuts` (prompt-cache
        cuts, Caller.ask's) do not apply to a batch request: they change the bill, not the answer."""
        key = cache_key(self.spec, messages, settings)
        row = self.store.get_call(key)
        if row is not None:
            return stored_completion(row, cached=key not in self.fresh), key
        if key in self.failed:
            raise request_error(*self.failed[key])
        check_fits(self.spec, messages, settings)  # too long: the trial's error, never submitted
        self._add(key, messages, settings)
        raise NeedsCall(key)


def run_batch_sweep(
    config,
    store,
    *,
    progress: Callable[[Progress], None] | None = None,
    cancel: threading.Event | None = None,
    api_keys: dict | None = None,
    retry_errors: bool = False,
    providers: dict | None = None,
    poll_interval: float = POLL_INTERVAL,
    cancel_batches: bool = False,
    owner: str | None = None,
    specs: list | None = None,
) -> SweepSummary:
    """Run (or resume) a sweep in batch mode; see the module docstring. `cancel` (set by the user)
    cancels this sweep's open batches at the provider, stores what they answered and stops;
    cancel_batches=True does only that (no new batch). Ctrl-C (KeyboardInterrupt) leaves the batches
    running at the provider: the next run resumes polling them. specs: the plan, when already made."""
    run = BatchRun(
        config,
        store,
        progress,
        cancel or threading.Event(),
        api_keys,
        retry_errors,
        providers or {},
        poll_interval,
        owner,
        specs,
    )
    if cancel_batches:
        run.cancel.set()
    with paced():  # as live sweeps: fewer garbage collections while trials are built and stored
        return asyncio.run(run.go())


@dataclass
class _Collected:
    """What a batch's results held so far (BatchRun.collect): the requests answered, stored, failed and
    the lines that could not be used, with the first reason."""

    seen: set[str] = field(default_factory=set)
    ok: int = 0
    bad: int = 0
    unread: int = 0
    first: str = ""


class BatchRun(SweepRun):
    """A batch sweep (the module docstring): passes over the trials waiting for calls, each pass
    submitting what they want and waiting for the batches that hold it."""

    INTERRUPTED = (
        "cancelled",
        "interrupted: its batches keep running at the provider; run the sweep again to collect them",
    )

    def __init__(
        self,
        config,
        store,
        progress,
        cancel,
        api_keys,
        retry_errors,
        given,
        poll_interval,
        owner=None,
        specs=None,
    ):
        super().__init__(config, store, progress, cancel, api_keys, retry_errors, given, owner, specs)
        self.poll_interval = max(0.01, float(poll_interval))
        self.sent = self.cached = 0
        self.spent = 0.0  # dollars of results stored in this run, at batch prices
        self.committed: dict[str, float] = {}  # worst-case dollars of requests submitted, not yet back
        self.line = ""  # the batches' own counts, for progress
        self.cancelled_rows: set[int] = set()
        self.submitted: set[str] = set()  # keys submitted in this run: never submitted again in it
        self.warnings: list[str] = []  # one line each: a batch whose results could not (all) be used
        self.failed_calls: dict[
            str, tuple[str, str]
        ] = {}  # cache key -> (kind, error) of a request that failed

    def snapshot(self, elapsed: float) -> Progress:
        return Progress(
            self.done,
            self.total,
            self.errors,
            self.spent,
            0.0,
            self.cached,
            self.sent,
            elapsed,
            batch=self.line,
        )

    def _halted(self) -> bool:
        return self.cancel.is_set() or bool(self.stopped)

    # the run ------------------------------------------------------------------------------------
    def prepare(self) -> list:
        """Plan (unless given), make the providers and their batch interfaces (a ProviderError before
        anything is written), open the sweep, the cache-only callers; the trials still to run."""
        config, store = self.config, self.store
        tasks = config.load_tasks()
        self.docs = Documents(config.encoding, config.all_tasks().tasks)
        specs = self.specs if self.specs is not None else plan(config, tasks)
        self.provs = self.providers()
        self.apis = {label: batch_api(p) for label, p in self.provs.items()}
        pending = self.open(specs)
        if pending:
            precount(tasks, config.encoding)
        self.failed_calls = {} if self.retry_errors else store.batch_errors(self.sweep_id)
        self.fresh: set[str] = set()
        self.callers = {
            label: CacheCaller(p, store, self.failed_calls, self.fresh) for label, p in self.provs.items()
        }
        return pending

    async def execute(self, todo: list) -> None:
        """Batches left open by an earlier run first, then passes until no trial waits (or none can)."""
        await self.recover()
        waits: list[tuple] = [(s, None) for s in todo]  # (trial, the call it waits for)
        while waits:
            failed_before = len(self.failed_calls)
            waits, held = await self.one_pass(waits)
            if not waits:
                break
            if not self._halted():
                held |= await self.submit(self.flying)
            if not await self.wait(held):
                if len(self.failed_calls) > failed_before and not self.cancel.is_set():
                    continue  # requests that ended in error here (refused, too large): write their trials
                if not self.cancel.is_set() and any(
                    k is not None and self.store.get_call(k) is not None for _, k in waits
                ):
                    continue  # answered meanwhile by another process's batch: the trials read it from the store
                if not self._halted():
                    self.stop("nothing left to send: " + self._why_stuck(len(waits)))
                break
            if self.cancel.is_set():
                break

    async def one_pass(self, waits: list[tuple]) -> tuple[list[tuple], set[str]]:
        """Attempt every waiting trial against the cache (a trial whose call is still out in a batch is
        left alone); a full batch is submitted at once, so memory stays bounded. (trials still waiting,
        the keys they wait for that are out in batches)."""
        for c in self.callers.values():
            c.clear()
        self.flying = {label: self._in_flight(c.spec) for label, c in self.callers.items()}
        still, held = [], set()
        for spec, key in waits:
            if (
                key is not None
                and key in self.flying[spec.model.label]
                and key not in self.failed_calls
                and self.store.get_call(key) is None
            ):
                still.append((spec, key))  # its call is still out in a batch: nothing to redo
                held.add(key)
                continue
            key = await self.attempt(spec, first=key is None)
            if key is not None:
                still.append((spec, key))
            if not self._halted() and self._full():
                held |= await self.submit(self.flying)
        return still, held

    def outcome(self) -> tuple[str, str]:
        if self.cancel.is_set():
            n = len(self.cancelled_rows)
            return "cancelled", (
                f"cancelled by the user: {n} batch(es) cancelled at the provider, their answers kept"
                if n
                else "cancelled by the user"
            )
        if self.stopped:
            return "cancelled", self.stopped
        return "done", self.failed_reason()

    def summary(self, status: str, reason: str) -> SweepSummary:
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
            self.sent,
            self.cached,
            self.spent,
            time.perf_counter() - self.t0,
            requests=self.sent,  # one batched request each
            warnings=tuple(self.warnings),
        )

    def _why_stuck(self, n: int) -> str:
        return f"{n} trial(s) wait for calls that were not submitted (budget or a refused batch)"

    # trials ---------------------------------------------------------------------------------------
    async def attempt(self, spec, first: bool = True) -> str | None:
        """Run one trial against the cache: None once it is written (done or failed), else the key of
        the call it waits for. On its first attempt every first-stage call is wanted at once."""
        config = self.config
        caller = self.callers[spec.model.label]

        def settings_for(p, m=spec.model):
            return config.settings(m, p.max_tokens)

        try:
            built = self.docs.get(spec)
        except ValueError as exc:
            built, ran = None, Ran(Trial(error=f"document: {exc}", error_kind="document"))
        if built is not None:
            try:
                prompts = (
                    get_strategy(spec.strategy).first_prompts(built.document, spec.task.question, spec.params)
                    if first
                    else []
                )
            except ValueError:  # bad parameters: execute records why
                prompts = []
            for p in prompts:
                caller.want(p.messages, settings_for(p))
            try:
                ran = await execute(
                    built.document,
                    spec.task.question,
                    spec.task.answers,
                    spec.strategy,
                    spec.params,
                    caller,
                    settings_for,
                    answer_mode=spec.task.meta.get("answer_mode", "any"),
                    gold_sentences=spec.task.gold_sentences,
                    task_metric=spec.task.metric,
                )
            except NeedsCall as exc:
                return str(exc.args[0])
        trial = ran.trial
        label_trial(trial, spec, built)
        self.counted(trial, ran.call_keys)
        self.cached += trial.cached_calls or 0
        self.report()
        return None

    # submitting -------------------------------------------------------------------------------------
    def _in_flight(self, spec) -> set[str]:
        rows = self.store.batch_rows(spec=spec)
        return set().union(*(self.store.batch_keys(r["id"]) for r in rows)) if rows else set()

    def _budget(self, label: str, new: list) -> list:
        """The requests that fit the budget (max_calls: requests sent in this run; max_usd: dollars of
        results back plus the worst case of those still out: the prompt's tokens and max_tokens out)."""
        c = self.config
        if c.max_calls is not None and self.sent + len(new) > c.max_calls:
            new = new[: max(0, c.max_calls - self.sent)]
            self.stop(f"budget: max_calls {c.max_calls} reached")
        if c.max_usd is None:
            return new
        spec = self.callers[label].spec
        fits = []
        for key, messages, settings in new:
            worst = (
                cost_usd(
                    spec.provider, spec.model, count_message_tokens(messages), settings.max_tokens, batch=True
                )
                or 0.0
            )
            if self.spent + sum(self.committed.values()) + worst > c.max_usd:
                self.stop(f"budget: max_usd ${c.max_usd:g} reached (spent ${self.spent:.4f} at batch prices)")
                break
            self.committed[key] = worst
            fits.append((key, messages, settings))
        return fits

    def _full(self) -> bool:
        """Whether a model's wanted requests fill a batch (or PART_BYTES of text): submit them at once."""
        return any(
            len(c.wanted) >= self.apis[label].max_requests or c.wanted_bytes >= PART_BYTES
            for label, c in self.callers.items()
        )

    async def submit(self, flying: dict[str, set[str]]) -> set[str]:
        """Submit the wanted calls that no open batch holds (flying: model label -> keys in open
        batches, updated), then forget them; the keys now out in batches are returned."""
        out: set[str] = set()
        for label, caller in self.callers.items():
            if not caller.wanted:
                continue
            api = self.apis[label]
            new = []
            for k, (m, s) in caller.wanted.items():
                if k in flying[label]:
                    out.add(k)
                elif k in self.submitted:  # out once in this run and not answered: never sent twice
                    self.failed_calls[k] = (
                        "bad_response",
                        f"{caller.spec.label}: the request went out in a batch of "
                        "this run and came back without an answer",
                    )
                else:
                    new.append((k, m, s))
            caller.clear()
            new = self._budget(label, new)
            if not new:
                continue
            requests = [api.request(k, m, s) for k, m, s in new]
            sizes = [len(json.dumps(r, ensure_ascii=False).encode()) for r in requests]
            groups = split(sizes, api.max_requests, api.max_bytes)
            placed = {i for g in groups for i in g}
            for i, (k, _, _) in enumerate(new):
                if i not in placed:
                    self.failed_calls[k] = (
                        "batch",
                        f"{caller.spec.label}: the request is larger than one batch may be "
                        f"({api.max_bytes // (1024 * 1024)} MB)",
                    )
            for n, group in enumerate(groups, 1):
                # writing the row claims its requests; those another open batch holds are left out
                row, token = self.store.add_batch(
                    self.sweep_id,
                    caller.spec,
                    [(new[i][0], new[i][1], asdict(new[i][2])) for i in group],
                    skip_held=True,
                )
                kept = self.store.batch_keys(row) if row is not None else set()
                held = {new[i][0] for i in group} - kept
                flying[label] |= held
                out |= held  # out in another process's batch: waited for, not sent again
                for k in held:
                    self.committed.pop(k, None)
                group = [i for i in group if new[i][0] in kept]
                if not group:
                    continue
                self.line = (
                    f"{caller.spec.label}: submitting batch {n} of {len(groups)} ({len(group):,} requests)"
                )
                self.report(force=True)
                self.submitted |= kept
                try:
                    batch_id, file_id = await api.submit([requests[i] for i in group], token)
                except ProviderError as exc:
                    self._fail_batch(row, str(exc))
                    continue
                self.store.batch_submitted(row, batch_id, file_id)
                flying[label] |= kept
                out |= kept
                self.sent += len(group)
                log.info("%s: batch %s submitted (%d requests)", caller.spec.label, batch_id, len(group))
        return out

    def _fail_batch(self, row: int, why: str, kind: str = "batch") -> None:
        """A batch refused or failed as a whole: each of its requests not answered has that error."""
        self.store.update_batch(row, state="failed", reason=why[:500])
        for key in self.store.batch_keys(row):
            self.store.batch_error(row, key, why, kind)
            if self.store.get_call(key) is None:
                self.failed_calls[key] = (kind, why)
            self.committed.pop(key, None)

    # resuming, polling, collecting -------------------------------------------------------------------
    def _label_of(self, row: dict) -> str | None:
        for label, c in self.callers.items():
            s = c.spec
            if (s.provider, s.model, s.base_url or "") == (
                row["provider"],
                row["model"],
                row["base_url"] or "",
            ):
                return label
        return None

    def _open_rows(self) -> list[dict]:
        rows = []
        for c in self.callers.values():
            rows += self.store.batch_rows(spec=c.spec)
        return rows

    async def recover(self) -> int:
        """Batch rows a killed process left in 'submitting': found at the provider by what only our
        submission carries (OpenAI: the row's token in the batch's metadata; Anthropic: an unknown batch
        created just after the row whose results answer exactly the row's requests; while such a batch
        is still running the row waits, it is never taken, nor cancelled, on its size alone), else
        (after LOST_AFTER seconds) marked failed so that their requests go again (how many is returned)."""
        lost = 0
        for row in self._open_rows():
            if row["state"] != "submitting" or row["batch_id"]:
                continue
            label = self._label_of(row)
            known = {r["batch_id"] for r in self.store.batch_rows(open_only=False) if r["batch_id"]}
            found, pending = await self.apis[label].find(
                row["token"], row["created"] or 0.0, self.store.batch_keys(row["id"]), known
            )
            if found:
                self.store.batch_submitted(row["id"], found)
            elif pending:
                self.line = (
                    "a batch lost at submission may be the one still running at the provider: "
                    "waiting for it to end to check its requests"
                )
            elif time.time() - (row["updated"] or 0) > LOST_AFTER:
                self.store.update_batch(
                    row["id"],
                    state="failed",
                    reason="lost: the process stopped before the provider confirmed it",
                )
                lost += 1
        return lost

    async def wait(self, held: set[str]) -> bool:
        """Poll the open batches holding wanted (or held: still awaited) calls until one has ended, and
        store its results.
        False when no open batch holds a wanted call (nothing to wait for). Once cancel is set: cancel
        this sweep's open batches at the provider and collect them all as they end."""
        wanted = set(held).union(*(c.wanted for c in self.callers.values()))
        keys: dict[int, set[str]] = {}
        while True:
            if await self.recover():
                return True  # a lost submission's requests are wanted again: the trials run again
            rows = []
            cancelling = self.cancel.is_set()
            for row in self._open_rows():
                if cancelling and not row["batch_id"]:
                    continue  # not known to be ours at the provider: nothing of ours to cancel
                if row["id"] not in keys:
                    keys[row["id"]] = self.store.batch_keys(row["id"])
                if (row["sweep_id"] == self.sweep_id) if cancelling else bool(keys[row["id"]] & wanted):
                    rows.append(row)
            if not rows:
                return False
            ended = False
            lines = []
            for row in rows:
                if not row["batch_id"]:  # another process is submitting it right now
                    lines.append("a batch is being submitted")
                    continue
                api = self.apis[self._label_of(row)]
                if cancelling and row["id"] not in self.cancelled_rows:
                    self.cancelled_rows.add(row["id"])
                    try:
                        await api.cancel(row["batch_id"])
                    except ProviderError as exc:
                        log.warning("cancelling %s: %s", row["batch_id"], exc)
                try:
                    st = await api.status(row["batch_id"])
                except Transient as exc:
                    lines.append(f"{row['batch_id']}: {exc}")
                    continue
                except ProviderError as exc:
                    self._fail_batch(row["id"], f"batch {row['batch_id']}: {exc}")
                    ended = True
                    continue
                self.store.update_batch(
                    row["id"], status=st.status, succeeded=st.succeeded, errored=st.errored
                )
                lines.append(
                    f"batch {len(lines) + 1}/{len(rows)} {st.status}: {st.succeeded + st.errored:,}/"
                    f"{st.total:,} back, {st.errored:,} failed"
                )
                if st.ended:
                    await self.collect(row, st)
                    ended = True
            self.line = "; ".join(lines)
            self.report(force=True)
            if ended and not cancelling:
                return True  # run the trials again: their next stage may be wanted now
            await self._sleep()

    async def _sleep(self) -> None:
        end = time.monotonic() + self.poll_interval
        while time.monotonic() < end:
            if self.cancel.is_set() and not self.cancelled_rows:
                return  # cancel at once, not at the next poll
            await asyncio.sleep(min(0.05, max(0.0, end - time.monotonic())))

    async def collect(self, row: dict, st) -> None:
        """Store an ended batch's results: each answer checked and stored as a cached call, each failed or
        unusable one as its request's error. A request the results do not answer (its line unreadable,
        under an id this batch never sent, or missing) is an error too, unless the batch was cancelled.
        A batch none of whose results can be used is failed, with one line saying so."""
        label = self._label_of(row)
        api, spec = self.apis[label], self.callers[label].spec
        self.store.update_batch(row["id"], state="ended")
        keys = self.store.batch_keys(row["id"])
        name = f"{spec.label}: batch {row['batch_id']}"
        got = _Collected()
        try:
            async for r in api.results(row["batch_id"]):
                self._take(row["id"], r, keys, spec, name, got)
        except Transient:
            return  # still 'ended': the next poll downloads again
        except ProviderError as exc:
            self._fail_batch(row["id"], f"{name}: results: {exc}")
            return
        seen, ok, bad, unread, first = got.seen, got.ok, got.bad, got.unread, got.first
        if not seen and not unread and st.status == "failed":
            self._fail_batch(row["id"], f"{name} failed: {await api.batch_errors(row['batch_id'])}")
            return
        cancelled = st.status in ("cancelled", "cancelling", "canceling") or row["id"] in self.cancelled_rows
        missing = set() if cancelled else keys - seen
        if missing and not ok and not bad:
            why = (
                f"{name}: none of its {len(keys):,} results could be used"
                + (f" ({first})" if first else " (the results hold no line for its requests)")
                + "; its trials are errors (bad_response): --retry-errors sends them again"
            )
            self.warnings.append(why)
            self._fail_batch(row["id"], why, "bad_response")
            return
        for key in missing:
            self._request_error(
                row["id"],
                key,
                "bad_response",
                f"{name}: its results hold no usable line for this request"
                + (f" ({unread} line(s) could not be used; the first: {first})" if unread else ""),
            )
        unusable = len(missing) + sum(1 for k in seen if self.failed_calls.get(k, ("",))[0] == "bad_response")
        if unusable:
            self.warnings.append(
                f"{name}: {unusable:,} of its {len(keys):,} results could not be used"
                + (f" (the first: {first})" if first else "")
                + "; their trials are errors (bad_response): --retry-errors sends them again"
            )
        self.store.update_batch(
            row["id"], state="collected", status=st.status, succeeded=ok, errored=bad + len(missing)
        )
        log.info("%s collected (%d answered, %d failed)", name, ok, bad + len(missing))

    def _take(self, row_id: int, r, keys: set[str], spec, name: str, got: _Collected) -> None:
        """One result line of a batch: stored as a cached call, or as its request's error, or counted as
        unread (unreadable, another batch's id, or a second line for a request)."""
        if r.key not in keys or r.key in got.seen:
            got.unread += 1
            other = (
                f"{name}: a result for a request it was not sent ({r.key[:16]}...)"
                if r.key not in keys
                else ""
            )
            got.first = got.first or r.error or other
            return
        got.seen.add(r.key)
        self.committed.pop(r.key, None)
        if r.outcome == "succeeded" and r.completion is not None:
            if self.store.store_batch_result(row_id, r.key, spec, r.completion):
                self.fresh.add(r.key)
                c = r.completion
                self.spent += (
                    cost_usd(
                        spec.provider,
                        spec.model,
                        c.input_tokens,
                        c.output_tokens,
                        batch=True,
                        cached_input_tokens=c.cached_input_tokens,
                        cache_write_tokens=c.cache_write_tokens,
                    )
                    or 0.0
                )
            got.ok += 1
        elif r.outcome in ("errored", "expired", "bad"):
            kind = "bad_response" if r.outcome == "bad" else "batch"
            got.first = got.first or (r.error if kind == "bad_response" else "")
            self._request_error(row_id, r.key, kind, r.error)
            got.bad += 1
        # canceled: no error; the call is wanted again by the next run

    def _request_error(self, row: int, key: str, kind: str, error: str) -> None:
        self.store.batch_error(row, key, error, kind)
        self.failed_calls[key] = (kind, error)
        self.committed.pop(key, None)
