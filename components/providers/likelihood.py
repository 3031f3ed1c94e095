"""The likelihood measure: how likely a model finds a given answer after a prompt (teacher forcing).

A scoring call puts the gold answer where the model's reply would go (after the chat template's
assistant header, exactly the prompt the model would answer) and reads the natural-log probability
of each answer token; `logprob` is their sum. Nothing is generated. Which models can do it:
- `local` (llama.cpp in-process): the same chat template and tokens the local provider sends
  (local.chat_tokens), then the answer's tokens; llama.cpp's KV cache keeps the longest prefix shared
  with the previous prompt (components/providers/local.py).
- `openai-compatible` servers whose /v1/completions takes `echo` with `logprobs` and that show their
  chat template at /apply-template (the llama.cpp server): the prompt is that template with the answer
  appended; the answer's tokens are those whose text offset is past the template. A server without
  /apply-template (vLLM, for one) is a `not_found` error naming the endpoint.
- `fake` (tests): a deterministic made-up value.
OpenAI's and Anthropic's chat APIs return no log-probabilities of a given text: they cannot.

A scoring call is cached in the run store's `calls` table like any call, keyed by `score_key`: the
sha256 of provider, model, base URL, the prompt's messages and the answer scored (a different shape
from providers.base.cache_key, so the two never collide). Its row keeps the messages, settings
`{"measure": "likelihood", "answer": ...}`, the response as JSON (`Scored.to_json`: the per-token
log-probabilities), input_tokens = the tokens scored (prompt + answer), output_tokens = 0 and
finish_reason "score".
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass

from components.core.completion import Completion

SCORING_PROVIDERS = ("local", "openai-compatible", "fake")
FINISH = "score"  # finish_reason of a stored scoring call


class CannotScore(ValueError):
    """A provider or strategy that has no likelihood measure; the message is one line for the user."""


@dataclass(frozen=True)
class Scored:
    """One answer scored after one prompt."""

    token_logprobs: tuple[float, ...]  # natural log, one per answer token
    prompt_tokens: int  # tokens of the prompt (the answer's not included)
    evaluated: int = 0  # tokens the model actually evaluated (the rest came from its KV cache)
    latency_s: float = 0.0
    model: str = ""
    cached: bool = False  # read from the run store

    @property
    def logprob(self) -> float:
        return float(math.fsum(self.token_logprobs))

    @property
    def tokens(self) -> int:
        return len(self.token_logprobs)

    @property
    def mean(self) -> float | None:
        return self.logprob / self.tokens if self.tokens else None

    def to_json(self) -> str:
        return json.dumps(
            {
                "token_logprobs": list(self.token_logprobs),
                "prompt_tokens": self.prompt_tokens,
                "evaluated": self.evaluated,
            }
        )

    def completion(self) -> Completion:
        """The call as the store keeps it (see the module's docstring)."""
        return Completion(
            self.to_json(),
            self.prompt_tokens + self.tokens,
            0,
            self.latency_s,
            self.model,
            self.cached,
            FINISH,
        )

    @classmethod
    def from_completion(cls, c: Completion) -> Scored:
        d = json.loads(c.text)
        return cls(
            tuple(float(x) for x in d["token_logprobs"]),
            int(d["prompt_tokens"]),
            int(d.get("evaluated", 0)),
            c.latency_s,
            c.model,
            c.cached,
        )


def score_key(spec, messages: list[dict], answer: str) -> str:
    payload = {
        "provider": spec.provider,
        "model": spec.model,
        "base_url": spec.base_url or "",
        "messages": messages,
        "score": answer,
    }
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def score_settings(answer: str) -> dict:
    return {"measure": "likelihood", "answer": answer}


def can_score(provider) -> bool:
    return callable(getattr(provider, "score", None))


def check_provider(provider_name: str, label: str) -> None:
    if provider_name not in SCORING_PROVIDERS:
        raise CannotScore(
            f"{label} cannot score an answer's likelihood (its API returns no log-probabilities of a given "
            f"text); use a local model or the llama.cpp server (its /v1/completions takes echo "
            f'and logprobs, its /apply-template shows its chat template), or measure = "answer"'
        )


def log_softmax_at(logits, targets) -> list[float]:
    """log p(target) per row of logits (numpy, float64 for the sum)."""
    import numpy as np

    rows = np.asarray(logits, dtype=np.float64)
    top = rows.max(axis=1, keepdims=True)
    norm = top[:, 0] + np.log(np.exp(rows - top).sum(axis=1))
    return [float(rows[i, t] - norm[i]) for i, t in enumerate(targets)]


def fake_logprob(token: str, context: str) -> float:
    """A deterministic made-up log-probability in [-8, -0.01) for a token after a context (test
    doubles: the fake provider and the loopback test server)."""
    digest = hashlib.sha256((context[-2000:] + "\x00" + token).encode("utf-8")).digest()
    return -0.01 - 7.99 * int.from_bytes(digest[:4], "big") / 2**32
