"""Asking a model for one prompt, the way every trial does: cache first, then limits, then the network.

- The cache key is providers.base.cache_key; a cached call sends no request, and two trials asking
  the same prompt at once share one request (in-flight calls are joined, never sent twice).
- A call is written to the store as soon as it returns, so a killed sweep loses only in-flight calls.
- Concurrency (a semaphore) and requests per minute are limited per model. A call goes through THE
  retry loop (providers/retry.py): a 429 or a transient failure is tried again, at most 1 + max_retries
  requests, after the server's Retry-After else a back-off. `max_retry_after` (default 60 s) is a ceiling
  on ALL the waiting of one call (a WaitBudget, providers/base.py); a Retry-After that does not fit in
  what is left is not waited for: the trial is recorded as rate_limited with the server's figure. While
  it waits, `waiting` says so (the progress line shows it).
- An answer with no text (empty or whitespace, from any provider: providers/answers.no_text) is a
  bad_response error, never a completion: not scored, not stored, so `--retry-errors` asks again.
- The store keeps a call's base URL without its secrets (providers/base.safe_base_url).
- The budget (calls sent, dollars spent) is checked before each request: BudgetExceeded stops cleanly.
- Across processes sharing a store, a call about to be sent is CLAIMED there first (store_batches):
  a second process asking the same call waits for the first one's answer instead of paying again.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from dataclasses import asdict, dataclass, replace
from typing import Protocol

from components.core.completion import Completion
from components.providers import retry
from components.providers.answers import no_text
from components.providers.attention import (
    Attention,
    NoAttention,
    attention_key,
    attention_settings,
    can_attend,
    refusal,
)
from components.providers.base import (
    DEFAULT_MAX_WAIT,
    BadResponse,
    ModelSpec,
    Settings,
    WaitBudget,
    cache_key,
    safe_base_url,
)
from components.providers.likelihood import Scored, score_key, score_settings
from components.providers.pricing import cost_usd
from components.run.store_batches import claims_line, owner_id

log = logging.getLogger(__name__)
MAX_RETRY_AFTER = (
    DEFAULT_MAX_WAIT  # seconds one call waits in all, retries included (config: max_retry_after)
)
CLAIM_POLL_S = 0.1  # how often a call claimed by another process is looked for in the store


class BudgetExceeded(Exception):
    """The sweep's budget (calls or dollars) is used up: no more requests."""


def local_clock(spec, store):
    """A LocalClock (components/run/speed.py) for a local model's Caller, else None."""
    if spec.provider != "local":
        return None
    from components.run.speed import LocalClock

    try:
        return LocalClock(spec.model, store)
    except Exception:  # a path or an unknown name: no estimate, no line
        return None


def prompt_tokens(messages: list[dict]) -> int:
    """The prompt's tokens as the estimate counts them (cl100k_base, as the prompt map does)."""
    from components.core.tokens import tokenizer

    return tokenizer().count("\n".join(str(m.get("content", "")) for m in messages))


class Cancelled(Exception):
    """The user cancelled: no more requests."""


class NeedsCall(Exception):
    """Batch mode (run/batch.py): the call is not in the store yet; the trial waits for its batch."""


class Asks(Protocol):
    """What a trial needs of a caller (run.trial.execute): a spec, and `ask` (a completion and its cache
    key). Caller is one; batch mode's CacheCaller (run/batch.py) another."""

    spec: ModelSpec

    async def ask(
        self, messages: list[dict], settings: Settings, cuts: tuple[int, ...] = ()
    ) -> tuple[Completion, str]: ...


@dataclass
class Budget:
    max_calls: int | None = None
    max_usd: float | None = None
    sent: int = 0  # requests started (including in-flight)
    spent: float = 0.0
    cached: int = 0
    stopped: str = ""  # why the budget stopped the sweep

    def reserve(self) -> None:
        if self.max_calls is not None and self.sent >= self.max_calls:
            self.stopped = f"budget: max_calls {self.max_calls} reached"
        elif self.max_usd is not None and self.spent >= self.max_usd:
            self.stopped = f"budget: max_usd ${self.max_usd:g} reached (spent ${self.spent:.4f})"
        if self.stopped:
            raise BudgetExceeded(self.stopped)
        self.sent += 1


class RateLimiter:
    """At most `rpm` request starts per minute, evenly spaced."""

    def __init__(self, rpm: float | None):
        self.interval = 60.0 / rpm if rpm else 0.0
        self.next = 0.0

    async def wait(self) -> None:
        if not self.interval:
            return
        now = time.monotonic()
        start = max(now, self.next)
        self.next = start + self.interval
        if start > now:
            await asyncio.sleep(start - now)


def stored_completion(row, cached: bool = True) -> Completion:
    """A call read back from the store, with the prompt-cache counts the provider reported when it was
    made (a store older than schema 5 has none: 0)."""
    keys = row.keys()
    return Completion(
        row["response"],
        row["input_tokens"] or 0,
        row["output_tokens"] or 0,
        row["latency_s"] or 0.0,
        row["model"],
        cached,
        row["finish_reason"] or "",
        (row["cached_input_tokens"] or 0) if "cached_input_tokens" in keys else 0,
        (row["cache_write_tokens"] or 0) if "cache_write_tokens" in keys else 0,
    )


class Caller:
    """One model's way to the network, shared by every trial of a sweep (or one Playground run)."""

    def __init__(
        self,
        provider,
        store=None,
        *,
        concurrency: int = 8,
        rpm: float | None = None,
        budget: Budget | None = None,
        cancel: threading.Event | None = None,
        max_retry_after: float | None = None,
        claims: bool = True,
    ):
        self.provider = provider
        self.spec = provider.spec
        self.store = store
        self.sem = asyncio.Semaphore(concurrency)
        self.limiter = RateLimiter(rpm)
        self.budget = budget or Budget()
        self.cancel = cancel
        self.inflight: dict[str, asyncio.Future] = {}
        self.max_retry_after = MAX_RETRY_AFTER if max_retry_after is None else float(max_retry_after)
        self.attempts = 0  # calls started (their retries send more HTTP requests: see requests)
        self.waiting = ""  # why the calls are paused right now ("" when they are not)
        self.halted = ""  # why the sweep stopped (set by the runner): no request starts after it
        self.claims = claims and store is not None and hasattr(store, "claim_call")
        self.owner = owner_id()
        self.claimed: set[str] = set()  # calls waited for because another process claimed them
        # Anthropic prompt caching ([models] cache_prefix): the prompt's cache cuts go to the provider
        self.takes_cache_cuts = bool(getattr(self.spec, "cache_prefix", None)) and bool(
            getattr(provider, "takes_cache_cuts", False)
        )
        self.clock = local_clock(self.spec, store)  # a local model: its calls' time against the estimate
        clean = safe_base_url(self.spec.base_url)[0]  # what the store keeps: no key inside the URL
        self.stored_spec = self.spec if clean == self.spec.base_url else replace(self.spec, base_url=clean)

    def _note(self, why: str) -> None:
        self.waiting = why

    def running(self) -> str:
        """What a local call in hand says while it runs ('local call: Elapsed 12 s of about 40 s'), else ''."""
        if self.clock is None or not self.clock.running:
            return ""
        from components.providers.localworker import loading

        return self.clock.line(loading=loading(self.spec))

    @property
    def requests(self) -> int:
        """HTTP requests really sent: the provider's own count (retries included) when it keeps one."""
        n = getattr(self.provider, "http_requests", None)
        return n if isinstance(n, int) else self.attempts

    async def ask(
        self, messages: list[dict], settings: Settings, cuts: tuple[int, ...] = ()
    ) -> tuple[Completion, str]:
        """(completion, cache key). completion.cached says whether it came from the store. `cuts`: where the
        provider's prompt cache may cut the last message (Prompt.cache_cuts); they change the bill only,
        so they are not part of the key."""

        async def send() -> Completion:
            if self.takes_cache_cuts and cuts:
                completion = await self.provider.complete(messages, settings, cuts=cuts)
            else:
                completion = await self.provider.complete(messages, settings)
            try:
                no_text(completion.text, completion.finish_reason)
            except BadResponse as exc:
                raise BadResponse(f"{self.spec.label}: {exc}") from None
            return completion

        return await self._call(cache_key(self.spec, messages, settings), messages, asdict(settings), send)

    async def score(self, messages: list[dict], answer: str) -> tuple[Scored, str]:
        """(the answer's likelihood after the prompt, cache key): a scoring call (providers/likelihood.py),
        cached, claimed, limited and budgeted like a completion."""

        async def send() -> Completion:
            return (await self.provider.score(messages, answer)).completion()

        completion, key = await self._call(
            score_key(self.spec, messages, answer), messages, score_settings(answer), send
        )
        return Scored.from_completion(completion), key

    async def attention(self, messages: list[dict], regions: list) -> tuple[Attention, str]:
        """(where the last prompt token looks, by page; cache key): an attention call (providers/attention.py),
        cached and budgeted like a completion; NoAttention (one line) for a provider that cannot."""
        if not can_attend(self.provider):
            raise NoAttention(refusal(self.spec.provider))

        async def send() -> Completion:
            return (await self.provider.attention(messages, regions)).completion()

        completion, key = await self._call(
            attention_key(self.spec, messages, regions), messages, attention_settings(regions), send
        )
        return Attention.from_completion(completion), key

    async def _call(self, key: str, messages: list[dict], settings: dict, request) -> tuple[Completion, str]:
        if self.store is not None:
            row = self.store.get_call(key)
            if row is not None:
                self.budget.cached += 1
                return stored_completion(row), key
        if key in self.inflight:
            done = await asyncio.shield(self.inflight[key])
            self.budget.cached += 1
            return Completion(**{**asdict(done), "cached": True}), key
        future = asyncio.get_running_loop().create_future()
        self.inflight[key] = future
        if self.clock is not None:
            self.clock.started(key, prompt_tokens(messages))
        answered: Completion | None = None  # what the clock is told when the call ends
        try:
            completion = answered = await self._claimed_send(key, request)
        except asyncio.CancelledError:
            future.cancel()
            raise
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: no "never retrieved" warning when nobody else waits
            raise
        finally:
            self.inflight.pop(key, None)
            if self.clock is not None:
                self.clock.ended(key, answered)
        future.set_result(completion)
        if self.store is not None and not completion.cached:
            self.store.put_call(
                key,
                self.stored_spec,
                messages,
                settings,
                completion,
                release=self.owner if self.claims else None,
            )
        return completion, key

    async def _claimed_send(self, key: str, request) -> Completion:
        """Send, unless another process (or Caller) has claimed this call in the store: then wait for
        its answer to appear there (a cached completion). A claim held by a process that is gone, or
        past its lease, is taken over."""
        if self.store is None or not self.claims:
            return await self._send(request)
        try:
            while True:
                holder = self.store.claim_call(key, self.owner)
                row = self.store.get_call(key)  # answered just before we claimed it
                if row is not None:
                    if holder is None:
                        self.store.release_call(key, self.owner)
                    self.budget.cached += 1
                    return stored_completion(row)
                if holder is None:
                    break
                if key not in self.claimed:  # the progress line names who holds the calls waited for
                    self.claimed.add(key)
                    self.waiting = claims_line(self.store.held_claims(sorted(self.claimed)))
                await asyncio.sleep(CLAIM_POLL_S)
        finally:
            if key in self.claimed:
                self.claimed.discard(key)
                self.waiting = (
                    claims_line(self.store.held_claims(sorted(self.claimed))) if self.claimed else ""
                )
        try:
            return await self._send(request)
        except BaseException:
            self.store.release_call(key, self.owner)
            raise

    async def _send(self, request) -> Completion:
        """`request` (one provider call) through THE retry loop (providers/retry.py): the call is counted and
        budgeted once; each try first checks the cancel and waits its turn of the rpm limit (a request
        per turn); every wait of the call comes out of one WaitBudget (max_retry_after)."""
        first = True

        async def attempt() -> Completion:
            nonlocal first
            if self.cancel is not None and self.cancel.is_set():
                raise Cancelled("cancelled")
            if self.halted:
                raise Cancelled(self.halted)
            if first:
                self.budget.reserve()
                self.attempts += 1
                first = False
            await self.limiter.wait()
            return await request()

        async with self.sem:
            budget = WaitBudget(self.max_retry_after, note=self._note)
            completion = await retry.call(attempt, self.spec, budget)
        cost = cost_usd(
            self.spec.provider,
            self.spec.model,
            completion.input_tokens,
            completion.output_tokens,
            cached_input_tokens=completion.cached_input_tokens,
            cache_write_tokens=completion.cache_write_tokens,
        )
        self.budget.spent += cost or 0.0
        return completion
