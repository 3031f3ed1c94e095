"""THE retry loop (components/providers/retry.py), against the loopback server: a call sends at most the
number of requests docs/providers.md states, for every provider, with one back-off law."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from components.providers import retry
from components.providers.base import ModelSpec, RateLimited, Settings, Transient, WaitBudget
from components.providers.factory import make_provider
from components.run.caller import Caller

ROOT = Path(__file__).resolve().parents[1]
MESSAGES = [{"role": "user", "content": "What is the capital of Zorbia?"}]
PROVIDERS = ("openai", "openai-compatible", "anthropic")


def stated() -> int:
    """The requests a call sends at most with the default max_retries, as docs/providers.md states it."""
    text = (ROOT / "docs" / "providers.md").read_text(encoding="utf-8")
    m = re.search(
        r"A call sends at most 1 \+ `max_retries` requests: (\d+) with the default `max_retries` of (\d+)",
        text,
    )
    assert m, "docs/providers.md states how many requests a call sends"
    assert int(m.group(2)) == retry.RETRIES
    return int(m.group(1))


def spec(provider: str, server, **kw) -> ModelSpec:
    url = server.anthropic_url if provider == "anthropic" else server.openai_url
    return ModelSpec(provider, "gpt-4o-mini" if provider == "openai" else "loop-model", url, **kw)


def ask(model: ModelSpec, max_retry_after: float = 60.0):
    """One call the way a trial makes it: make_provider, then Caller.ask (the retry loop)."""

    async def go():
        provider = make_provider(model, "sk-test-0000")
        try:
            caller = Caller(provider, None, concurrency=1, max_retry_after=max_retry_after)
            return await caller.ask(MESSAGES, Settings(max_tokens=16)), caller
        finally:
            await provider.aclose()

    return asyncio.run(go())


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_server_that_always_answers_429_sees_at_most_the_stated_requests(server, provider):
    server.set(status=429, retry_after=0)  # no wait: the count, not the clock
    with pytest.raises(RateLimited):
        ask(spec(provider, server))
    assert server.counts["total"] == stated() == retry.attempts(spec(provider, server))


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("max_retries", [0, 2])
def test_the_models_max_retries_is_the_one_count(server, provider, max_retries):
    server.set(status=500, retry_after=0)  # a server error is tried again the same way
    with pytest.raises(Transient):
        ask(spec(provider, server, max_retries=max_retries))
    assert server.counts["total"] == 1 + max_retries


def test_a_call_that_succeeds_after_429s_counts_one_call_and_every_request(server):
    server.set(status=429, retry_after=0, fail_times=2)
    (completion, _), caller = ask(spec("openai-compatible", server))
    assert completion.text and server.counts["total"] == 3
    assert (caller.attempts, caller.requests) == (1, 3)  # one call, three HTTP requests


def test_a_retry_after_past_the_budget_is_not_waited_for(server):
    server.set(status=429, retry_after=600)
    with pytest.raises(RateLimited, match="asks to wait 600 s") as err:
        ask(spec("openai-compatible", server), max_retry_after=5)
    assert err.value.final and server.counts["total"] == 1


def test_the_back_off_law_without_a_retry_after():
    for k, top in enumerate([0.5, 1.0, 2.0, 4.0, 8.0, 8.0]):
        waits = [retry.backoff(k) for _ in range(50)]
        assert all(0.75 * top <= w <= top for w in waits), (k, min(waits), max(waits))


def test_every_wait_comes_out_of_one_budget():
    """Four tries of a call that needs 1 s between them, in a budget of 2.5 s: it waits twice, then ends."""
    tries, waited = [], []

    class Clockless(WaitBudget):
        async def wait(self, seconds: float, why: str = "") -> None:
            self.waited += seconds
            waited.append((seconds, why))

    async def send():
        tries.append(1)
        raise RateLimited("slow down", 1.0)

    with pytest.raises(RateLimited, match="asks to wait 1 s"):
        asyncio.run(retry.call(send, ModelSpec("fake", "m", max_retries=3), Clockless(2.5)))
    assert len(tries) == 3 and [w for w, _ in waited] == [1.0, 1.0]
    assert all("the server's Retry-After" in why for _, why in waited)
