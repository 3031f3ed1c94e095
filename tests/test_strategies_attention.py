"""attention-sort (Peysakhovich and Lerer 2023 §3) and calibrated-attention (Hsieh et al. 2024 §3-4) on
fixed attention values: the reorderings they make, the calls they send, and their refusal for every
provider that gives no attention."""

from __future__ import annotations

import asyncio
import re

import pytest

from components.core.completion import Completion, NoAttention
from components.core.documents import make_document
from components.providers.attention import Attention
from components.strategies import get_strategy
from components.strategies.attention import DUMMY, attention_sorted, calibrated, calibrated_order

DOC = make_document(
    [f"Passage {c} about topic {c}." for c in "ABCDE"], titles=[f"T{c}" for c in "ABCDE"], gold=(3,)
)


def shown_order(prompt) -> list[int]:
    """Page numbers in the order the prompt shows them (its page spans)."""
    return [s.page for s in prompt.spans if s.kind in ("page", "gold")]


def attention_for(prompt, mass_of) -> Attention:
    pages = tuple(shown_order(prompt))
    masses = tuple(mass_of(k, n) for k, n in enumerate(pages))
    # two layers: the first has other values (only the last half counts for calibrated-attention's `late`)
    return Attention(pages, (tuple(0.5 * m for m in masses), masses), (0.2, 0.2), (10,) * len(pages), 100)


class Ask:
    """A runner's ask and attend with fixed attention values, recording what was sent."""

    def __init__(self, mass_of):
        self.mass_of, self.attended, self.asked = mass_of, [], []

    async def __call__(self, prompt):
        self.asked.append(prompt)
        return Completion("topic C", 10, 2, 0.0)

    async def attend(self, prompt):
        self.attended.append(prompt)
        return attention_for(prompt, self.mass_of)


def test_attention_sorted_puts_the_most_attended_last_and_keeps_ties_in_order():
    pages = list(DOC.pages)
    got = attention_sorted(pages, {1: 0.3, 2: 0.1, 3: 0.5, 4: 0.1, 5: 0.2})
    assert [p.number for p in got] == [2, 4, 5, 1, 3]


def test_attention_sort_reorders_by_the_fixed_attention_then_answers():
    # page 3 (gold) gets 0.5, page 1 0.3 ...: one round sorts once
    fixed = {1: 0.3, 2: 0.1, 3: 0.5, 4: 0.05, 5: 0.2}
    ask = Ask(lambda k, n: fixed[n])
    out = asyncio.run(get_strategy("attention-sort").run(DOC, "What is C?", {}, ask))
    assert [shown_order(p) for p in ask.attended] == [[1, 2, 3, 4, 5]]
    assert shown_order(ask.asked[0]) == [4, 2, 5, 1, 3]  # highest attention last, nearest the question
    assert out.answer == "topic C" and len(out.prompts) == 2
    # documents are numbered in the order shown, titles and texts follow their page
    text = ask.asked[0].text
    assert (
        re.search(r"Document \[1\]\(Title: TD\) Passage D", text)
        and "Document [5](Title: TC) Passage C" in text
    )


def test_attention_sort_with_more_rounds_sorts_again_on_the_new_order():
    # attention that favours the end (a recency bias) plus relevance: each round sees the last order
    relevance = {1: 0.0, 2: 0.1, 3: 0.3, 4: 0.05, 5: 0.0}
    ask = Ask(lambda k, n: 0.02 * k + relevance[n])
    asyncio.run(get_strategy("attention-sort").run(DOC, "What is C?", {"rounds": 2}, ask))
    first = [1, 2, 3, 4, 5]
    # round 1: masses 0, .12, .34, .11, .08 -> [1, 5, 4, 2, 3]; round 2 on that order: 0, .02, .09, .16, .38
    assert [shown_order(p) for p in ask.attended] == [first, [1, 5, 4, 2, 3]]
    assert shown_order(ask.asked[0]) == [1, 5, 4, 2, 3]
    with pytest.raises(ValueError, match="rounds"):
        get_strategy("attention-sort").check(DOC, "q", {"rounds": 6})


def test_calibration_subtracts_the_dummys_attention_at_the_same_position():
    pages = list(DOC.pages)
    per_token = {1: 0.05, 2: 0.02, 3: 0.04, 4: 0.02, 5: 0.06}
    bias = [0.05, 0.02, 0.01, 0.02, 0.055]  # a U: the edges get more whatever they hold
    score = calibrated(pages, per_token, bias)
    assert score == pytest.approx({1: 0.0, 2: 0.0, 3: 0.03, 4: 0.0, 5: 0.005})
    assert [p.number for p in calibrated_order(pages, score)] == [1, 2, 4, 5, 3]


def test_calibrated_attention_probes_each_position_with_the_dummy_and_ranks_by_what_is_left():
    # a U-shaped positional bias (the same for any document at a place) plus relevance: page 3 (gold) is
    # in the middle, gets less raw attention than the edges, but the most once the bias is taken away
    bias = [0.5, 0.2, 0.1, 0.2, 0.6]
    relevance = {0: 0.0, 1: 0.05, 2: 0.0, 3: 0.2, 4: 0.0, 5: 0.1}
    ask = Ask(lambda k, n: bias[k] + relevance[n])
    asyncio.run(get_strategy("calibrated-attention").run(DOC, "What is C?", {}, ask))
    assert len(ask.attended) == 1 + 5 and len(ask.asked) == 1
    for k, probe in enumerate(ask.attended[1:]):  # the dummy in position k's place, the rest unchanged
        order = shown_order(probe)
        assert order[k] == 0 and [n for n in order if n] == [n for n in range(1, 6) if n != k + 1]
        assert DUMMY.text in probe.text
    # raw attention 0.55, 0.2, 0.3, 0.2, 0.7 would put page 5 last; calibrated: 0.05, 0, 0.2, 0, 0.1
    assert shown_order(ask.asked[0]) == [2, 4, 1, 5, 3]


def test_both_refuse_without_attention_in_one_line():
    async def plain(prompt):
        return Completion("x", 1, 1, 0.0)

    for name in ("attention-sort", "calibrated-attention"):
        with pytest.raises(NoAttention, match="attention is not available"):
            asyncio.run(get_strategy(name).run(DOC, "q", {}, plain))


@pytest.mark.parametrize("strategy", ["attention-sort", "calibrated-attention"])
def test_a_sweep_of_either_with_an_api_model_is_refused_before_any_call(strategy, tmp_path):
    from tests.support.llm_server import LLMServer
    from tests.test_attention import run_cli

    with LLMServer() as server:
        config = tmp_path / "a.toml"
        config.write_text(
            '[sweep]\nname = "a"\ntasks = "nq-open-30docs.jsonl.gz"\nn_tasks = 1\ndocuments = [5]\n'
            f'gold_index = [0]\nstrategies = ["{strategy}"]\n\n[[sweep.models]]\n'
            f'provider = "openai-compatible"\nmodel = "m"\nbase_url = "{server.url}/v1"\n'
        )
        done = run_cli(["sweep", str(config), "--db", str(tmp_path / "s.sqlite")], tmp_path)
        assert sum(server.counts.values()) == 0 and server.bodies == []
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "attention is not available with openai-compatible" in lines[0], lines
