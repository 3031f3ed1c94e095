"""A GGUF model run with llama-cpp-python (the `local` extra); no network, cost 0.

This is the code that runs IN the model's own process (components/providers/localworker.py): the app
and sweeps call the model through that worker (`make_provider` gives a localworker.WorkerProvider), so a
crash in llama.cpp ends one call, never the caller. `LocalProvider` here runs the model in the calling
process itself: the worker's model process uses it, and so do the tests and benchmarks that compare
against it.

The model is loaded once per process (keyed by file and context size) and generates one prompt at
a time (a lock per loaded model); the blocking call runs in a worker thread. Decoding is greedy by
default. llama.cpp's KV cache keeps the longest token prefix a prompt shares with the one before it
(`reuse`, the default), or with one of the last few prompts, whose KV states are kept in memory within a
byte budget (components/providers/localcache.py): only the rest is evaluated, and the same prompt again
is not evaluated at all. The same prompt gives the same text and the same numbers either way
(tests/test_likelihood_local.py, tests/test_localcache.py); `reuse=False` evaluates every prompt whole.
`score` gives the likelihood of a given answer (components/providers/likelihood.py).
"""

from __future__ import annotations

import asyncio
import atexit
import ctypes
import inspect
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from components.core.completion import Completion
from components.providers.attention import Attention, span_masses, token_spans
from components.providers.base import ModelSpec, PromptTooLong, ProviderError, Settings
from components.providers.likelihood import Scored, log_softmax_at
from components.providers.localcache import Saved, StateCache, common_prefix_len, reusable
from components.providers.localmodel import LocalModelError, canonical, find_model, model_path

DEFAULT_CTX = 8192  # tokens: bounds memory; a larger ModelSpec.context_window raises it up to the model's own
ENV_THREADS = "LITM_LOCAL_THREADS"  # threads llama.cpp uses (default 2); on a machine busy with other work,
# 1 can be several times faster: llama.cpp's threads wait for each other by spinning
THREADS = 2
BATCH = 512  # tokens per batch (n_batch = n_ubatch): prompts are evaluated in chunks of BATCH
INSTALL = "pip install llama-cpp-python==0.3.36 (or: pip install -e '.[local]')"


@dataclass
class Loaded:
    llm: object
    path: Path
    n_ctx: int
    load_s: float
    lock: threading.Lock = field(default_factory=threading.Lock)
    prompted: int = 0  # prompt tokens asked for in this process (generation and scoring)
    evaluated: int = 0  # of those, tokens the model evaluated (the rest came from its KV cache)
    eval_s: float = 0.0  # seconds spent evaluating prompts when scoring (a measured speed)
    calibrated: float | None = None  # prompt tokens per second measured once (speed())
    # the start of the KV cache computed in whole chunks [k*BATCH, (k+1)*BATCH) each evaluated as one batch,
    # as evaluating a prompt from its start does: only that much is reused, so that a prompt's numbers do
    # not depend on the prompt before it (a chunk evaluated in other pieces gives slightly other logits)
    chunked: int = 0
    attention: Any = None  # its localattention.AttentionContext, made on the first attention call
    states: StateCache = field(default_factory=StateCache)  # KV states of recent prompts (localcache.py)


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
        raise LocalModelError(
            f"the local provider needs llama-cpp-python; install it with: {INSTALL}"
        ) from None
    return llama_cpp


def threads_setting() -> int:
    import os

    value = os.environ.get(ENV_THREADS, "").strip()
    if not value:
        return THREADS
    if not value.isdigit() or int(value) < 1:
        raise LocalModelError(f"{ENV_THREADS} must be a positive whole number of threads, got {value!r}")
    return int(value)


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
            if not _loaded:
                atexit.register(close_all)
            _loaded[key] = open_model(path, context_window or DEFAULT_CTX)
        return _loaded[key]


def close_all() -> None:
    """Close every model this process loaded (at exit: a Llama left to the interpreter's shutdown prints
    "Exception ignored in: Llama.__del__ ... TypeError", its module's globals already gone)."""
    with _load_lock:
        for loaded in _loaded.values():
            try:
                if loaded.attention is not None:
                    loaded.attention.close()
                loaded.llm.close()
            except Exception:  # closing at exit: nothing left to tell
                pass
        _loaded.clear()


def open_model(path: Path, n_ctx: int) -> Loaded:
    llama_cpp = llama_module()
    threads = threads_setting()
    options = dict(
        model_path=str(path),
        n_ctx=n_ctx,
        n_threads=threads,
        n_threads_batch=threads,
        n_batch=BATCH,
        n_ubatch=BATCH,
        seed=0,
        verbose=False,
    )
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


def chat_prompt(llm, messages: list[dict]) -> str:
    """The prompt text create_chat_completion evaluates (the model's chat template)."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    eos, bos = llm.token_eos(), llm.token_bos()
    text = lambda t: llm.detokenize([t], special=True).decode("utf-8", "replace") if t >= 0 else ""  # noqa: E731
    formatter = Jinja2ChatFormatter(llm.metadata["tokenizer.chat_template"], text(eos), text(bos))
    return formatter(messages=messages).prompt


def chat_tokens(llm, messages: list[dict]) -> list[int]:
    """The prompt tokens create_chat_completion will evaluate (same template, same tokenisation)."""
    return llm.tokenize(chat_prompt(llm, messages).encode("utf-8"), add_bos=False, special=True)


def common_prefix(llm, tokens: list[int], limit: int) -> int:
    """Tokens at the start of `tokens` (at most `limit`) that the model's KV cache already holds."""
    return common_prefix_len(llm.input_ids[: llm.n_tokens], tokens[:limit])


def keep_prefix(loaded: Loaded, tokens: list[int], limit: int, reuse: bool) -> int:
    """Keep the cached prefix shared with `tokens` (at most `limit` tokens), cut down to whole chunks of
    BATCH tokens (Loaded.chunked), and drop the rest of the cache; returns how many tokens are kept (0
    without reuse). Evaluation then goes on in chunks starting at a multiple of BATCH, exactly as it
    does from the start: the same numbers with and without reuse."""
    llm = loaded.llm
    n = min(common_prefix(llm, tokens, limit), loaded.chunked) if reuse else 0
    n -= n % BATCH
    if n and llm._ctx.kv_cache_seq_rm(-1, n, -1):
        llm.n_tokens = n
        llm._requires_eval = True
        return n
    llm.reset()
    loaded.chunked = 0
    return 0


def save_state(loaded: Loaded, tokens: list[int], logits: bool) -> None:
    """Keep the KV state the model holds now, that of exactly `tokens` (localcache.Saved), with the logits
    after the last token when `logits` (a whole prompt just evaluated, nothing generated yet)."""
    cache = loaded.states
    llm: Any = loaded.llm
    if cache.budget <= 0 or llm.n_tokens != len(tokens):
        return
    llama_cpp = llama_module()
    ctx = llm._ctx.ctx
    size = int(llama_cpp.llama_state_seq_get_size(ctx, 0))
    if size <= 0 or size > cache.budget:
        return
    buf = (ctypes.c_uint8 * size)()
    n = int(llama_cpp.llama_state_seq_get_data(ctx, buf, size, 0))
    if n <= 0:
        return
    last = None
    if logits:
        ptr = llama_cpp.llama_get_logits_ith(ctx, -1)
        if ptr:
            last = ctypes.string_at(ptr, llm.n_vocab() * ctypes.sizeof(ctypes.c_float))
    chunked = len(tokens) - len(tokens) % BATCH
    cache.put(Saved(tuple(tokens), chunked, ctypes.string_at(buf, n), last))


def restore_state(loaded: Loaded, saved: Saved, logits: bool) -> bool:
    """Put a saved state back into the model's KV cache (every other cell dropped); with `logits`, its last
    logits too, so that generation samples from them without evaluating anything. False when llama.cpp
    refuses it (then the cache is empty)."""
    llama_cpp = llama_module()
    llm: Any = loaded.llm
    ctx = llm._ctx.ctx
    llm._ctx.kv_cache_seq_rm(-1, 0, -1)
    buf = (ctypes.c_uint8 * len(saved.kv)).from_buffer_copy(saved.kv)
    if int(llama_cpp.llama_state_seq_set_data(ctx, buf, len(saved.kv), 0)) != len(saved.kv):
        llm.reset()
        llm._ctx.kv_cache_seq_rm(-1, 0, -1)
        loaded.chunked = 0
        return False
    n = len(saved.tokens)
    llm.input_ids[:n] = saved.tokens
    llm.n_tokens = n
    llm._requires_eval = True
    loaded.chunked = saved.chunked
    if logits:
        ptr = llama_cpp.llama_get_logits_ith(ctx, -1)  # what the sampler reads (llama_sampler_sample)
        if not ptr or saved.logits is None:
            return False
        ctypes.memmove(ptr, saved.logits, len(saved.logits))
        llm._requires_eval = False
    loaded.states.hits += 1
    return True


def prepare(loaded: Loaded, tokens: list[int], limit: int, reuse: bool, whole: bool) -> int:
    """Get the model's KV cache ready for `tokens` and return how many of them it holds: with `whole` (a
    generation prompt) and a saved state of exactly these tokens, all of them, their last logits restored;
    else the longest whole-chunk prefix (at most `limit` tokens) shared with the prompt in the cache now or
    with a saved state, whichever keeps more (keep_prefix)."""
    if reuse:
        exact = loaded.states.exact(tokens) if whole else None
        if exact is not None:
            if restore_state(loaded, exact, logits=True):
                return len(tokens)
        live = reusable(common_prefix(loaded.llm, tokens, limit), loaded.chunked, BATCH)
        saved, n = loaded.states.best(tokens, limit, BATCH)
        if saved is not None and n > live:
            restore_state(loaded, saved, logits=False)
    return keep_prefix(loaded, tokens, limit, reuse)


def score_tokens(
    loaded: Loaded, prefix: list[int], answer: list[int], reuse: bool
) -> tuple[list[float], int]:
    """log p(answer[i] | prefix + answer[:i]) for each answer token (teacher forcing), and the
    tokens evaluated. The prefix up to its last token is evaluated as generation does (llm.eval,
    batches of n_batch, no logits kept); the last prefix token and the answer are evaluated in one
    batch that returns their logits."""
    import numpy as np

    llm = loaded.llm
    tokens = prefix + answer
    stop = len(prefix) - 1  # from here on the logits are needed
    kept = prepare(loaded, tokens, stop, reuse, whole=False)
    llm.eval(tokens[kept:stop])
    loaded.chunked = stop - stop % BATCH
    if reuse and loaded.chunked:
        save_state(loaded, tokens[:stop], logits=False)
    tail = tokens[stop:]
    n_past = llm.n_tokens
    llm._ctx.kv_cache_seq_rm(-1, n_past, -1)
    llm._batch.set_batch(batch=tail, n_past=n_past, logits_all=True)
    llm._ctx.decode(llm._batch)
    logits = np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(len(tail) * llm.n_vocab(),))
    logits = logits.reshape(len(tail), llm.n_vocab())[:-1]
    llm.input_ids[n_past : n_past + len(tail)] = tail
    llm.n_tokens = n_past + len(tail)
    llm._requires_eval = True  # generation after this replays a token rather than trust these logits
    return log_softmax_at(logits, answer), len(tokens) - kept


SPEED_TEXT = "The quick brown fox jumps over the lazy dog. " * 60  # about 600 tokens


def speed(loaded: Loaded) -> float:
    """Prompt tokens per second this model evaluates on this machine: measured from the scoring done
    so far in this process (at least 2,000 tokens), else once by evaluating SPEED_TEXT (kept for the
    process). Holds the model's lock."""
    if loaded.evaluated >= 2000 and loaded.eval_s > 0:
        return loaded.evaluated / loaded.eval_s
    if loaded.calibrated is None:
        with loaded.lock:
            llm = loaded.llm
            tokens = llm.tokenize(SPEED_TEXT.encode(), add_bos=False, special=False)
            llm.reset()
            start = time.perf_counter()
            llm.eval(tokens)
            loaded.calibrated = len(tokens) / max(time.perf_counter() - start, 1e-6)
            llm.reset()
            loaded.chunked = 0
    return loaded.calibrated


class LocalProvider:
    """Provider protocol over llama.cpp: `await LocalProvider(spec).complete(messages, settings)`;
    `await .score(messages, answer)` -> likelihood.Scored."""

    def __init__(self, spec: ModelSpec, reuse: bool = True):
        found = find_model(spec.model)  # fails now, with the pip command, if the weights are missing
        llama_module()
        self.spec = replace(spec, model=canonical(spec.model))
        self.name = found.name
        self.loaded: Loaded | None = None
        self.reuse = reuse  # keep the KV cache of the prefix shared with the previous prompt

    def ensure_loaded(self) -> Loaded:
        if self.loaded is None:
            self.loaded = load(model_path(self.spec.model), self.spec.context_window)
        return self.loaded

    async def complete(self, messages: list[dict], settings: Settings) -> Completion:
        return await asyncio.to_thread(self.complete_sync, messages, settings)

    def complete_sync(self, messages: list[dict], settings: Settings) -> Completion:
        return self._queued(self._generate, messages, settings)

    async def score(self, messages: list[dict], answer: str) -> Scored:
        return await asyncio.to_thread(self.score_sync, messages, answer)

    def score_sync(self, messages: list[dict], answer: str) -> Scored:
        return self._queued(self._score, messages, answer)

    def _queued(self, fn, *args):
        global _in_queue
        with _queue_lock:
            _in_queue += 1
        try:
            return fn(*args)
        finally:
            with _queue_lock:
                _in_queue -= 1

    def _score(self, messages: list[dict], answer: str) -> Scored:
        model = self.ensure_loaded()
        with model.lock:
            llm = model.llm
            prefix = chat_tokens(llm, messages)
            target = llm.tokenize(answer.encode("utf-8"), add_bos=False, special=False)
            if not target:
                raise ProviderError(f"{self.name}: the answer to score is empty")
            if len(prefix) + len(target) > model.n_ctx:
                raise PromptTooLong(
                    f"the prompt and answer have {len(prefix) + len(target):,} tokens, but {self.name} holds "
                    f"{model.n_ctx:,} here; shorten the document, or raise the context window"
                )
            if len(target) >= BATCH:
                raise ProviderError(
                    f"{self.name}: the answer to score has {len(target):,} tokens (at most "
                    f"{BATCH - 1} are scored)"
                )
            start = time.perf_counter()
            try:
                logprobs, evaluated = score_tokens(model, prefix, target, self.reuse)
            except (ValueError, RuntimeError) as e:
                llm.reset()
                model.chunked = 0
                raise ProviderError(f"llama.cpp failed on {self.name}: {e}") from None
            latency = time.perf_counter() - start
            model.prompted += len(prefix) + len(target)
            model.evaluated += evaluated
            model.eval_s += latency
        return Scored(tuple(logprobs), len(prefix), evaluated, latency, self.spec.model)

    async def attention(self, messages: list[dict], regions: list) -> Attention:
        return await asyncio.to_thread(self.attention_sync, messages, regions)

    def attention_sync(self, messages: list[dict], regions: list) -> Attention:
        """Where the last prompt token looks, by region (providers/attention.py; regions: (page, start char,
        end char) in the last message's content)."""
        return self._queued(self._attention, messages, [tuple(r) for r in regions])

    def _attention(self, messages: list[dict], regions: list) -> Attention:
        from components.providers.localattention import AttentionContext, prompt_offsets

        model = self.ensure_loaded()
        with model.lock:
            llm: Any = model.llm
            prompt = chat_prompt(llm, messages)
            tokens = llm.tokenize(prompt.encode("utf-8"), add_bos=False, special=True)
            if len(tokens) > model.n_ctx:
                raise PromptTooLong(
                    f"the prompt has {len(tokens):,} tokens, but {self.name} holds {model.n_ctx:,} here; "
                    "shorten the document, or raise the context window"
                )
            offsets, base = prompt_offsets(llm, tokens, prompt, messages[-1]["content"])
            spans = token_spans(offsets, regions, base)
            start = time.perf_counter()
            try:
                if model.attention is None:
                    model.attention = AttentionContext(llm, BATCH)
                rows, _ = model.attention.last_rows(tokens)
            except (ValueError, RuntimeError) as e:
                raise ProviderError(f"llama.cpp failed on {self.name}: {e}") from None
            latency = time.perf_counter() - start
            by_layer, other = span_masses(rows, spans)
        return Attention(
            tuple(r[0] for r in regions),
            tuple(tuple(r) for r in by_layer),
            tuple(other),
            tuple(b - a for a, b in spans),
            len(tokens),
            latency,
            self.spec.model,
        )

    def speed(self) -> float:
        """Prompt tokens per second on this machine (loads the model; see speed())."""
        return speed(self.ensure_loaded())

    def _generate(self, messages: list[dict], settings: Settings) -> Completion:
        model = self.ensure_loaded()
        with model.lock:
            llm = model.llm
            tokens = chat_tokens(llm, messages)
            n = len(tokens)
            if n + settings.max_tokens > model.n_ctx:
                raise PromptTooLong(
                    f"the prompt has {n:,} tokens and max_tokens is {settings.max_tokens:,}, but {self.name} "
                    f"holds {model.n_ctx:,} here; shorten the document, or raise the context window "
                    f"(ModelSpec.context_window) if the model allows it"
                )
            start = time.perf_counter()
            try:
                # the prompt is evaluated here, in the chunks create_chat_completion would use (from a
                # multiple of BATCH), and its state kept; create_chat_completion then finds the whole prompt
                # evaluated (llama-cpp-python's generate: "full prompt already cached") and samples at once
                kept = prepare(model, tokens, len(tokens) - 1, self.reuse, whole=True)
                model.prompted += n
                model.evaluated += n - kept
                if kept < n:
                    model.chunked = 0  # until the prompt is evaluated
                    llm.eval(tokens[kept:])
                    model.chunked = n - n % BATCH
                    if self.reuse:
                        save_state(model, tokens, logits=True)
                out = llm.create_chat_completion(
                    messages=messages,
                    max_tokens=settings.max_tokens,
                    temperature=settings.temperature,
                    top_k=1 if settings.temperature == 0 else 40,
                    seed=settings.seed or 0,
                )
            except (ValueError, RuntimeError) as e:
                raise ProviderError(f"llama.cpp failed on {self.name}: {e}") from None
            model.chunked = n - n % BATCH
            latency = time.perf_counter() - start
        choice, usage = out["choices"][0], out["usage"]
        return Completion(
            text=choice["message"]["content"] or "",
            input_tokens=usage["prompt_tokens"],
            output_tokens=usage["completion_tokens"],
            latency_s=latency,
            model=self.spec.model,
            finish_reason=choice.get("finish_reason") or "",
        )
