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


# A strategy asks for completions through this; the runner supplies it (cache, limits, retries).
Ask = Callable[[Prompt], Awaitable[Completion]]
