"""Costs with prompt caching: the loopback server reports cached tokens the way each provider does, the
providers parse them, the store keeps them per call and per trial (and reads them back from its cache),
and cost per 1,000 questions prices them at the cached rates of components/data/prices.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from components.core.documents import make_document
from components.providers import pricing
from components.report import compare
from components.run.config import SweepConfig
from components.run.runner import run_sweep
from components.run.store import RunStore
from components.strategies import get_strategy

ROOT = Path(__file__).resolve().parent.parent
NQ30 = ROOT / "sample_docs" / "tasks" / "nq-open-30docs.jsonl.gz"


def litm20(server, provider: str, model: str, *, n_tasks: int = 4, cache_prefix: bool = False) -> SweepConfig:
    url = server.openai_url if provider == "openai" else server.anthropic_url
    m = {"provider": provider, "model": model, "base_url": url}
    if cache_prefix:
        m["cache_prefix"] = True
    return SweepConfig.from_dict(
        {
            "sweep": {
                "name": f"litm20-{provider}",
                "tasks": str(NQ30),
                "n_tasks": n_tasks,
                "documents": [20],
                "gold_index": [0, 4, 9, 14, 19],
                "strategies": ["litm"],
                "concurrency": 1,
                "models": [m],
            }
        }
    )


@pytest.fixture
def keys(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-loopback")


def _calls(store) -> list[dict]:
    return [
        dict(r)
        for r in store.db.execute(
            "SELECT input_tokens, output_tokens, cached_input_tokens, cache_write_tokens FROM calls"
        )
    ]


def test_openai_litm20_cost_per_1000_with_caching(tmp_path, server, keys):
    server.set(prompt_cache=True)
    store = RunStore(tmp_path / "s.sqlite")
    s = run_sweep(litm20(server, "openai", "gpt-4o-mini"), store)
    assert s.errors == 0
    trials = store.trials_frame()
    calls = _calls(store)
    assert len(trials) == 20 and len(calls) == 20
    # the server saw shared prefixes (the distractors before the gold document) and said so
    assert sum(c["cached_input_tokens"] for c in calls) > 0
    assert all(
        c["cached_input_tokens"] % 128 == 0 and c["cached_input_tokens"] <= c["input_tokens"] for c in calls
    )
    assert trials["cached_input_tokens"].sum() == sum(c["cached_input_tokens"] for c in calls)
    price = pricing.price_of("openai", "gpt-4o-mini")
    assert price["cached_input"] == 0.075 and price["input"] == 0.15
    # cost per 1,000 questions = mean (uncached x input + cached x cached rate + output x output) x 1,000
    n = len(trials)
    tin, tcached, tout = (
        trials[c].sum() / n for c in ("input_tokens", "cached_input_tokens", "output_tokens")
    )
    expected = 1000 * ((tin - tcached) * 0.15 + tcached * 0.075 + tout * 0.6) / 1e6
    arm = compare.compare(trials).arms.iloc[0]
    assert arm["cost_per_1000_usd"] == pytest.approx(expected, rel=1e-12)
    without = 1000 * (tin * 0.15 + tout * 0.6) / 1e6
    assert arm["cost_per_1000_usd"] < without
    # each trial's own cost is priced the same way
    row = trials.iloc[-1]
    assert row["cost_usd"] == pytest.approx(
        (
            (row["input_tokens"] - row["cached_input_tokens"]) * 0.15
            + row["cached_input_tokens"] * 0.075
            + row["output_tokens"] * 0.6
        )
        / 1e6
    )
    # a rerun reads every call from the store, cached-token counts included: same trials, same cost
    again = RunStore(tmp_path / "again.sqlite")
    again.db.execute("ATTACH DATABASE ? AS src", (str(tmp_path / "s.sqlite"),))
    again.db.execute("INSERT INTO calls SELECT * FROM src.calls")
    again.db.execute("DETACH DATABASE src")
    before = server.counts["total"]
    run_sweep(litm20(server, "openai", "gpt-4o-mini"), again)
    assert server.counts["total"] == before
    t2 = again.trials_frame()
    assert t2["cached_input_tokens"].sum() == trials["cached_input_tokens"].sum()
    assert t2["cost_usd"].sum() == pytest.approx(trials["cost_usd"].sum())


def test_no_caching_reported_without_it(tmp_path, server, keys):
    store = RunStore(tmp_path / "s.sqlite")
    run_sweep(litm20(server, "openai", "gpt-4o-mini", n_tasks=1), store)
    assert all(c["cached_input_tokens"] == 0 for c in _calls(store))


def test_anthropic_cache_prefix_marks_the_shared_prefix(tmp_path, server, keys):
    server.set(prompt_cache=True)
    store = RunStore(tmp_path / "s.sqlite")
    s = run_sweep(litm20(server, "anthropic", "claude-haiku-4-5", cache_prefix=True), store)
    assert s.errors == 0
    bodies = [json.loads(b) for b in server.raw_bodies]
    content = bodies[-1]["messages"][0]["content"]
    assert isinstance(content, list) and sum(1 for c in content if c.get("cache_control")) == 1
    calls = _calls(store)
    assert (
        sum(c["cache_write_tokens"] for c in calls) > 0 and sum(c["cached_input_tokens"] for c in calls) > 0
    )
    trials = store.trials_frame()
    n = len(trials)
    tin, tread, twrite, tout = (
        trials[c].sum() / n
        for c in ("input_tokens", "cached_input_tokens", "cache_write_tokens", "output_tokens")
    )
    # Haiku 4.5: $1 input, $0.10 cache hits, $1.25 5-minute cache writes, $5 output per 1M
    expected = 1000 * ((tin - tread - twrite) * 1.0 + tread * 0.10 + twrite * 1.25 + tout * 5.0) / 1e6
    arm = compare.compare(trials).arms.iloc[0]
    assert arm["cost_per_1000_usd"] == pytest.approx(expected, rel=1e-12)
    assert arm["cost_per_1000_usd"] < 1000 * (tin * 1.0 + tout * 5.0) / 1e6
    batch = compare.compare(trials, batch=True).arms.iloc[0]
    assert batch["cost_per_1000_usd"] == pytest.approx(
        expected / 2, rel=1e-12
    )  # the batch half of every rate


def test_without_cache_prefix_anthropic_requests_stay_plain(tmp_path, server, keys):
    server.set(prompt_cache=True)
    store = RunStore(tmp_path / "s.sqlite")
    run_sweep(litm20(server, "anthropic", "claude-haiku-4-5", n_tasks=1), store)
    assert all(isinstance(json.loads(b)["messages"][0]["content"], str) for b in server.raw_bodies)
    assert all(c["cached_input_tokens"] == 0 and c["cache_write_tokens"] == 0 for c in _calls(store))


def test_cache_cuts_are_the_pages_before_the_gold_one_and_blocks_rebuild_the_prompt():
    from components.providers.anthropic_provider import blocks

    doc = make_document(
        [f"Passage {i} text." for i in range(6)], titles=[f"T{i}" for i in range(6)], gold=[4]
    )
    # gold = page 4 (1-based): Document [4](Title: T3)
    prompt = get_strategy("litm").first_prompts(doc, "what is it?")[0]
    cuts = prompt.cache_cuts()
    gold = prompt.spans_of("gold")[0]
    assert cuts[-1] == gold.start_char and len(cuts) == 4  # pages 1, 2, 3 start, then the gold one
    assert prompt.text[cuts[-1] :].startswith("Document [4](Title: T3)")
    parts = blocks(prompt.text, cuts)
    assert "".join(p["text"] for p in parts) == prompt.text  # byte for byte
    marked = [i for i, p in enumerate(parts) if p.get("cache_control")]
    assert parts[0]["text"].startswith("Write a high-quality answer") and len(parts) == 5
    assert marked == [3] and parts[marked[0] + 1]["text"].startswith("Document [4]")


def test_cached_rates_in_the_price_file_carry_their_source():
    for models in pricing.PRICES.values():
        for name, entry in models.items():
            if "cached_input" in entry:
                assert entry["cached_input"] < entry["input"] and "2026-11-25" in entry["cache_checked"], name
    assert pricing.cost_usd("openai", "gpt-4", 2000, 0, cached_input_tokens=1024) == pytest.approx(
        2000 * 30 / 1e6
    )
    with pytest.raises(ValueError, match="cached_input must be a number"):
        pricing.merge(
            {}, {"models": {"openai": {"x": {"input": 1, "output": 2, "cached_input": "cheap"}}}}, "t"
        )


def test_batch_results_carry_cached_tokens_and_batch_prices(tmp_path, server, keys):
    from components.run.batch import run_batch_sweep

    server.set(prompt_cache=True)
    cfg = litm20(server, "openai", "gpt-4o-mini")
    cfg = SweepConfig.from_dict({"sweep": {**cfg.to_dict(), "mode": "batch", "tasks": str(NQ30)}})
    store = RunStore(tmp_path / "s.sqlite")
    s = run_batch_sweep(cfg, store, poll_interval=0.05)
    assert s.errors == 0
    trials = store.trials_frame()
    assert trials["cached_input_tokens"].sum() > 0
    assert trials["cached_input_tokens"].sum() == sum(c["cached_input_tokens"] for c in _calls(store))
    row = trials.iloc[-1]
    assert row["cost_usd"] == pytest.approx(
        0.5
        * (
            (row["input_tokens"] - row["cached_input_tokens"]) * 0.15
            + row["cached_input_tokens"] * 0.075
            + row["output_tokens"] * 0.6
        )
        / 1e6
    )
