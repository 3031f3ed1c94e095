"""A GGUF model run in-process with llama-cpp-python (the `local` extra); no network, cost 0.

The model is loaded once per process (keyed by file and context size) and generates one prompt at
a time (a lock per loaded model); the blocking call runs in a worker thread. Decoding is greedy by
default and the KV cache is reset before every call, so the same prompt gives the same text.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from components.core.completion import Completion
from components.providers.base import ModelSpec, PromptTooLong, ProviderError, Settings
from components.providers.localmodel import LocalModelError, canonical, find_model, model_path

DEFAULT_CTX = 8192  # tokens: bounds memory; a larger ModelSpec.context_window raises it up to the model's own
THREADS = 2
BATCH = 512
INSTALL = "pip install llama-cpp-python==0.3.36 (or: pip install -e '.[local]')"


@dataclass
class Loaded:
    llm: object
    path: Path
    n_ctx: int
    load_s: float
    lock: threading.Lock = field(default_factory=threading.Lock)


_loaded: dict[tuple[str, int], Loaded] = {}
_load_lock = threading.Lock()
_queue_lock = threading.Lock()
_in_queue = 0  # calls waiting for or running on a local model in this process (every session's)


def queue_length() -> int:
    """Local-model calls waiting or running right now in this process: a new call waits behind them
    (one model generates one prompt at a time)."""
    return _in_queue


def llama_module():
    try:
        import llama_cpp
    except ImportError:
        raise LocalModelError(f"the local provider needs llama-cpp-python; install it with: {INSTALL}") from None
    return llama_cpp


def trained_context(llm) -> int | None:
    """The context length the GGUF declares (`<arch>.context_length`)."""
    meta = llm.metadata
    value = meta.get(f"{meta.get('general.architecture', '')}.context_length")
    return int(value) if value else None


def load(path: Path, context_window: int | None = None) -> Loaded:
    """Load (once per process) the model at path; n_ctx = the window asked for (default DEFAULT_CTX),
    capped at the model's trained context."""
    key = (str(path), context_window or 0)
    with _load_lock:
        if key not in _loaded:
            _loaded[key] = open_model(path, context_window or DEFAULT_CTX)
        return _loaded[key]


def open_model(path: Path, n_ctx: int) -> Loaded:
    llama_cpp = llama_module()
    options = dict(model_path=str(path), n_ctx=n_ctx, n_threads=THREADS, n_threads_batch=THREADS,
                   n_batch=BATCH, seed=0, verbose=False)
    if "flash_attn" in inspect.signature(llama_cpp.Llama.__init__).parameters:
        options["flash_attn"] = True
    start = time.perf_counter()
    try:
        llm = llama_cpp.Llama(**options)
        trained = trained_context(llm)
        if trained and trained < n_ctx:  # never run past what the model was trained on
            llm.close()
            llm = llama_cpp.Llama(**{**options, "n_ctx": trained})
    except (ValueError, RuntimeError) as e:
        raise LocalModelError(f"llama.cpp could not load {path.name}: {e}") from None
    if "tokenizer.chat_template" not in llm.metadata:
        llm.close()
        raise LocalModelError(f"{path.name} has no chat template (a base model?); use an instruct model")
    return Loaded(llm, path, llm.n_ctx(), time.perf_counter() - start)


def chat_tokens(llm, messages: list[dict]) -> list[int]:
    """The prompt tokens create_chat_completion will evaluate (same template, same tokenisation)."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    eos, bos = llm.token_eos(), llm.token_bos()
    text = lambda t: llm.detokenize([t], special=True).decode("utf-8", "replace") if t >= 0 else ""  # noqa: E731
    formatter = Jinja2ChatFormatter(llm.metadata["tokenizer.chat_template"], text(eos), text(bos))
    prompt = formatter(messages=messages).prompt
    return llm.tokenize(prompt.encode("utf-8"), add_bos=False, special=True)


class LocalProvider:
    """Provider protocol over llama.cpp: `await LocalProvider(spec).complete(messages, settings)`."""

    def __init__(self, spec: ModelSpec):
        found = find_model(spec.model)  # fails now, with the pip command, if the weights are missing
        llama_module()
        self.spec = replace(spec, model=canonical(spec.model))
        self.name = found.name
        self.loaded: Loaded | None = None

    def ensure_loaded(self) -> Loaded:
        if self.loaded is None:
            self.loaded = load(model_path(self.spec.model), self.spec.context_window)
        return self.loaded

    async def complete(self, messages: list[dict], settings: Settings) -> Completion:
        return await asyncio.to_thread(self.complete_sync, messages, settings)

    def complete_sync(self, messages: list[dict], settings: Settings) -> Completion:
        global _in_queue
        with _queue_lock:
            _in_queue += 1
        try:
            return self._generate(messages, settings)
        finally:
            with _queue_lock:
                _in_queue -= 1

    def _generate(self, messages: list[dict], settings: Settings) -> Completion:
        model = self.ensure_loaded()
        with model.lock:
            llm = model.llm
            n = len(chat_tokens(llm, messages))
            if n + settings.max_tokens > model.n_ctx:
                raise PromptTooLong(
                    f"the prompt has {n:,} tokens and max_tokens is {settings.max_tokens:,}, but {self.name} "
                    f"holds {model.n_ctx:,} here; shorten the document, or raise the context window "
                    f"(ModelSpec.context_window) if the model allows it")
            llm.reset()  # no KV-cache reuse across calls: the same prompt always gives the same text
            start = time.perf_counter()
            try:
                out = llm.create_chat_completion(
                    messages=messages, max_tokens=settings.max_tokens, temperature=settings.temperature,
                    top_k=1 if settings.temperature == 0 else 40, seed=settings.seed or 0)
            except (ValueError, RuntimeError) as e:
                raise ProviderError(f"llama.cpp failed on {self.name}: {e}") from None
            latency = time.perf_counter() - start
        choice, usage = out["choices"][0], out["usage"]
        return Completion(
            text=choice["message"]["content"] or "", input_tokens=usage["prompt_tokens"],
            output_tokens=usage["completion_tokens"], latency_s=latency, model=self.spec.model,
            finish_reason=choice.get("finish_reason") or "")
