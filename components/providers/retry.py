"""THE retry loop of a model call: one loop, one back-off law and one attempt count for every provider.

A provider sends ONE request each time its `complete` (or `score`) is awaited, and says what went wrong
with the errors of providers.base: `RateLimited` (a 429, with the server's Retry-After where it gave one)
and `Transient` (a server error, 408, 409, a timeout, a dropped or refused connection) may succeed when
tried again; every other error ends the call. A new provider plugs in by raising those two, nothing more:
run/caller.py (`Caller._send`, the one caller of every provider) runs each call through `call` here.

- Attempts: a call sends at most `attempts(spec)` = 1 + the model's `max_retries` requests (RETRIES when
  the model sets none: 4 requests in all). The SDKs' own retries are off (max_retries=0 on their clients).
- Back-off: the server's Retry-After when it gives one; else 0.5 s doubling, at most 8 s, less up to 25 %
  (the openai and anthropic SDKs' own law: BACKOFF).
- Waiting: every wait of a call comes out of its WaitBudget (providers.base: `max_retry_after`, 60 s by
  default). A wait that does not fit ends the call at once: after a Retry-After with a final RateLimited
  that names the server's figure (`WaitBudget.refuse`), after a back-off with the error itself.

The loop is tenacity's (AsyncRetrying): `stop` sees the wait the next try would need, so the budget is
judged before any sleep.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from typing import TypeVar

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception

from components.providers.base import ModelSpec, ProviderError, RateLimited, Transient, WaitBudget

T = TypeVar("T")
RETRIES = 3  # retries of one call when the model sets no max_retries: 4 requests in all
BACKOFF = (0.5, 8.0)  # without a Retry-After: 0.5 s doubling, at most 8 s, less up to 25 %


def attempts(spec: ModelSpec) -> int:
    """The most requests one call to this model sends: 1 + its max_retries (RETRIES when unset)."""
    retries = RETRIES if spec.max_retries is None else max(0, int(spec.max_retries))
    return 1 + retries


def backoff(retry: int) -> float:
    """The wait before retry number `retry` (0-based) when the server names none."""
    return min(BACKOFF[0] * 2.0**retry, BACKOFF[1]) * (1 - 0.25 * random.random())


def retryable(exc: BaseException) -> bool:
    """A 429 or a transient failure, unless it already ended for good (a Retry-After past the budget)."""
    return isinstance(exc, RateLimited | Transient) and not getattr(exc, "final", False)


def _error(state: RetryCallState) -> ProviderError:
    exc = state.outcome.exception() if state.outcome is not None else None
    assert isinstance(exc, ProviderError)
    return exc


def _asked(state: RetryCallState) -> float | None:
    """The wait the server asked for after this try (its Retry-After), or None."""
    return getattr(_error(state), "retry_after", None)


async def call(send: Callable[[], Awaitable[T]], spec: ModelSpec, budget: WaitBudget | None = None) -> T:
    """`await send()` (one request), tried again after a RateLimited or a Transient: at most
    attempts(spec) requests, waiting the server's Retry-After else `backoff`, every wait out of `budget`
    (a fresh WaitBudget of its default when None)."""
    budget = budget or WaitBudget()
    most = attempts(spec)

    def wait(state: RetryCallState) -> float:
        asked = _asked(state)
        return asked if asked is not None else backoff(state.attempt_number - 1)

    def stop(state: RetryCallState) -> bool:
        return state.attempt_number >= most or not budget.allows(state.upcoming_sleep)

    def give_up(state: RetryCallState) -> T:
        exc, asked = _error(state), _asked(state)
        if asked is not None and not budget.allows(asked):  # the server's wait is past what is left
            raise budget.refuse(exc, spec.label, asked) from None
        raise exc

    async def sleep(seconds: float) -> None:
        await budget.wait(seconds, why[0])

    why = [""]

    def before_sleep(state: RetryCallState) -> None:
        what = "rate limited" if isinstance(_error(state), RateLimited) else "failed"
        seconds = state.upcoming_sleep
        said = " (the server's Retry-After)" if _asked(state) is not None else " before retrying"
        why[0] = f"{spec.label} {what}: waiting {seconds:.0f} s{said}"

    try:  # the first request outside the loop: most calls need one, and building the loop cost more
        return await send()
    except Exception as exc:
        if not retryable(exc):
            raise  # what the loop does with an error it does not retry
        first = [exc]

    async def again() -> T:
        """The loop's first try is the request that just failed (its error, no new request); then `send`."""
        if first:
            raise first.pop()
        return await send()

    retrying = AsyncRetrying(
        retry=retry_if_exception(retryable),
        wait=wait,
        stop=stop,
        sleep=sleep,
        before_sleep=before_sleep,
        retry_error_callback=give_up,
    )
    return await retrying(again)
