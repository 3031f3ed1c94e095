"""Prices per model (USD per million input / output tokens), each with its source and the date it was
checked, and the providers' batch discounts. The one place prices are read.

The table is components/data/prices.json. An override file of the same shape is merged over it:
the file named by the environment variable LITM_PRICES, else ~/.config/litm-explorer/prices.json
($XDG_CONFIG_HOME respected) when it exists. It may change entries, add models, add an
`openai-compatible` section for a paid hosted endpoint, or change `batch_discount`. Local and fake
models cost 0; OpenAI-compatible models not in the table are taken as self-hosted (0); any other
unknown model has no price (None), never a guess.

Prompt caching: an entry may carry `cached_input` (USD per 1M input tokens read from the provider's
prompt cache: OpenAI's "cached input", Anthropic's "cache hits") and `cache_write` (per 1M tokens written
to it: Anthropic's 5-minute cache writes; OpenAI bills none). Cached and written tokens are part of a
call's input tokens; the rest is billed at `input`. A model without a cached rate bills them at `input`.
The batch discount applies to every part (both providers' batch pages say so).
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

from components.core.resources import package_path

DATA = package_path("data", "prices.json")
FREE_PROVIDERS = ("local", "fake")
MAX_PRICE_FILE_BYTES = 1024 * 1024  # an override file (read by core.loaders.read_bounded: regular files only)
CACHE_RATES = ("cached_input", "cache_write")  # optional per-1M rates of an entry (see the module docstring)
# the highest rate a price may have, USD per 1M tokens: far above any model's (the dearest list prices are a
# few hundred dollars); a price of 1e308 made a sweep's estimate "$inf"
MAX_PRICE = 10_000.0


def check_rate(provider: str, model: str, rate: str, value) -> float:
    """A rate of a price entry as a float from 0 to MAX_PRICE (USD per 1M tokens); one ValueError line else."""
    try:
        x = float(value)
    except (TypeError, ValueError, OverflowError):
        if rate in ("input", "output"):
            raise ValueError(
                f"price for {provider}:{model} must be numbers (USD per 1M tokens): {rate} is {value!r:.40}"
            ) from None
        raise ValueError(
            f"price for {provider}:{model}: {rate} must be a number (USD per 1M tokens), got {value!r:.40}"
        ) from None
    if not (math.isfinite(x) and 0 <= x <= MAX_PRICE):
        raise ValueError(
            f"price for {provider}:{model}: {rate} must be a number from 0 to {MAX_PRICE:,.0f} "
            f"(USD per 1M tokens), got {value!r:.40}"
        )
    return x


def override_path() -> Path | None:
    """The override file in use: $LITM_PRICES, else ~/.config/litm-explorer/prices.json if it exists."""
    named = os.environ.get("LITM_PRICES")
    if named:
        return Path(named)
    base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    path = base / "litm-explorer" / "prices.json"
    return path if path.exists() else None


def _read(path: Path) -> dict:
    """The override file, checked for its shape (check_shape): one ValueError line for whatever is wrong."""
    from components.core.loaders import read_bounded

    try:
        value = json.loads(read_bounded(Path(path), MAX_PRICE_FILE_BYTES, "a price file", ValueError))
    except RecursionError:
        raise ValueError(f"cannot read the price file {path}: its JSON nests too deep") from None
    except ValueError as exc:
        raise ValueError(
            f"cannot read the price file {path}: {str(exc).splitlines()[0] if str(exc) else exc}"
        ) from None
    check_shape(value, path)
    return value


def check_shape(value, path) -> None:
    """{"models": {provider: {model: {"input", "output", ...}}}, "batch_discount": {provider: {"factor"}},
    "date": "..."}: anything else is one ValueError line naming the place."""
    where = f"the price file {path}"
    if not isinstance(value, dict):
        raise ValueError(f"{where} must hold a JSON object")
    models = value.get("models", {})
    if not isinstance(models, dict) or not all(isinstance(m, dict) for m in models.values()):
        raise ValueError(
            f"{where}: 'models' must be an object of provider -> model -> "
            '{"input": USD, "output": USD} (per million tokens)'
        )
    discount = value.get("batch_discount", {})
    if not isinstance(discount, dict):
        raise ValueError(f"{where}: 'batch_discount' must be an object of provider -> {{\"factor\": 0.5}}")
    for provider, entry in discount.items():
        factor = entry.get("factor") if isinstance(entry, dict) else None
        if isinstance(factor, bool) or not isinstance(factor, int | float) or not 0 < factor <= 1:
            raise ValueError(f"{where}: batch_discount.{provider} needs a factor from 0 to 1 (e.g. 0.5)")
    if not isinstance(value.get("date", ""), str):
        raise ValueError(f"{where}: 'date' must be a string (e.g. \"2026-11-25\")")


def merge(table: dict, extra: dict, origin: str) -> dict:
    """`table` (provider -> model -> entry) with the entries of `extra` ({"models": ...}) laid over it."""
    out = {p: dict(models) for p, models in table.items()}
    for provider, models in (extra.get("models") or {}).items():
        for model, price in (models or {}).items():
            if not isinstance(price, dict) or not {"input", "output"} <= set(price):
                raise ValueError(
                    f"price for {provider}:{model} needs 'input' and 'output' (USD per 1M tokens)"
                )
            entry: dict[str, float | str] = {
                rate: check_rate(provider, model, rate, price[rate]) for rate in ("input", "output")
            }
            for rate in CACHE_RATES:
                if (
                    price.get(rate) is not None and price[rate] == price[rate]
                ):  # NaN (an empty grid cell): none
                    entry[rate] = check_rate(provider, model, rate, price[rate])
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
        try:
            table = merge(table, extra, f"override file {override}")
        except ValueError as exc:
            raise ValueError(f"the price file {override}: {exc}") from None
        date = str(extra.get("date", date))
    return table, date


def load_batch(path: str | os.PathLike | None = None) -> dict[str, dict]:
    """provider -> {"factor", "source", "checked"}: what a batch call costs as a share of the list price."""
    out = dict(json.loads(DATA.read_text(encoding="utf-8")).get("batch_discount", {}))
    override = Path(path) if path else override_path()
    if override:
        for provider, entry in (_read(override).get("batch_discount") or {}).items():
            out[provider] = {
                "factor": float(entry["factor"]),
                "source": entry.get("source", str(override)),
                "checked": entry.get("checked", ""),
            }
    return out


PRICES, PRICES_DATE = load_prices()
BATCH = load_batch()


def load_priced_as() -> dict[str, dict]:
    """provider -> {"as": another provider, "source", "checked"}: a provider billed at another's list
    prices (Claude on Bedrock and on Vertex AI at Anthropic's), its models looked up by anthropic_name."""
    return dict(json.loads(DATA.read_text(encoding="utf-8")).get("priced_as", {}))


PRICED_AS = load_priced_as()


def anthropic_name(model: str) -> str:
    """The Anthropic model name inside a Bedrock or Vertex id (`us.anthropic.claude-3-5-haiku-...:0` ->
    `claude-3-5-haiku-...:0`, `claude-haiku-4-5@20251001` as it is)."""
    at = model.find("claude")
    return model[at:] if at >= 0 else model


def price_of(provider: str, model: str, prices: dict | None = None) -> dict | None:
    table = (prices if prices is not None else PRICES).get(provider, {})
    if model in table:
        return table[model]
    name = model.split("/")[-1]
    best = max((m for m in table if name.startswith(m)), key=len, default=None)
    if best is None and provider in PRICED_AS:  # e.g. Claude on Bedrock: Anthropic's list price
        return price_of(PRICED_AS[provider]["as"], anthropic_name(name), prices)
    return table[best] if best else None


def batch_factor(provider: str) -> float:
    """The share of the list price a batch call costs (OpenAI and Anthropic: 0.5); 1.0 for others."""
    entry = BATCH.get(provider)
    return float(entry["factor"]) if entry else 1.0


def cost_usd(
    provider: str,
    model: str,
    input_tokens: float,
    output_tokens: float,
    prices: dict | None = None,
    batch: bool = False,
    *,
    cached_input_tokens: float = 0,
    cache_write_tokens: float = 0,
) -> float | None:
    """Dollars for one call (or a sum or mean of calls); None when the model's price is unknown.
    `cached_input_tokens` and `cache_write_tokens` are the part of `input_tokens` the provider read from
    and wrote to its prompt cache, billed at the entry's `cached_input` and `cache_write` rates (its
    `input` rate when it has none). batch=True: sent through the provider's batch interface, at
    batch_factor(provider) of every rate."""
    if provider in FREE_PROVIDERS:
        return 0.0
    price = price_of(provider, model, prices)
    if price is None:
        return 0.0 if provider == "openai-compatible" else None
    rates = {
        r: check_rate(provider, model, r, price[r])
        for r in ("input", "output", *CACHE_RATES)
        if price.get(r) is not None and (r in ("input", "output") or price[r] == price[r])
    }
    cached, written = cached_input_tokens or 0, cache_write_tokens or 0
    plain = input_tokens - cached - written
    usd = (
        plain * rates["input"]
        + cached * rates.get("cached_input", rates["input"])
        + written * rates.get("cache_write", rates["input"])
        + output_tokens * rates["output"]
    ) / 1_000_000
    usd = usd * batch_factor(provider) if batch else usd
    if not math.isfinite(usd) and all(
        math.isfinite(x) for x in (input_tokens, output_tokens, cached, written)
    ):
        raise ValueError(f"the cost of {provider}:{model} is not a finite number: check its price")
    return usd


def price_rows(prices: dict | None = None) -> list[dict]:
    """Every priced model as rows (provider, model, input, output, source, checked), for tables."""
    table = prices if prices is not None else PRICES
    return [
        {
            "provider": p,
            "model": m,
            "input": e["input"],
            "output": e["output"],
            "cached_input": e.get("cached_input"),
            "cache_write": e.get("cache_write"),
            "source": e.get("source", ""),
            "checked": e.get("checked", ""),
        }
        for p, models in table.items()
        for m, e in sorted(models.items())
    ]


def reload() -> None:
    """Re-read the table (after editing the file or changing LITM_PRICES)."""
    global PRICES, PRICES_DATE, BATCH
    PRICES, PRICES_DATE = load_prices()
    BATCH = load_batch()
