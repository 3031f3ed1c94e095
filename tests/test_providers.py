"""Providers against a real loopback HTTP server (OpenAI and Anthropic wire formats), the
context-window guard, key handling, and pricing."""

import asyncio
import json
import time

import pytest

from components.core.completion import Completion
from components.providers.base import (
    MissingKey,
    ModelSpec,
    PromptTooLong,
    ProviderError,
    RateLimited,
    Settings,
    Transient,
)
from components.providers.factory import make_provider
from components.providers.fake import FakeProvider, plausible_answer
from components.providers.guard import check_fits, context_window
from components.providers.openai_provider import map_error
from components.providers.pricing import cost_usd, load_prices

MSG = [
    {
        "role": "user",
        "content": "<PAGE 1>\nThe capital of Zorbia is Quenton.\n</PAGE 1>\n\n"
        "Answer the following question:\nWhat is the capital of Zorbia?\n\nRespond as Answer: ...\nPage: N",
    }
]
S = Settings(max_tokens=32)


def complete(spec, key="sk-test-abc123", messages=MSG, settings=S):
    async def go():
        p = make_provider(spec, key)
        try:
            return await p.complete(messages, settings)
        finally:
            await p.aclose()

    return asyncio.run(go())


def oa(server, **kw):
    return ModelSpec("openai-compatible", "loop", server.openai_url, **kw)


@pytest.mark.parametrize("provider", ["openai", "openai-compatible", "anthropic"])
def test_each_wire_format_answers_with_usage(server, provider):
    url = server.anthropic_url if provider == "anthropic" else server.openai_url
    c = complete(ModelSpec(provider, "gpt-4o-mini" if provider == "openai" else "loop", url))
    assert c.text == "Answer: Quenton\nPage: 1"
    assert c.input_tokens > 10 and c.output_tokens > 0 and c.latency_s > 0
    route = "messages" if provider == "anthropic" else "chat"
    assert server.counts[route] == 1 and server.counts["total"] == 1


def test_openai_compatible_needs_no_key(server):
    assert complete(oa(server), key=None).text.startswith("Answer: Quenton")


def test_slow_answer(server):
    server.set(delay=0.3)
    c = complete(oa(server))
    assert c.latency_s >= 0.3


def test_a_provider_sends_one_request_a_call(server):
    """The provider does not retry: the one retry loop is providers/retry.py (tests/test_retry.py)."""
    server.set(status=429, retry_after=0)
    with pytest.raises(RateLimited):
        complete(oa(server, max_retries=5))
    assert server.counts["total"] == 1


def test_rate_limit_exhausted_maps_to_rate_limited_with_retry_after(server):
    server.set(status=429, retry_after=0)
    with pytest.raises(RateLimited) as err:
        complete(oa(server, max_retries=0))
    assert err.value.retry_after == 0


def test_server_error_is_transient(server):
    server.set(status=500)
    with pytest.raises(Transient, match="500"):
        complete(oa(server, max_retries=1))
    assert server.counts["total"] == 1  # the SDK's retries are off


def test_hang_times_out(server):
    server.set(hang=True)
    t0 = time.perf_counter()
    with pytest.raises(Transient, match="timed out"):
        complete(oa(server, timeout=0.5, max_retries=0))
    assert time.perf_counter() - t0 < 5


def test_anthropic_errors_map_too(server):
    server.set(status=500)
    with pytest.raises(Transient):
        complete(ModelSpec("anthropic", "claude-x", server.anthropic_url, max_retries=0))
    server.set(status=400)
    with pytest.raises(ProviderError, match="400") as err:
        complete(ModelSpec("anthropic", "claude-x", server.anthropic_url, max_retries=0))
    assert not isinstance(err.value, Transient | RateLimited)


def test_missing_key_is_clear_and_sends_nothing(server, monkeypatch):
    monkeypatch.delenv("LITM_TEST_NO_SUCH_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    for spec in (
        ModelSpec("openai", "gpt-4o", server.openai_url),
        ModelSpec("openai-compatible", "loop", server.openai_url, api_key_env="LITM_TEST_NO_SUCH_KEY"),
        ModelSpec(
            "anthropic", "claude-3-5-sonnet", server.anthropic_url, api_key_env="LITM_TEST_NO_SUCH_KEY"
        ),
    ):
        with pytest.raises(MissingKey) as err:
            make_provider(spec)
        assert "no API key" in str(err.value) and (spec.api_key_env or "OPENAI_API_KEY") in str(err.value)
    assert server.counts["total"] == 0


def test_key_from_the_named_environment_variable(server, monkeypatch):
    monkeypatch.setenv("LITM_TEST_KEY", "sk-test-fromenv")
    assert complete(
        ModelSpec("openai", "gpt-4o", server.openai_url, api_key_env="LITM_TEST_KEY"), key=None
    ).text


def test_guard_refuses_a_prompt_too_long_before_sending(server):
    spec = oa(server, context_window=50)
    long = [{"role": "user", "content": "word " * 200}]
    with pytest.raises(PromptTooLong, match="context window of 50"):
        complete(spec, messages=long)
    assert server.counts["total"] == 0
    assert check_fits(spec, [{"role": "user", "content": "hi"}], Settings(max_tokens=10)) == 50
    assert context_window(ModelSpec("openai", "gpt-4o-2024-08-06")) == 128_000
    assert context_window(ModelSpec("openai-compatible", "mystery")) is None


def test_error_messages_never_contain_the_key():
    key = "sk-test-SECRET123456"

    class Fake429(Exception):
        status_code = 401
        body = {"error": {"message": f"Incorrect API key provided: {key}"}}

    err = map_error(Fake429(), "openai:gpt-4o", key)
    assert key not in str(err) and "401" in str(err)
    assert "sk-" not in str(map_error(Fake429(), "x", None))


def test_fake_provider_enqueue_history_responder():
    fake = FakeProvider().enqueue("Answer: one\nPage: 1", RateLimited("slow down", 0.1))
    c = asyncio.run(fake.complete(MSG, S))
    assert c.text == "Answer: one\nPage: 1" and len(fake.history) == 1
    with pytest.raises(RateLimited):
        asyncio.run(fake.complete(MSG, S))
    assert asyncio.run(fake.complete(MSG, S)).text == "Answer: Quenton\nPage: 1"  # plausible default
    echo = FakeProvider(responder=lambda m, s: f"Answer: {len(m)}")
    assert asyncio.run(echo.complete(MSG, S)).text == "Answer: 1"
    done = Completion("x", 1, 1, 0.0)
    assert asyncio.run(FakeProvider().enqueue(done).complete(MSG, S)) is done


def test_plausible_answer_retrieval_and_litm_formats():
    pages = "".join(
        f"<PAGE {i}>\n{t}\n</PAGE {i}>\n\n"
        for i, t in enumerate(
            ["Bread is baked daily.", "The capital of Zorbia is Quenton.", "Zorbia exports tin."], 1
        )
    )
    retrieval = (
        pages
        + "Identify up to 2 page numbers relevant to the following question:\nWhat is the capital of Zorbia?\n"
    )
    assert plausible_answer(retrieval) == "Pages: 2, 3"
    litm = (
        "Write a high-quality answer.\n\nDocument [1](Title: A) Bread is baked.\n"
        "Document [2](Title: B) The capital of Zorbia is Quenton.\n\nQuestion: what is the capital of zorbia?\nAnswer:"
    )
    assert plausible_answer(litm) == "Quenton"


def test_pricing(tmp_path, monkeypatch):
    assert cost_usd("openai", "gpt-4o-mini-2024-07-18", 1_000_000, 1_000_000) == pytest.approx(0.75)
    assert cost_usd("anthropic", "claude-3-5-sonnet-20241022", 1000, 0) == pytest.approx(0.003)
    assert cost_usd("openai", "no-such-model", 10, 10) is None
    assert cost_usd("fake", "x", 10, 10) == 0.0 and cost_usd("local", "x", 10, 10) == 0.0
    assert cost_usd("openai-compatible", "my-vllm", 10, 10) == 0.0
    over = tmp_path / "prices.json"
    over.write_text(
        json.dumps({"date": "2030-01-01", "models": {"openai": {"gpt-4o": {"input": 1, "output": 2}}}})
    )
    monkeypatch.setenv("LITM_PRICES", str(over))
    table, date = load_prices()
    assert date == "2030-01-01" and table["openai"]["gpt-4o"]["input"] == 1.0
    assert table["openai"]["gpt-4o"]["output"] == 2.0 and table["openai"]["gpt-4o"]["source"].startswith(
        "override"
    )
    assert cost_usd("openai", "gpt-4o", 1_000_000, 0, prices=table) == 1.0
    assert table["openai"]["gpt-4o-mini"]["input"] == 0.15  # the rest of the table stays


def test_price_table_entries_have_sources_and_batch_discounts(tmp_path, monkeypatch):
    from components.providers import pricing

    monkeypatch.delenv("LITM_PRICES", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    table, _ = load_prices()
    for provider, models in table.items():
        for model, entry in models.items():
            assert entry["source"].startswith("https://"), (provider, model)
            assert "2026" in entry["checked"] or "memory" in entry["checked"], (provider, model)
    # a longer listed name wins over its prefix: claude-opus-4-5 is not priced as claude-opus-4
    assert cost_usd("anthropic", "claude-opus-4-5-20251101", 1_000_000, 0, prices=table) == 5.0
    assert cost_usd("anthropic", "claude-opus-4-20250514", 1_000_000, 0, prices=table) == 15.0
    assert (
        pricing.load_batch()["openai"]["factor"] == 0.5 and pricing.load_batch()["anthropic"]["factor"] == 0.5
    )
    assert cost_usd("openai", "gpt-4o", 1_000_000, 0, batch=True) == 1.25  # $2.50 list, half in a batch
    assert cost_usd("openai-compatible", "mine", 10, 10, batch=True) == 0.0
    # the per-user file is read when LITM_PRICES is not set
    user = tmp_path / "litm-explorer" / "prices.json"
    user.parent.mkdir()
    user.write_text(
        json.dumps(
            {
                "models": {"openai": {"gpt-4o": {"input": 7, "output": 9}}},
                "batch_discount": {"openai": {"factor": 0.4}},
            }
        )
    )
    assert pricing.override_path() == user
    table, _ = load_prices()
    assert table["openai"]["gpt-4o"]["input"] == 7.0 and pricing.load_batch()["openai"]["factor"] == 0.4
    user.write_text("{not json")
    with pytest.raises(ValueError, match="cannot read the price file"):
        load_prices()
