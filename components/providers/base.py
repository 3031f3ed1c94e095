"""The provider protocol: complete(messages, settings) -> Completion.

Every provider (OpenAI, Anthropic, OpenAI-compatible, local llama.cpp, the scripted fake) implements
`complete`. Errors are ProviderError subclasses with messages safe to show a user: they never
contain an API key.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass
from typing import Protocol

from components.core.completion import Completion

PROVIDERS = ("openai", "anthropic", "openai-compatible", "local", "fake")


@dataclass(frozen=True)
class Settings:
    """Output-affecting settings (part of the cache key). Retries and timeouts are not."""

    max_tokens: int = 256
    temperature: float = 0.0
    seed: int | None = 0


@dataclass(frozen=True)
class ModelSpec:
    """Which model to call and how to reach it. `api_key_env` is a variable NAME, never a key."""

    provider: str
    model: str
    base_url: str | None = None
    api_key_env: str | None = None
    context_window: int | None = None
    timeout: float | None = None  # seconds per request (SDK default when None); not in the cache key
    max_retries: int | None = None  # SDK retries (its default when None); not in the cache key
    # Anthropic prompt caching: mark the prompt's shared prefix with cache_control (anthropic_provider);
    # changes the bill, not the answer, so not in the cache key
    cache_prefix: bool | None = None

    @property
    def label(self) -> str:
        return f"{self.provider}:{self.model}"


class ProviderError(Exception):
    """A call that failed; `retryable` says whether trying again later may succeed."""

    retryable = False
    kind = "error"


class MissingKey(ProviderError):
    kind = "missing_key"


class RateLimited(ProviderError):
    retryable = True
    kind = "rate_limited"

    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


class Transient(ProviderError):
    """Server errors, timeouts, dropped connections."""

    retryable = True
    kind = "transient"


class Unreachable(Transient):
    """No connection at all (refused, no such host): a wrong base URL, or a server that is down."""

    kind = "unreachable"


class PromptTooLong(ProviderError):
    kind = "too_long"


class AuthError(ProviderError):
    """401/403: the key is wrong or lacks access. Every later call would fail the same way."""

    kind = "auth"


class NotFound(ProviderError):
    """404: no such model or endpoint (a typo in the model name or base URL)."""

    kind = "not_found"


class BadRequest(ProviderError):
    """400/422: the server refuses the request as it is (a parameter the model does not take)."""

    kind = "bad_request"


class BadResponse(ProviderError):
    """A 200 answer that is not a usable completion: not JSON, HTML, no choices, no content. It is
    never cached, so `--retry-errors` (or a resume with retry) asks again."""

    retryable = True
    kind = "bad_response"


class LocalCrash(ProviderError):
    """The local model's process stopped during this call: a crash (a signal: a llama.cpp build that does
    not run on this CPU), no answer within the call's timeout (a hang), or out of memory. That call fails
    with one line saying what to do; the model's process restarts for the next call."""

    kind = "local_crash"


# kinds that fail every call of a sweep alike: a sweep whose first trials all fail so stops early
# (local_crash: a llama.cpp build that crashes on this CPU crashes on every call)
FATAL_KINDS = ("auth", "not_found", "bad_request", "missing_key", "unreachable", "local_crash")


def scrub(text: str, *secrets: str | None) -> str:
    """Remove every given secret (and anything shaped like an API key) from a message."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    return _KEY_SHAPE.sub("***", text)


_KEY_SHAPE = re.compile(r"\b(?:sk|sk-ant|sk-proj)-[A-Za-z0-9_\-]{6,}")


class Provider(Protocol):
    spec: ModelSpec

    async def complete(self, messages: list[dict], settings: Settings) -> Completion: ...


def cache_key(spec: ModelSpec, messages: list[dict], settings: Settings) -> str:
    """Hash of provider, model, base URL, messages and output-affecting settings only."""
    payload = {
        "provider": spec.provider,
        "model": spec.model,
        "base_url": spec.base_url or "",
        "messages": messages,
        "settings": asdict(settings),
    }
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()
