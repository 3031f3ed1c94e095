"""The likelihood measure without a real model: config checks, sweep order, the store's cache of
scoring calls, an OpenAI-compatible server's echoed logprobs (the loopback server), the curve
statistics, and the page API (score one question at k gold positions)."""

from __future__ import annotations

import asyncio
import math
import threading

import pandas as pd
import pytest

from components.core.cells import Cell
from components.core.documents import make_document
from components.providers.base import ModelSpec
from components.providers.fake import FakeProvider
from components.providers.likelihood import Scored, fake_logprob, score_key
from components.run.config import SweepConfig
from components.run.plan import ordered, plan, prefix_key, trial_key
from components.run.runner import run_sweep
from components.run.store import RunStore

NQ = "sample_docs/tasks/nq-open-30docs.jsonl.gz"


def cfg(**kw) -> SweepConfig:
    sweep = {
        "name": "lik",
        "tasks": NQ,
        "n_tasks": 3,
        "documents": [10],
        "gold_index": [0, 4, 9],
        "strategies": ["litm"],
        "measure": "likelihood",
        "concurrency": 1,
        "models": [{"provider": "fake", "model": "fake"}],
        **kw,
    }
    return SweepConfig.from_dict({"sweep": sweep})


# ---- config -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kw, message",
    [
        ({"measure": "logprob"}, "measure must be one of answer, likelihood, both"),
        ({"order": "random"}, "order must be one of auto, prefix, plan"),
        ({"strategies": ["rr"]}, "strategy 'rr' has 2 stages"),
        ({"models": [{"provider": "openai", "model": "gpt-4o"}]}, "openai:gpt-4o cannot score"),
        ({"models": [{"provider": "anthropic", "model": "claude"}]}, "anthropic:claude cannot score"),
        (
            {
                "mode": "batch",
                "models": [{"provider": "openai-compatible", "model": "m", "base_url": "http://x/v1"}],
            },
            "runs live only",
        ),
    ],
)
def test_a_sweep_that_cannot_be_scored_gets_one_clear_line(kw, message):
    with pytest.raises(ValueError, match=message) as info:
        cfg(**kw)
    assert "\n" not in str(info.value)


def test_measure_and_order_round_trip_and_the_default_keys_stay_as_they_were():
    c = cfg(order="plan")
    back = SweepConfig.from_stored(c.to_dict())
    assert (back.measure, back.order) == ("likelihood", "plan") and back.to_dict() == c.to_dict()
    assert cfg().run_order == "plan" and cfg(order="prefix").run_order == "prefix"  # auto: a fake model
    local = cfg(models=[{"provider": "local", "model": "smollm2"}, {"provider": "fake", "model": "fake"}])
    assert local.order == "auto" and local.run_order == "prefix"
    answer = cfg(measure="answer")
    assert "measure" not in answer.to_dict() and "order" not in answer.to_dict()
    spec = plan(answer)[0]
    old = trial_key(answer, spec.task.id, Cell(documents=10, gold_index=0), "litm", {}, spec.model)
    assert spec.key == old  # "answer" adds nothing to a trial's key: older stores keep their trials
    assert plan(cfg())[0].key != spec.key  # a likelihood trial is another trial


# ---- order --------------------------------------------------------------------------------------


def test_prefix_order_keeps_a_questions_positions_together_and_shares_the_most():
    c = cfg(gold_index=[0, 2, 4, 7, 9])
    specs = plan(c)
    from components.run.plan import Documents
    from components.strategies import get_strategy

    docs = Documents(c.encoding, c.all_tasks().tasks)
    text = {
        s.key: get_strategy("litm").first_prompts(docs.get(s).document, s.task.question, {})[0].text
        for s in specs
    }

    def shared(order):
        total = 0
        for a, b in zip(order, order[1:], strict=False):
            x, y = text[a.key], text[b.key]
            n = next((i for i, (p, q) in enumerate(zip(x, y, strict=False)) if p != q), min(len(x), len(y)))
            total += n
        return total

    prefix = ordered(specs, "prefix", lambda s: text[s.key])
    assert ordered(specs, "plan", lambda s: text[s.key]) == specs
    assert sorted(s.key for s in prefix) == sorted(s.key for s in specs)
    runs = [s.task.id for s in prefix]
    assert all(runs[i : i + 5] == [runs[i]] * 5 for i in range(0, len(runs), 5))  # whole questions
    assert shared(prefix) > 1.5 * shared(specs)
    # resumed with the second question begun (two of its five positions stored): it is finished first
    begun = specs[1].task.id
    left = [s for s in specs if not (s.task.id == begun and s.gold_index in (0, 9))]
    resumed = ordered(left, "prefix", lambda s: text[s.key])
    assert [s.task.id for s in resumed[:3]] == [begun] * 3 and resumed[3:] == [
        s for s in prefix if s.task.id != begun
    ]


def test_prefix_key_sorts_prompts_by_shared_blocks():
    a, b, c = "x" * 600 + "A", "x" * 600 + "B", "y" * 600
    keys = sorted([prefix_key(c), prefix_key(a), prefix_key(b)])
    assert keys.index(prefix_key(c)) in (0, 2)  # a and b (sharing 600 characters) are adjacent
    assert len(prefix_key("z" * 100_000)) == 8 * math.ceil(100_000 / 256)


# ---- a sweep with the fake provider --------------------------------------------------------------


def test_a_likelihood_sweep_stores_its_scores_and_a_rerun_sends_nothing(tmp_path):
    fake = FakeProvider(ModelSpec("fake", "fake"))
    store = RunStore(tmp_path / "s.sqlite")
    first = run_sweep(cfg(), store, providers={"fake:fake": fake})
    frame = store.trials_frame()
    assert first.status == "done" and len(frame) == 9 and frame["error"].isna().all()
    assert frame["answer"].isna().all() and frame["subspan_em"].isna().all()  # nothing generated
    assert (frame["answer_logprob"] <= 0).all() and frame["answer_logprob"].map(math.isfinite).all()
    assert all("score" in h for h in fake.history)  # scored, never asked to complete
    calls = store.calls_for_trial(int(frame.iloc[0]["trial_id"]))
    assert calls and calls[0]["finish_reason"] == "score" and calls[0]["output_tokens"] == 0
    assert calls[0]["settings"]["measure"] == "likelihood"
    n = len(fake.history)
    # a dry run of the same trials under another sweep's name counts every scoring call as cached
    from components.run.estimate import estimate

    est = estimate(cfg(name="lik-again"), store=store)
    assert (est.calls, est.cached_calls) == (0, n) and est.done_trials == 0
    assert estimate(cfg(name="lik-more", n_tasks=4), store=store).calls > 0  # a 4th question is not cached
    store.db.execute("DELETE FROM trials")
    again = run_sweep(cfg(), store, providers={"fake:fake": fake})
    assert again.calls_sent == 0 and len(fake.history) == n
    assert sorted(store.trials_frame()["answer_logprob"]) == sorted(frame["answer_logprob"])
    store.close()


def test_the_best_alias_is_kept(tmp_path):
    from components.run.measure import score_trial
    from components.run.schema import Trial

    class Caller:
        spec = ModelSpec("fake", "fake")

        async def score(self, messages, answer):
            lp = {"Paris": (-3.0,), "paris city": (-1.0, -1.5), "PARIS": (-9.0,)}[answer]
            return Scored(lp, 100), f"k-{answer}"

    doc = make_document(["Paris is the capital.", "Lyon is a city."], gold=[1])
    trial = Trial()
    keys = asyncio.run(
        score_trial(trial, doc, "capital?", ["Paris", "paris city", "PARIS", "Paris"], "litm", {}, Caller())
    )
    assert keys == ["k-Paris", "k-paris city", "k-PARIS"]  # each alias once
    assert trial.answer_logprob == -2.5 and trial.answer_logprob_tokens == 2
    assert trial.answer_logprob_mean == -1.25 and trial.calls == 3


def test_both_generates_and_scores(tmp_path):
    store = RunStore(tmp_path / "s.sqlite")
    run_sweep(cfg(measure="both"), store)
    frame = store.trials_frame()
    store.close()
    assert frame["answer"].notna().all() and frame["subspan_em"].notna().all()
    assert frame["answer_logprob"].notna().all() and (frame["calls"] >= 2).all()


# ---- an OpenAI-compatible server -----------------------------------------------------------------


def test_an_openai_compatible_server_scores_the_answer_from_echoed_logprobs(server):
    from components.providers.factory import make_provider
    from tests.support.llm_server import _tokens, chatml

    spec = ModelSpec("openai-compatible", "loop-model", server.openai_url)
    messages = [{"role": "user", "content": "Where is the Zircon Spire?"}]
    prov = make_provider(spec)
    scored = asyncio.run(prov.score(messages, "in Utopia"))
    prefix = chatml(messages)
    toks = _tokens(prefix + "in Utopia")
    expected = [fake_logprob(t, "".join(toks[:i])) for i, t in enumerate(toks) if i >= len(_tokens(prefix))]
    assert scored.token_logprobs == tuple(expected) and scored.tokens == 3  # "in", " ", "Utopia"
    assert scored.prompt_tokens == len(_tokens(prefix))


def test_a_server_without_apply_template_is_named_as_such(tmp_path, server):
    """vLLM has /v1/completions with echoed logprobs but no /apply-template: one line saying so, not
    "is the model name or base URL right?"."""
    server.set(no_template=True)
    c = cfg(
        models=[{"provider": "openai-compatible", "model": "m", "base_url": server.openai_url}], fail_fast=0
    )
    store = RunStore(tmp_path / "s.sqlite")
    summary = run_sweep(c, store)
    frame = store.trials_frame()
    store.close()
    assert summary.errors == 9 and (frame["error_kind"] == "not_found").all()
    [error] = set(frame["error"])
    assert "the server has no /apply-template" in error and "vLLM" in error and "\n" not in error, error
    assert "is the model name or base URL right" not in error
    assert server.counts["completions"] == 0


def test_an_openai_compatible_likelihood_sweep_is_cached(tmp_path, server):
    c = cfg(models=[{"provider": "openai-compatible", "model": "loop-model", "base_url": server.openai_url}])
    store = RunStore(tmp_path / "s.sqlite")
    first = run_sweep(c, store)
    sent = server.counts["completions"]
    assert first.errors == 0 and sent == first.calls_sent >= 9
    store.db.execute("DELETE FROM trials")
    again = run_sweep(c, store)
    store.close()
    assert again.calls_sent == 0 and server.counts["completions"] == sent


def test_a_server_without_echoed_logprobs_is_a_trial_error(tmp_path, server):
    server.set(status=404)
    c = cfg(
        models=[{"provider": "openai-compatible", "model": "m", "base_url": server.openai_url}], fail_fast=0
    )
    store = RunStore(tmp_path / "s.sqlite")
    summary = run_sweep(c, store)
    frame = store.trials_frame()
    store.close()
    assert summary.errors == 9 and (frame["error_kind"] == "not_found").all()
    assert frame["answer_logprob"].isna().all()


def test_score_key_differs_from_a_completion_key():
    from components.providers.base import Settings, cache_key

    spec = ModelSpec("local", "m")
    m = [{"role": "user", "content": "q"}]
    assert score_key(spec, m, "a") != score_key(spec, m, "b") != cache_key(spec, m, Settings())


# ---- curve statistics ----------------------------------------------------------------------------


def test_curve_and_edges_minus_middle_pair_questions():
    from components.report.likelihood import curve, edges_minus_middle

    rows = []
    for q in range(12):
        for i, v in zip((0, 4, 9), (-1.0 - q * 0.1, -3.0, -2.0 + (q % 2) * 0.5), strict=True):
            rows.append({"task": f"q{q}", "gold_index": i, "answer_logprob": v, "error": None})
    rows.append({"task": "lonely", "gold_index": 0, "answer_logprob": -0.1, "error": None})  # not paired
    df = pd.DataFrame(rows)
    c = curve(df)
    assert list(c["n"]) == [12, 12, 12]
    assert c.loc[c.gold_index == 4, "mean"].item() == -3.0
    row = c[c.gold_index == 0].iloc[0]
    assert row["low"] < row["mean"] < row["high"]
    shape = edges_minus_middle(df)
    assert shape.n == 12 and shape.positive == 12 and shape.low > 0
    assert shape.mean == pytest.approx(((-1.0 - 0.55) + (-2.0 + 0.25)) / 2 + 3.0)


# ---- the page API ---------------------------------------------------------------------------------


def test_score_positions_runs_in_prefix_order_with_progress_and_cancel(tmp_path):
    from components.run.livescore import estimate, score_positions
    from components.tasks.sweepdocs import move_gold

    pages = [f"Page {i} talks about river {i} and its {i * 3} bridges." for i in range(12)]
    pages[3] = "The Zircon Spire is the tallest tower in Utopia."
    doc = make_document(pages, gold=[4])
    docs = {pos: move_gold(doc, pos).document for pos in (0.0, 0.5, 1.0)}
    spec = ModelSpec("fake", "fake")
    fake = FakeProvider(spec)
    est = estimate(docs, "What is the tallest tower in Utopia?", ["Zircon Spire"], spec, provider=fake)
    assert est.prompts == 3 and est.tokens >= est.evaluated > 0 and est.seconds is None  # no speed known
    seen = []
    store = RunStore(tmp_path / "s.sqlite")
    out = score_positions(
        docs,
        "What is the tallest tower in Utopia?",
        ["Zircon Spire"],
        spec,
        store=store,
        provider=fake,
        progress=seen.append,
    )
    assert set(out) == {0.0, 0.5, 1.0} and all(t.answer_logprob <= 0 for t in out.values())
    assert [p.done for p in seen] == [0, 1, 2, 3] and seen[-1].trial is out[seen[-1].position]
    cancel = threading.Event()
    cancel.set()
    assert score_positions(docs, "q?", ["a"], spec, store=store, provider=fake, cancel=cancel) == {}
    store.close()
