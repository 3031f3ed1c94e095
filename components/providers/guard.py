"""The context-window guard every provider runs before a request.

A prompt whose tokens plus `max_tokens` exceed the model's window is refused with PromptTooLong
instead of being sent (a provider would reject it anyway, after charging for nothing or truncating).
The window comes from ModelSpec.context_window or, failing that, the table below (longest prefix wins).
Counting is cheap: UTF-8 bytes are an upper bound of tokens, so short prompts are never tokenised.
"""

from __future__ import annotations

from components.providers.base import ModelSpec, PromptTooLong, Settings

# model-name prefix -> context window in tokens (providers' published figures)
KNOWN_WINDOWS: dict[str, int] = {
    "gpt-3.5-turbo": 16_385,
    "gpt-4": 8_192,
    "gpt-4-32k": 32_768,
    "gpt-4-turbo": 128_000,
    "gpt-4-1106": 128_000,
    "gpt-4-0125": 128_000,
    "gpt-4o": 128_000,
    "gpt-4.1": 1_047_576,
    "gpt-4.5": 128_000,
    "gpt-5": 400_000,
    "o1": 200_000,
    "o3": 200_000,
    "o4": 200_000,
    "claude-2": 100_000,
    "claude-3": 200_000,
    "claude-opus": 200_000,
    "claude-sonnet": 200_000,
    "claude-haiku": 200_000,
}
MESSAGE_OVERHEAD = 4  # tokens per chat message for role and separators (OpenAI's accounting)


def context_window(spec: ModelSpec) -> int | None:
    if spec.context_window:
        return spec.context_window
    name = spec.model.lower().split("/")[-1]
    best = max((p for p in KNOWN_WINDOWS if name.startswith(p)), key=len, default=None)
    return KNOWN_WINDOWS[best] if best else None


def count_message_tokens(messages: list[dict], encoding: str = "cl100k_base") -> int:
    from components.core.tokens import tokenizer

    tok = tokenizer(encoding)
    return sum(tok.count(str(m.get("content", ""))) + MESSAGE_OVERHEAD for m in messages) + 3


def check_fits(spec: ModelSpec, messages: list[dict], settings: Settings) -> int | None:
    """Raise PromptTooLong when the prompt cannot fit; return the window (None: unknown, not checked)."""
    window = context_window(spec)
    if window is None:
        return None
    upper = sum(len(str(m.get("content", "")).encode("utf-8")) + MESSAGE_OVERHEAD for m in messages) + 3
    if upper + settings.max_tokens <= window:
        return window
    n = count_message_tokens(messages)
    if n + settings.max_tokens > window:
        raise PromptTooLong(
            f"the prompt has about {n:,} tokens; with max_tokens {settings.max_tokens:,} it exceeds "
            f"{spec.label}'s context window of {window:,} tokens: use a shorter document or length"
        )
    return window
