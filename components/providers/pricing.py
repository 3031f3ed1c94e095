"""Prices per model (USD per million input / output tokens), each with its source and the date it was
checked, and the providers' batch discounts. The one place prices are read.

The table is components/data/prices.json. An override file of the same shape is merged over it:
the file named by the environment variable LITM_PRICES, else ~/.config/litm-explorer/prices.json
($XDG_CONFIG_HOME respected) when it exists. It may change entries, add models, add an
`openai-compatible` section for a paid hosted endpoint, or change `batch_discount`. Local and fake
models cost 0; OpenAI-compatible models not in the table are taken as self-hosted (0); any other
unknown model has no price (None), never a guess.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from components.core.resources import package_path

DATA = package_path("data", "prices.json")
FREE_PROVIDERS = ("local", "fake")


def override_path() -> Path | None:
    """The override file in use: $LITM_PRICES, else ~/.config/litm-explorer/prices.json if it exists."""
    named = os.environ.get("LITM_PRICES")
    if named:
        return Path(named)
    base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    path = base / "litm-explorer" / "prices.json"
    return path if path.exists() else None


def _read(path: Path) -> dict:
    try:
        value = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"cannot read the price file {path}: {exc}") from None
    if not isinstance(value, dict):
        raise ValueError(f"the price file {path} must hold a JSON object")
    return value


def merge(table: dict, extra: dict, origin: str) -> dict:
    """`table` (provider -> model -> entry) with the entries of `extra` ({"models": ...}) laid over it."""
    out = {p: dict(models) for p, models in table.items()}
    for provider, models in (extra.get("models") or {}).items():
        for model, price in (models or {}).items():
            if not isinstance(price, dict) or not {"input", "output"} <= set(price):
                raise ValueError(f"price for {provider}:{model} needs 'input' and 'output' (USD per 1M tokens)")
            try:
                entry = {"input": float(price["input"]), "output": float(price["output"])}
            except (TypeError, ValueError):
                raise ValueError(f"price for {provider}:{model} must be numbers (USD per 1M tokens)") from None
            if entry["input"] < 0 or entry["output"] < 0:
                raise ValueError(f"price for {provider}:{model} cannot be negative")
            entry["source"] = str(price.get("source") or origin)
            entry["checked"] = str(price.get("checked") or extra.get("date") or "")
            out.setdefault(provider, {})[model] = entry
    return out


def load_prices(path: str | os.PathLike | None = None) -> tuple[dict[str, dict[str, dict]], str]:
    """(provider -> model -> {"input", "output", "source", "checked"}, date): the shipped table merged
    with the override file (`path`, else override_path())."""
    base = json.loads(DATA.read_text(encoding="utf-8"))
    table = {p: dict(models) for p, models in base.get("models", {}).items()}
    date = str(base.get("date", ""))
    override = Path(path) if path else override_path()
    if override:
        extra = _read(override)
        table = merge(table, extra, f"override file {override}")
        date = str(extra.get("date", date))
    return table, date


def load_batch(path: str | os.PathLike | None = None) -> dict[str, dict]:
    """provider -> {"factor", "source", "checked"}: what a batch call costs as a share of the list price."""
    out = dict(json.loads(DATA.read_text(encoding="utf-8")).get("batch_discount", {}))
    override = Path(path) if path else override_path()
    if override:
        for provider, entry in (_read(override).get("batch_discount") or {}).items():
            out[provider] = {"factor": float(entry["factor"]), "source": entry.get("source", str(override)),
                             "checked": entry.get("checked", "")}
    return out


PRICES, PRICES_DATE = load_prices()
BATCH = load_batch()


def price_of(provider: str, model: str, prices: dict | None = None) -> dict | None:
    table = (prices if prices is not None else PRICES).get(provider, {})
    if model in table:
        return table[model]
    name = model.split("/")[-1]
    best = max((m for m in table if name.startswith(m)), key=len, default=None)
    return table[best] if best else None


def batch_factor(provider: str) -> float:
    """The share of the list price a batch call costs (OpenAI and Anthropic: 0.5); 1.0 for others."""
    entry = BATCH.get(provider)
    return float(entry["factor"]) if entry else 1.0


def cost_usd(provider: str, model: str, input_tokens: int, output_tokens: int,
             prices: dict | None = None, batch: bool = False) -> float | None:
    """Dollars for one call (or a sum of calls); None when the model's price is unknown. batch=True: sent
    through the provider's batch interface, at batch_factor(provider) of the list price."""
    if provider in FREE_PROVIDERS:
        return 0.0
    price = price_of(provider, model, prices)
    if price is None:
        return 0.0 if provider == "openai-compatible" else None
    usd = (input_tokens * price["input"] + output_tokens * price["output"]) / 1_000_000
    return usd * batch_factor(provider) if batch else usd


def price_rows(prices: dict | None = None) -> list[dict]:
    """Every priced model as rows (provider, model, input, output, source, checked), for tables."""
    table = prices if prices is not None else PRICES
    return [{"provider": p, "model": m, "input": e["input"], "output": e["output"],
             "source": e.get("source", ""), "checked": e.get("checked", "")}
            for p, models in table.items() for m, e in sorted(models.items())]


def reload() -> None:
    """Re-read the table (after editing the file or changing LITM_PRICES)."""
    global PRICES, PRICES_DATE, BATCH
    PRICES, PRICES_DATE = load_prices()
    BATCH = load_batch()
