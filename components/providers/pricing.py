"""Prices per model (USD per million input / output tokens), dated and editable.

The table is components/data/prices.json; a JSON file of the same shape named by the environment
variable LITM_PRICES overrides entries of it (and may add models or an `openai-compatible` section
for a paid hosted endpoint). Local and fake models cost 0; OpenAI-compatible models not in the table
are taken as self-hosted (0); any other unknown model has no price (None), never a guess.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data" / "prices.json"
FREE_PROVIDERS = ("local", "fake")


def load_prices(path: str | os.PathLike | None = None) -> tuple[dict[str, dict[str, dict]], str]:
    """(provider -> model -> {"input", "output"}, date), the shipped table merged with LITM_PRICES."""
    base = json.loads(DATA.read_text(encoding="utf-8"))
    table = {p: dict(models) for p, models in base.get("models", {}).items()}
    date = str(base.get("date", ""))
    override = path or os.environ.get("LITM_PRICES")
    if override:
        try:
            extra = json.loads(Path(override).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ValueError(f"cannot read the price file {override}: {exc}") from None
        for provider, models in (extra.get("models") or {}).items():
            for model, price in models.items():
                if not {"input", "output"} <= set(price):
                    raise ValueError(f"price for {provider}:{model} needs 'input' and 'output' (USD per 1M tokens)")
                table.setdefault(provider, {})[model] = {"input": float(price["input"]),
                                                         "output": float(price["output"])}
        date = str(extra.get("date", date))
    return table, date


PRICES, PRICES_DATE = load_prices()


def price_of(provider: str, model: str, prices: dict | None = None) -> dict | None:
    table = (prices if prices is not None else PRICES).get(provider, {})
    if model in table:
        return table[model]
    name = model.split("/")[-1]
    best = max((m for m in table if name.startswith(m)), key=len, default=None)
    return table[best] if best else None


BATCH_DISCOUNT = 0.5  # OpenAI's Batch API and Anthropic's Message Batches bill half the list price


def cost_usd(provider: str, model: str, input_tokens: int, output_tokens: int,
             prices: dict | None = None, batch: bool = False) -> float | None:
    """Dollars for one call (or a sum of calls); None when the model's price is unknown. batch=True:
    sent through the provider's batch interface, at half the list price (both providers' batch
    pricing: https://openai.com/api/pricing, https://docs.anthropic.com/en/docs/about-claude/pricing)."""
    if provider in FREE_PROVIDERS:
        return 0.0
    price = price_of(provider, model, prices)
    if price is None:
        return 0.0 if provider == "openai-compatible" else None
    usd = (input_tokens * price["input"] + output_tokens * price["output"]) / 1_000_000
    return usd * BATCH_DISCOUNT if batch else usd


def reload() -> None:
    """Re-read the table (after editing the file or changing LITM_PRICES)."""
    global PRICES, PRICES_DATE
    PRICES, PRICES_DATE = load_prices()
