"""What a model call returns, as every provider and strategy sees it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from components.core.prompts import Prompt


@dataclass(frozen=True)
class Completion:
    text: str
    input_tokens: int
    output_tokens: int
    latency_s: float
    model: str = ""
    cached: bool = False
    finish_reason: str = ""
    # prompt caching, as the provider billed it; both are PART of input_tokens (which counts every input
    # token, so it means the same for every provider): read from its cache (OpenAI
    # usage.prompt_tokens_details.cached_tokens, Anthropic usage.cache_read_input_tokens) and written to
    # it (Anthropic usage.cache_creation_input_tokens; OpenAI bills no writes)
    cached_input_tokens: int = 0
    cache_write_tokens: int = 0


# A strategy asks for completions through this; the runner supplies it (cache, limits, retries).
Ask = Callable[[Prompt], Awaitable[Completion]]


class NoAttention(ValueError):
    """A provider (or strategy) with no attention measure (components/providers/attention.py): only the
    bundled local model gives it. The message is one line for the user."""


def no_attention(provider: str) -> str:
    """The one line saying why a provider gives no attention."""
    return f"attention is not available with {provider}: providers do not return it"
