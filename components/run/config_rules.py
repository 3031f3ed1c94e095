"""The rules table of a sweep config: one `Rule` per key of a [sweep] table (`RULES`) and of a
[[sweep.models]] table (`MODEL_RULES`), walked in order by SweepConfig.from_dict and ModelConfig.from_dict;
the keys each table allows, and the model's own record (`ModelConfig`).

A new key: add it to SWEEP_KEYS or MODEL_KEYS and give it a Rule here (its check, default, message).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any

from components.core.tokens import ENCODINGS
from components.providers.base import PROVIDERS, BadBaseUrl, ModelSpec, check_base_url
from components.run.config_read import (
    Reading,
    Rule,
    a_list,
    check_bounded,
    check_choice,
    check_positive,
    check_table,
    check_text,
    check_whole,
    fail,
    positive_int,
    read_rules,
    refuse_unknown,
)
from components.run.config_secrets import check_key_env, check_url_has_no_key
from components.strategies import STRATEGIES

SWEEP_KEYS = {
    "name",
    "tasks",
    "n_tasks",
    "lengths",
    "positions",
    "positions_tokens",
    "documents",
    "gold_index",
    "strategies",
    "params",
    "concurrency",
    "models",
    "budget",
    "encoding",
    "max_tokens",
    "seed",
    "max_retry_after",
    "fail_fast",
    "mode",
    "measure",
    "order",
    "design",
    "contexts",
    "questions_per_context",
    "n",
    "metric",  # "judge": an LLM judge scores each answer ([sweep.judge], run/judging.py)
    "judge",
    "samples",  # repeated samples: each a trial with its index (run/plan.py)
}  # the multi-question design: run/multiq.py
MODEL_KEYS = {
    "provider",
    "model",
    "base_url",
    "api_key_env",
    "context_window",
    "max_tokens",
    "requests_per_minute",
    "timeout",
    "max_retries",
    "cache_prefix",
    "temperature",
    "seed",
}
BUDGET_KEYS = {"max_calls", "max_usd"}
MODES = ("live", "batch")  # batch: the providers' batch interfaces (components/run/batch.py), half price
BATCH_PROVIDERS = ("openai", "openai-compatible", "anthropic", "gemini")
# answer: generate and score the answer; likelihood: score the gold answer's log-probability without
# generating (components/run/measure.py); both: the two; attention: where the bundled model looks, by page
MEASURES = ("answer", "likelihood", "both", "attention")
# the order trials run in (components/run/plan.py: ordered; the order never changes a result, only
# how fast it comes): "prefix" runs each question's trials together, sorted by their first prompt, so
# that consecutive prompts share the longest prefix (a local model's KV cache, an API's prompt cache) and
# a stopped sweep holds whole questions; "plan": plan order (model, strategy, params, cell, task);
# "auto" (the default): prefix when the sweep has a local model, else plan. Sorting builds every first
# prompt before the sweep starts (measured 1.75 s for 2,000 tiny trials on a busy machine: a quarter of
# the runner bench's sweep against a fast loopback server, nothing against a model's seconds a call)
ORDERS = ("auto", "prefix", "plan")

# a model's settings, checked when the config is read (one line each): a timeout of "abc" failed every trial
# with a TypeError, -1 sent 612 requests, 1e-300 requests per minute waited forever
RPM_BOUNDS = (0.01, 1_000_000.0)  # requests per minute: one every 100 minutes at the least
TIMEOUT_BOUNDS = (0.001, 86_400.0)  # seconds for one whole answer (providers/transport.py), up to a day
MAX_RETRIES = 10  # the SDK's own retries of one call


@dataclass(frozen=True)
class ModelConfig:
    provider: str
    model: str
    base_url: str | None = None
    api_key_env: str | None = None
    context_window: int | None = None
    max_tokens: int | None = None
    requests_per_minute: float | None = None
    timeout: float | None = None
    max_retries: int | None = None
    cache_prefix: bool | None = None  # Anthropic: mark the shared prefix for prompt caching (cache_control)
    temperature: float | None = None  # sampling temperature (None: 0, greedy)
    seed: int | None = None  # the model's seed, where the provider takes one (None: the sweep's seed)

    @property
    def label(self) -> str:
        return f"{self.provider}:{self.model}"

    @property
    def spec(self) -> ModelSpec:
        """The ModelSpec of this model: every ModelSpec field, by name, from this config."""
        return ModelSpec(**{f.name: getattr(self, f.name) for f in fields(ModelSpec)})

    @classmethod
    def from_dict(cls, d: dict, i: int) -> ModelConfig:
        """A model from its [[sweep.models]] table (the i-th): every key checked by its rule in MODEL_RULES."""
        where = f"models[{i}]"
        if not isinstance(d, dict):
            fail(f"{where} must be a table with provider and model")
        refuse_unknown(where, d, MODEL_KEYS)
        read_rules(MODEL_RULES, d, where)
        return cls(**d)


def _budget(rule: Rule, value, at: Reading) -> dict:
    value = check_table(rule, value, at)
    refuse_unknown("[sweep.budget]", value, BUDGET_KEYS)
    return value


def _design(rule: Rule, value, at: Reading) -> dict:
    """The multi-question design's fields (its own grid: K and Q instead of lengths and positions), or {}."""
    if not any(k in at.table for k in ("design", "contexts", "questions_per_context", "n")):
        return {}
    from components.run.multiq import check_design

    return check_design(at.table, fail)


def grid_of(table: dict, got: dict) -> str:
    """Which grid a [sweep] table gives: "design" (multi-question, got["design"]), "documents" (documents and
    gold_index, LITM §3.1) or "tokens" (lengths and positions, R&R §4.1); both of the last two fails."""
    if got["design"]:
        return "design"
    by_documents = table.get("documents") is not None or table.get("gold_index") is not None
    by_tokens = any(table.get(k) is not None for k in ("lengths", "positions", "positions_tokens"))
    if by_documents and by_tokens:
        fail(
            "give either lengths and positions (tokens, R&R §4.1) or documents and gold_index "
            "(Lost in the Middle §3.1), not both"
        )
    return "documents" if by_documents else "tokens"


def _grid_list(grid: str, each: Callable[[Any, dict], None]):
    """The check of a grid key: [] unless the table's grid is `grid`, else a non-empty list of at most MAX_LIST
    values (the rule's example says what a good list looks like), each value checked by `each(x, got)`."""

    def check(rule: Rule, value, at: Reading) -> list:
        if grid_of(at.table, at.got) != grid:
            return []
        a_list(rule.key, value, rule.example)
        for x in value:
            each(x, at.got)
        return value

    return check


def _length(x, got) -> None:
    positive_int("every length", x)


def _position(x, got) -> None:
    if isinstance(x, bool) or not isinstance(x, int | float) or not math.isfinite(x) or x < 0:
        fail(
            f"a position must be 0 or more: a fraction from 0 to 1 of the length, or a whole "
            f"number of tokens inside every length, got {x!r}"
        )
    shortest = min(got["lengths"])
    if x > 1 and (x != int(x) or x > shortest):
        fail(
            f"position {x:g} counts tokens (it is above 1), so it must be a whole number no larger "
            f"than the shortest length ({shortest:,}); for a fraction give 0 to 1"
        )


def _positions(rule: Rule, value, at: Reading) -> list:
    """`positions`, unless the table gives `positions_tokens` instead (then [], and both together fail)."""
    if at.table.get("positions_tokens") is not None:
        if value is not None:
            fail(
                "give either positions (fractions, or tokens inside every length) or positions_tokens, not both"
            )
        return []
    return _grid_list("tokens", _position)(rule, value, at)


EVERY = re.compile(r"every\s+(\d+)")


def token_positions(spec: str | tuple[int, ...], length: int) -> tuple[int, ...]:
    """The token positions of `positions_tokens` inside a document of `length` tokens, in order: "every N"
    gives 0, N, 2N, ... up to the length (the length itself included when N divides it), a list its values
    up to the length."""
    if isinstance(spec, str):
        found = EVERY.fullmatch(spec.strip())
        step = int(found.group(1)) if found else 0
        return tuple(range(0, length + 1, step)) if step else ()
    return tuple(x for x in spec if x <= length)


def _positions_tokens(rule: Rule, value, at: Reading) -> str | tuple[int, ...] | None:
    """ "every N" (N a whole number of tokens, at least 2) or a list of whole numbers of tokens (0, or 2 or
    more: a position of 1 would read as the fraction 1, the end), each length taking those up to itself;
    every length must take at least one."""
    if value is None or grid_of(at.table, at.got) != "tokens":
        return None
    if isinstance(value, str):
        found = EVERY.fullmatch(value.strip())
        if not found or int(found.group(1)) < 2:
            rule.fail(value, at)
        return value.strip()
    a_list(rule.key, value, ' of token counts, e.g. [0, 10000, 20000], or "every 10000"')
    for x in value:
        if isinstance(x, bool) or not isinstance(x, int) or x < 0 or x == 1:
            fail(
                f"every position of positions_tokens must be a whole number of tokens, 0 or from 2, got {x!r}"
            )
    if len(set(value)) != len(value):
        fail("positions_tokens lists a position twice")
    for length in at.got["lengths"]:
        if not token_positions(tuple(value), length):
            fail(
                f"length {length:,} takes no position of positions_tokens (each length takes those up to itself)"
            )
    return tuple(value)


def _documents(x, got) -> None:
    positive_int("every number of documents", x)


def _gold_index(x, got) -> None:
    if isinstance(x, bool) or not isinstance(x, int):
        fail(f"a gold_index must be a whole number (0 is the first document, -1 the last), got {x!r}")


def _strategies(rule: Rule, value, at: Reading) -> list:
    a_list(rule.key, value, rule.example)
    for name in value:
        if not isinstance(name, str) or name not in STRATEGIES:
            fail(f"unknown strategy {name!r}; choose from {', '.join(STRATEGIES)}")
    return value


def _models(rule: Rule, value, at: Reading) -> tuple[ModelConfig, ...]:
    if not isinstance(value, list) or not value:
        rule.fail(value, at)
    a_list(rule.key, value, "")
    return tuple(ModelConfig.from_dict(m, i) for i, m in enumerate(value))


_ONE_OF = "{key} must be one of {choices}, got {got}"
METRIC_CHOICES = ("judge",)  # [sweep] metric: the strategy's own when left out


def _judge(rule: Rule, value, at: Reading) -> ModelConfig | None:
    """[sweep.judge]: the judge's model, a table of the same keys as a [[sweep.models]] table."""
    if value is None:
        return None
    if isinstance(value, ModelConfig):
        return value
    if not isinstance(value, dict) or not value:
        rule.fail(value, at)
    refuse_unknown("judge", value, MODEL_KEYS)
    read_rules(MODEL_RULES, value, "judge")
    return ModelConfig(**value)


RULES: tuple[Rule, ...] = (
    Rule("name", check_text, message="name is missing", keep=str.strip),
    Rule("tasks", check_text, message="tasks (a task file path) is missing"),
    Rule("design", _design, field=None),
    Rule(
        "documents",
        _grid_list("documents", _documents),
        example=" of document counts, e.g. [10, 20, 30]",
        keep=tuple,
    ),
    Rule(
        "gold_index",
        _grid_list("documents", _gold_index),
        example=" of 0-based indices, e.g. [0, 4, 9] (-1 is the last)",
        keep=tuple,
    ),
    Rule("lengths", _grid_list("tokens", _length), example=" of token counts, e.g. [2000, 4000]", keep=tuple),
    Rule("positions", _positions, example=", e.g. [0.0, 0.5, 1.0]", keep=tuple),
    # R&R §4.1's grid in one sweep: the answer at absolute token positions, each length taking those up to
    # itself (SweepConfig.positions_for)
    Rule(
        "positions_tokens",
        _positions_tokens,
        optional=True,
        message='{key} must be "every N" (N a whole number of tokens, at least 2) or a list of token counts, '
        "got {shown}",
    ),
    Rule("strategies", _strategies, example=f" of {', '.join(STRATEGIES)}", keep=tuple),
    Rule("models", _models, message="at least one [[sweep.models]] table is needed"),
    Rule(
        "params",
        check_table,
        default={},
        message="{key} must be a table, e.g. {{ r = 1000, k = 3 }}, got {shown}",
        keep=dict,
    ),
    Rule(
        "budget",
        _budget,
        default={},
        field=None,
        message="[sweep.budget] must be a table, e.g. {{ max_usd = 5.0, max_calls = 1000 }}",
    ),
    Rule(
        "budget.max_usd",
        check_bounded,
        low=0,
        optional=True,
        message="{key} must be a number of dollars, got {got}",
    ),
    Rule(
        "encoding",
        check_choice,
        default="cl100k_base",
        choices=ENCODINGS,
        message="{key} must be one of {choices}",
    ),
    Rule("seed", check_whole, default=0, optional=True, message="{key} must be a whole number, got {got}"),
    Rule(
        "max_retry_after",
        check_bounded,
        default=60.0,
        low=0,
        high=86400,
        keep=float,
        message="{key} must be a number of seconds from {low} to {high}, got {got}",
    ),
    Rule(
        "fail_fast",
        check_whole,
        default=5,
        low=0,
        message="{key} must be a whole number of trials (0: never stop early), got {got}",
    ),
    Rule("n_tasks", check_positive, optional=True),
    Rule("concurrency", check_positive, default=8),
    Rule("budget.max_calls", check_positive, optional=True),
    Rule("max_tokens", check_positive, optional=True),
    Rule("mode", check_choice, default="live", choices=MODES, message=_ONE_OF),
    Rule("measure", check_choice, default="answer", choices=MEASURES, message=_ONE_OF),
    Rule("order", check_choice, default="auto", choices=ORDERS, message=_ONE_OF),
    Rule("metric", check_choice, optional=True, choices=METRIC_CHOICES, message=_ONE_OF),
    Rule(
        "judge",
        _judge,
        optional=True,
        message="[sweep.judge] must be a table with provider and model, e.g. "
        '{{ provider = "openai", model = "gpt-4.1-mini" }}',
    ),
    Rule(
        "samples",
        check_whole,
        default=1,
        low=1,
        high=100,
        message="{key} must be a whole number from {low} to {high}, got {got}",
    ),
)
RULE: dict[str, Rule] = {rule.key: rule for rule in RULES}


def _base_url(rule: Rule, value, at: Reading) -> str | None:
    """An openai-compatible model's address is needed; any address is checked (check_base_url)."""
    if at.got["provider"] == "openai-compatible" and not value:
        fail(f"{at.where}: an openai-compatible model needs base_url (e.g. http://127.0.0.1:8000/v1)")
    if value is not None:
        try:
            check_base_url(value, at.name(rule.key), strip=False)
        except BadBaseUrl as exc:
            fail(str(exc))
        check_url_has_no_key(at.name(rule.key), value)
    return value


def _key_env(rule: Rule, value, at: Reading) -> str:
    check_key_env(at.name(rule.key), value)
    return value


def _cache_prefix(rule: Rule, value, at: Reading) -> bool:
    if not isinstance(value, bool):
        rule.fail(value, at)
    if value and at.got["provider"] not in ("anthropic", "bedrock", "vertex"):  # Claude, wherever served
        fail(
            f"{at.name(rule.key)} marks a prefix for Anthropic's prompt caching; OpenAI caches prompts of "
            "1,024+ tokens by itself (leave it out)"
        )
    return value


_FROM_TO = "{key} must be a number from {low:,} to {high:,} ({unit}), got {shown}"

MODEL_RULES: tuple[Rule, ...] = (
    Rule(
        "provider",
        check_choice,
        choices=PROVIDERS,
        message="{where}: provider must be one of {choices}, got {got}",
    ),
    Rule("model", check_text, message="{where}: model name is missing"),
    Rule("context_window", check_positive, optional=True),
    Rule("max_tokens", check_positive, optional=True),
    Rule("base_url", _base_url),
    Rule("api_key_env", _key_env, optional=True),
    Rule(
        "requests_per_minute",
        check_bounded,
        optional=True,
        low=RPM_BOUNDS[0],
        high=RPM_BOUNDS[1],
        message=_FROM_TO.replace("{unit}", "requests per minute"),
    ),
    Rule(
        "timeout",
        check_bounded,
        optional=True,
        low=TIMEOUT_BOUNDS[0],
        high=TIMEOUT_BOUNDS[1],
        message=_FROM_TO.replace("{unit}", "seconds for one whole answer"),
    ),
    Rule(
        "max_retries",
        check_whole,
        optional=True,
        low=0,
        high=MAX_RETRIES,
        message="{key} must be a whole number from {low} to {high} (the retries of one call), got {shown}",
    ),
    Rule("cache_prefix", _cache_prefix, optional=True, message="{key} must be true or false, got {shown}"),
    Rule(
        "temperature",
        check_bounded,
        optional=True,
        low=0,
        high=2,
        message="{key} must be a number from {low} to {high}, got {shown}",
    ),
    Rule("seed", check_whole, optional=True, message="{key} must be a whole number, got {shown}"),
)
