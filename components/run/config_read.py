"""How a table of a sweep config is read: one `Rule` per key (its default, check, message and bounds), walked
in order by `read_rules`; the checks the rules share; `fail`, the one way a bad config ends (one line).

The rules themselves are components/run/config_rules.py; SweepConfig is components/run/config.py.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# the size of each list of a sweep's grid (lengths, positions, documents, gold_index, models, strategies, a
# param's values), far above what a study needs (the shipped runs have at most 6 values a list); the trials
# of the whole plan are bounded by config_checks.MAX_TRIALS
MAX_LIST = 1_000


def fail(msg: str):
    raise ValueError(f"sweep config: {msg}")


def refuse_unknown(where: str, d: dict, allowed: set) -> None:
    extra = set(d) - allowed
    if any("key" in k and k != "api_key_env" for k in extra):
        fail(
            f"{where}: never put an API key in a config file; name its environment variable with api_key_env"
        )
    if extra:
        fail(f"{where}: unknown key(s) {', '.join(sorted(extra))} (allowed: {', '.join(sorted(allowed))})")


def shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def a_list(key: str, value, example: str) -> list:
    """A non-empty list of at most MAX_LIST values, else one line."""
    if not isinstance(value, list) or not value:
        fail(f"{key} must be a non-empty list{example}")
    if len(value) > MAX_LIST:
        fail(f"{key} has {len(value):,} values; the limit is {MAX_LIST:,} a list (split the sweep)")
    return value


def positive_int(where: str, value, allow_none=False):
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        fail(f"{where} must be a positive whole number, got {value!r}")
    return value


@dataclass
class Reading:
    """A table being read by its rules: the table, where it is in the config ("": the [sweep] table, else e.g.
    "models[0]"), and the values its rules have given so far (key -> value)."""

    table: dict
    where: str = ""
    got: dict = field(default_factory=dict)

    def name(self, key: str) -> str:
        """A key as a message names it: "budget.max_usd", "models[0].timeout"."""
        return f"{self.where}.{key}" if self.where else key


def _plain(x):
    return int(x) if x is not None and x == int(x) else x


@dataclass(frozen=True)
class Rule:
    """One key of a table: its default when left out, its check, the message of a bad value or an example of
    a good one, its bounds or choices, and how the config keeps it.

    `check(rule, value, reading)` returns the value or fails with one line (`rule.fail`). A message fills in
    {key} (as the config names it), {where}, {got} (the value's repr), {shown} (that repr cut to 60
    characters), {low}, {high} and {choices}. A key "budget.x" is x in the [sweep.budget] table."""

    key: str
    check: Callable[[Rule, Any, Reading], Any]
    default: Any = None
    message: str = "{key} must be a positive whole number, got {got}"
    example: str = ""  # what a good list looks like, after "{key} must be a non-empty list"
    low: float | None = None
    high: float | None = None
    choices: tuple = ()
    optional: bool = False  # None is a value (left out when the default is None)
    keep: Callable[[Any], Any] = lambda value: value  # the value as the config's field holds it
    field: str | None = ""  # the SweepConfig field ("": the key's last part; None: no field of its own)

    def __post_init__(self):
        if self.field == "":
            object.__setattr__(self, "field", self.key.rsplit(".", 1)[-1])

    def read(self, at: Reading):
        section = at.got["budget"] if self.key.startswith("budget.") else at.table
        value = section.get(self.key.rsplit(".", 1)[-1], self.default)
        if value is None and self.optional:
            return None
        return self.check(self, value, at)

    def fail(self, value, at: Reading) -> None:
        fail(
            self.message.format(
                key=at.name(self.key),
                where=at.where,
                got=repr(value),
                shown=shown(value),
                low=_plain(self.low),
                high=_plain(self.high),
                choices=", ".join(self.choices),
            )
        )


def read_rules(rules: tuple[Rule, ...], table: dict, where: str = "") -> dict:
    """Every rule's value, in order (key -> value); the first bad value fails with one line."""
    at = Reading(table, where)
    for rule in rules:
        at.got[rule.key] = rule.read(at)
    return at.got


def check_text(rule: Rule, value, at: Reading) -> str:
    """A string that is not blank."""
    if not isinstance(value, str) or not value.strip():
        rule.fail(value, at)
    return value


def check_positive(rule: Rule, value, at: Reading) -> int:
    return positive_int(at.name(rule.key), value)


def check_whole(rule: Rule, value, at: Reading) -> int:
    """A whole number (not a bool), from `low` and to `high` where the rule has them."""
    if (
        isinstance(value, bool)
        or not isinstance(value, int)
        or (rule.low is not None and value < rule.low)
        or (rule.high is not None and value > rule.high)
    ):
        rule.fail(value, at)
    return value


def check_bounded(rule: Rule, value, at: Reading) -> float:
    """A number (not a bool) from `low` and to `high` where the rule has them (NaN and infinity never)."""
    ok = not isinstance(value, bool) and (
        isinstance(value, int) or isinstance(value, float) and math.isfinite(value)
    )
    if not ok or (rule.low is not None and value < rule.low) or (rule.high is not None and value > rule.high):
        rule.fail(value, at)
    return value


def check_choice(rule: Rule, value, at: Reading):
    if not any(value == c for c in rule.choices):
        rule.fail(value, at)
    return value


def check_table(rule: Rule, value, at: Reading) -> dict:
    """A table; anything else (0, false, "", a list) fails with the key named."""
    if not isinstance(value, dict):
        rule.fail(value, at)
    return value
