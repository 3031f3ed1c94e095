"""Which batch interface a provider has: OpenAI's and Anthropic's (providers/batches.py) or Gemini's
(providers/gemini_batches.py). The one place a sweep in batch mode gets its interface from."""

from __future__ import annotations

from components.providers.base import ProviderError
from components.providers.batches import AnthropicBatches, OpenAIBatches
from components.providers.gemini_batches import GeminiBatches


def batch_api(provider) -> OpenAIBatches | AnthropicBatches | GeminiBatches:
    """The batch interface of a provider object (OpenAIBatches, AnthropicBatches or gemini_batches'
    GeminiBatches); ProviderError for one that has none (local, fake)."""
    kind = provider.spec.provider
    if kind == "anthropic" and hasattr(provider, "client"):
        return AnthropicBatches(provider)
    if kind in ("openai", "openai-compatible") and hasattr(provider, "client"):
        return OpenAIBatches(provider)
    if kind == "gemini" and hasattr(provider, "client"):
        return GeminiBatches(provider)
    raise ProviderError(
        f"{provider.spec.label}: batch mode needs an openai, openai-compatible, anthropic or gemini "
        'model (this one has no batch interface); use mode = "live"'
    )
