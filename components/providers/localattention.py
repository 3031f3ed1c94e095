"""The attention measure of the local model: where the last prompt token looks, read from llama.cpp.

Runs in the model's own process (components/providers/localworker.py), like generation and scoring, so a
crash in llama.cpp during a capture ends that one call with providers.base.LocalCrash.

How (llama-cpp-python 0.3.36, llama.cpp's `kq_soft_max-<layer>` tensors):
- A second llama.cpp context over the loaded model's weights (no second copy), with flash attention off
  (flash attention never forms the softmax matrix) and an evaluation callback (`cb_eval` in the context
  parameters, a `llama_cpp.ggml_backend_sched_eval_callback`). The generating context is left as it is,
  so answers and likelihoods keep their numbers bit for bit.
- The prompt but its last TAIL tokens is evaluated first, in chunks of local.BATCH from position 0 with the
  callback asking for nothing (no cost); then the last TAIL tokens as one batch of their own with the
  callback asking for each layer's `kq_soft_max-<layer>`, so only those query rows are ever computed and
  read. The same chunks every time: the same numbers bit for bit.
- Each tensor is float32 of shape ne = [n_kv, n_tokens, n_head, 1] (ggml order: the row over the KV cells
  is contiguous), the softmax of the scaled, masked K.Q: KV cell j holds position j (the cache is cleared
  and filled from 0 in order); cells past the prompt, and later positions for an earlier query, are masked
  to 0. `check_rows` refuses anything else (a changed layout) with one line.

The last query token's row, per layer and head, is what the measure reads (Hsieh et al. 2024 §2 measure
the attention a document gets from the query side as the mean of its tokens' weights; Peysakhovich and
Lerer 2023 §3 sum a document's weights from the last tokens: components/providers/attention.py).
"""

from __future__ import annotations

import ctypes
import os
import signal
from dataclasses import dataclass, field

from components.providers.base import ProviderError

TAIL = 4  # last prompt tokens evaluated as their own batch, callback on (their rows are read)
NAME = (
    b"kq_soft_max"  # llama.cpp's name of the attention weights (llama-graph.cpp: cb(kq, "kq_soft_max", il))
)
GGML_TYPE_F32 = 0
ENV_TEST_CRASH = "LITM_WORKER_TEST_CRASH"  # localworker's; "segv-capture": crash inside the callback (tests)


class GgmlTensor(ctypes.Structure):
    """struct ggml_tensor of ggml.h as built in llama-cpp-python 0.3.36 (GGML_MAX_DIMS 4, GGML_MAX_OP_PARAMS
    64, GGML_MAX_SRC 10, GGML_MAX_NAME 64); tests/test_attention_local.py checks it against ggml's own
    accessors (ggml_get_name, ggml_nelements, ggml_nbytes) and fails loudly if it moves."""

    _fields_ = [
        ("type", ctypes.c_int),
        ("buffer", ctypes.c_void_p),
        ("ne", ctypes.c_int64 * 4),
        ("nb", ctypes.c_size_t * 4),
        ("op", ctypes.c_int),
        ("op_params", ctypes.c_int32 * 16),
        ("flags", ctypes.c_int32),
        ("src", ctypes.c_void_p * 10),
        ("view_src", ctypes.c_void_p),
        ("view_offs", ctypes.c_size_t),
        ("data", ctypes.c_void_p),
        ("name", ctypes.c_char * 64),
        ("extra", ctypes.c_void_p),
        ("padding", ctypes.c_char * 8),
    ]


def ggml():
    """libggml-base with the accessors used here, typed."""
    from llama_cpp._ggml import libggml

    libggml.ggml_get_name.restype = ctypes.c_char_p
    libggml.ggml_get_name.argtypes = [ctypes.c_void_p]
    libggml.ggml_nelements.restype = ctypes.c_int64
    libggml.ggml_nelements.argtypes = [ctypes.c_void_p]
    libggml.ggml_nbytes.restype = ctypes.c_size_t
    libggml.ggml_nbytes.argtypes = [ctypes.c_void_p]
    libggml.ggml_backend_tensor_get.restype = None
    libggml.ggml_backend_tensor_get.argtypes = [
        ctypes.c_void_p,
        ctypes.c_void_p,
        ctypes.c_size_t,
        ctypes.c_size_t,
    ]
    return libggml


def layer_of(name: bytes) -> int | None:
    """The layer of a `kq_soft_max-<layer>` tensor name, else None."""
    head, sep, tail = name.partition(b"-")
    return int(tail) if head == NAME and sep and tail.isdigit() else None


@dataclass
class Capture:
    """What the callback collects while `on`: per layer, the float32 tensor and its ne."""

    on: bool = False
    layers: dict = field(default_factory=dict)
    error: str = ""

    def callback(self, lib):
        import numpy as np

        def cb(t, ask, _user):
            try:
                name = lib.ggml_get_name(t) or b""
                layer = layer_of(name)
                if ask:
                    return bool(self.on and layer is not None)
                if layer is None or not self.on:
                    return True
                if os.environ.get(ENV_TEST_CRASH) == "segv-capture":  # tests: a crash mid-capture
                    os.kill(os.getpid(), signal.SIGSEGV)
                tensor = GgmlTensor.from_address(t)
                ne = tuple(int(x) for x in tensor.ne)
                if tensor.type != GGML_TYPE_F32:
                    self.error = f"{name.decode()} is of ggml type {tensor.type}, not float32"
                    return True
                out = np.empty(ne[0] * ne[1] * ne[2] * ne[3], dtype=np.float32)
                lib.ggml_backend_tensor_get(t, out.ctypes.data, 0, out.nbytes)
                self.layers[layer] = (out, ne)
            except Exception as e:  # never raise through C: the call fails with the message instead
                self.error = f"{type(e).__name__}: {e}"
            return True

        return cb


def check_rows(rows, n_past: int, n_tokens: int) -> None:
    """Each query row sums to 1 over the cells it may see and is 0 past its own position; else the tensor's
    layout is not the one this module reads (a changed llama.cpp): one line, never a wrong number."""
    import numpy as np

    for i in range(rows.shape[-2]):
        row = rows[..., i, :]
        seen = row[..., : n_past + i + 1].sum(axis=-1, dtype=np.float64)
        beyond = float(np.abs(row[..., n_past + i + 1 :]).sum()) if row.shape[-1] > n_past + i + 1 else 0.0
        if not np.allclose(seen, 1.0, atol=1e-3) or beyond > 1e-4:
            raise ProviderError(
                "llama.cpp's kq_soft_max tensors are not laid out as this version reads them "
                f"(row {i}: sums {float(seen.min()):.4f}-{float(seen.max()):.4f}, {beyond:.4f} past its "
                "position); the attention measure needs llama-cpp-python 0.3.36"
            )


def tensor_rows(flat, ne: tuple, n_past: int, n_tokens: int):
    """The [n_head, n_tokens, n_kv] array of one layer's tensor, cut to the prompt's cells, checked."""
    n_kv, rows, heads, streams = ne
    if rows != n_tokens or streams != 1 or n_kv < n_past + n_tokens:
        raise ProviderError(
            f"llama.cpp's kq_soft_max tensor has shape {list(ne)}; expected [>= {n_past + n_tokens}, "
            f"{n_tokens}, heads, 1]: the attention measure needs llama-cpp-python 0.3.36"
        )
    out = flat.reshape(heads, rows, n_kv)[:, :, : n_past + n_tokens]
    check_rows(out, n_past, n_tokens)
    return out


class AttentionContext:
    """A second context over a loaded Llama's model: flash attention off, the callback on (see above)."""

    def __init__(self, llm, batch: int):
        import llama_cpp
        from llama_cpp._internals import LlamaBatch, LlamaContext

        self.lib = ggml()
        self.capture = Capture()
        self._cb = llama_cpp.ggml_backend_sched_eval_callback(self.capture.callback(self.lib))
        params = llama_cpp.llama_context_default_params()
        ctypes.memmove(ctypes.addressof(params), ctypes.addressof(llm.context_params), ctypes.sizeof(params))
        params.flash_attn_type = llama_cpp.LLAMA_FLASH_ATTN_TYPE_DISABLED
        params.cb_eval = self._cb
        params.cb_eval_user_data = None
        self.llama_cpp = llama_cpp
        self.n_ctx = int(params.n_ctx)
        self.batch_size = batch
        self.ctx = LlamaContext(model=llm._model, params=params, verbose=False)
        self.batch = LlamaBatch(n_tokens=batch, embd=0, n_seq_max=1, verbose=False)

    def close(self) -> None:
        self.batch.close()
        self.ctx.close()

    def last_rows(self, tokens: list[int], tail: int = TAIL):
        """float32 [layers, heads, n] of the last token's attention over the n prompt tokens (and the
        tail's rows [layers, heads, tail, n], for tests)."""
        import numpy as np

        n = len(tokens)
        tail = max(1, min(tail, n - 1))
        stop = n - tail
        self.llama_cpp.llama_memory_clear(self.ctx.memory, True)
        self.capture.on, self.capture.layers, self.capture.error = False, {}, ""
        for start in range(0, stop, self.batch_size):
            self.batch.set_batch(tokens[start : min(stop, start + self.batch_size)], start, logits_all=False)
            self.ctx.decode(self.batch)
        self.capture.on = True
        try:
            self.batch.set_batch(tokens[stop:], stop, logits_all=False)
            self.ctx.decode(self.batch)
        finally:
            self.capture.on = False
        if self.capture.error:
            raise ProviderError(f"the attention capture failed: {self.capture.error}")
        layers = self.capture.layers
        if not layers or sorted(layers) != list(range(len(layers))):
            raise ProviderError(
                f"llama.cpp handed over kq_soft_max for layers {sorted(layers)}; the attention measure needs "
                "every layer (flash attention off, llama-cpp-python 0.3.36)"
            )
        full = np.stack([tensor_rows(layers[i][0], layers[i][1], stop, tail) for i in range(len(layers))])
        return full[:, :, -1, :], full


def prompt_offsets(llm, tokens: list[int], prompt: str, content: str) -> tuple[list[int], int]:
    """(each token's first byte in the prompt's UTF-8, the byte where `content` (the last message's text)
    starts in it). The tokens' bytes must spell the prompt exactly, else the spans would be off: one line."""
    pieces = [llm.detokenize([t], special=True) for t in tokens]
    raw = prompt.encode("utf-8")
    if b"".join(pieces) != raw:
        raise ProviderError(
            "the model's tokens do not spell its prompt back; attention by page cannot be placed"
        )
    at = prompt.rfind(content)
    if at < 0:
        raise ProviderError(
            "the chat template changed the message's text; attention by page cannot be placed"
        )
    offsets, pos = [], 0
    for piece in pieces:
        offsets.append(pos)
        pos += len(piece)
    return offsets, len(prompt[:at].encode("utf-8"))
