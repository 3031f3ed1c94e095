"""The models the app can call (the sidebar's choice), the bundled local model's status, list prices,
and how long a local call takes on this machine, measured from the runs it made.

`Choice` is what live runs use: a ModelSpec and the key typed in this session (None when the provider
needs none or the server's environment has it). The key lives in the session only.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from functools import lru_cache

import pandas as pd

from components.providers.base import ModelSpec, ProviderError
from components.providers.localmodel import canonical
from components.providers.pricing import BATCH, MAX_PRICE, PRICES, PRICES_DATE, cost_usd, price_rows
from webapp.services import views
from webapp.services.names import model_title

__all__ = [
    "BATCH",
    "DEFAULT_MODELS",
    "KEY_ENV",
    "LABELS",
    "MAX_PRICE",
    "NONE",
    "PRICES",
    "PRICES_DATE",
    "Choice",
    "ModelSpec",
    "ProviderError",
    "Speed",
    "cost_usd",
    "default_provider",
    "duration",
    "known_models",
    "local_status",
    "model_title",
    "price_rows",
    "providers",
    "speed",
]

NONE = "none"  # no model available: prompts only
LABELS = {
    NONE: "none (prompts only)",
    "local": "local (bundled model, no key)",
    "openai": "OpenAI",
    "anthropic": "Anthropic",
    "openai-compatible": "OpenAI-compatible server",
}
DEFAULT_MODELS = {
    "local": "qwen2.5-coder-0.5b-instruct",
    "openai": "gpt-4o-mini",
    "anthropic": "claude-3-5-haiku-latest",
    "openai-compatible": "default",
    NONE: "",
}
KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}


@dataclass(frozen=True)
class Choice:
    spec: ModelSpec
    api_key: str | None  # None: the provider needs none, or the server environment has it


@lru_cache(maxsize=1)
def local_status() -> tuple[bool, str]:
    """(available, title or the reason it is not): llama-cpp-python and the bundled model installed."""
    try:
        if importlib.util.find_spec("llama_cpp") is None:
            return False, "llama-cpp-python is not installed"
        from components.providers import local  # noqa: F401
        from components.providers.localmodel import find_model

        found = find_model("")
        return True, str(getattr(found, "title", found))
    except Exception as e:  # any failure means "not available"
        return False, str(e).splitlines()[0][:160] if str(e) else type(e).__name__


def providers() -> list[str]:
    first = "local" if local_status()[0] else NONE
    return [first, "openai", "anthropic", "openai-compatible"]


def default_provider() -> str:
    return providers()[0]


def known_models(provider: str) -> list[str]:
    return sorted(PRICES.get(provider, {}))


def key_in_environment(provider: str) -> str:
    """The environment variable holding the provider's key on the server, or ''."""
    env = KEY_ENV.get(provider)
    return env if env and os.environ.get(env) else ""


# --- how long a local call takes here ----------------------------------------------------------------


@dataclass(frozen=True)
class Speed:
    """A local model's measured speed on this machine: prompt tokens per second of model time over `n`
    stored runs (answer tokens and load time folded in), and where those runs are."""

    rate: float
    n: int
    where: str  # "your runs" or "the shipped runs"

    def seconds(self, input_tokens: int) -> float:
        return input_tokens / self.rate

    @property
    def here(self) -> bool:
        """Measured on this machine (this user's run store); else on the machine that made the shipped runs."""
        return self.where == HERE

    def text(self) -> str:
        """'about 120 prompt tokens/s, measured over 250 runs in your run store'."""
        return f"about {self.rate:,.0f} prompt tokens/s, measured over {self.n:,} runs in {self.where}"


HERE, SHIPPED = "your run store", "the runs shipped with the app (made on another machine)"


MIN_TOKENS = 500  # shorter prompts measure the call's overhead more than the model's reading


def measure(trials: pd.DataFrame) -> float | None:
    """Prompt tokens per second of model time: all input tokens over all seconds, prompts of at least
    MIN_TOKENS tokens (a call answered from the cache keeps the time it took when it was made)."""
    tokens = pd.to_numeric(trials["input_tokens"], errors="coerce")
    seconds = pd.to_numeric(trials["latency_s"], errors="coerce")
    ok = (tokens >= MIN_TOKENS) & (seconds > 0)
    if ok.sum() < 3:
        return None
    return float(tokens[ok].sum() / seconds[ok].sum())


@views.kept  # the sidebar asks on every rerun of every page: read once per store version
def speed(model: str, trials: pd.DataFrame) -> Speed | None:
    """How fast the local `model` has read prompts, from the stored trials (`trials` as
    services.stores.load_all gives them): this user's runs (this machine: `Speed.here`) first, else the
    shipped runs, which were made on another machine (callers say so: it is a guess here)."""
    if trials is None or trials.empty or "model" not in trials:
        return None
    try:
        name = f"local:{canonical(model)}"
    except Exception:  # a path or an unknown name: nothing measured
        return None
    same = trials[trials["model"].astype(str) == name]
    shipped = same["shipped"].astype(bool) if "shipped" in same else pd.Series(False, index=same.index)
    for part, where in ((same[~shipped], HERE), (same[shipped], SHIPPED)):
        rate = measure(part)
        if rate is not None:
            return Speed(rate, len(part), where)
    return None


def duration(seconds: float) -> str:
    """'45 s', '3 min 20 s', '2 h 10 min'."""
    s = max(0, int(round(seconds)))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s" if s < 600 else f"{s // 60} min"
    return f"{s // 3600} h {s % 3600 // 60} min"
