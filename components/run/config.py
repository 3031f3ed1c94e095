"""Sweep configuration (TOML): what a sweep is, read and checked, and the size of its plan counted.

A sweep is task x cell x strategy x model. Every key of a [sweep] table is read by its rule in `RULES`
(and of a [[sweep.models]] table in `MODEL_RULES`): its default, its check, its bounds and the one line a
bad value gets; `CHECKS` then read several keys at once. The plan itself is components/run/plan.py and
the cost estimate components/run/estimate.py.
"""

from __future__ import annotations

import json
import math
import re
import tomllib
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from functools import lru_cache
from pathlib import Path
from typing import Any

from components.core.resources import sample_path
from components.core.tokens import ENCODINGS
from components.providers.base import PROVIDERS, BadBaseUrl, ModelSpec, Settings, check_base_url
from components.strategies import STRATEGIES, ParamError
from components.tasks.squad import NAMES as TASK_NAMES

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
}
BUDGET_KEYS = {"max_calls", "max_usd"}
MAX_CONFIG_BYTES = 1024 * 1024  # a sweep config file (a few hundred bytes in practice)
MODES = ("live", "batch")  # batch: the providers' batch interfaces (components/run/batch.py), half price
BATCH_PROVIDERS = ("openai", "openai-compatible", "anthropic")
# answer: generate and score the answer; likelihood: score the gold answer's log-probability without
# generating (components/run/measure.py); both: the two
MEASURES = ("answer", "likelihood", "both")
# the order trials run in (components/run/plan.py: ordered; the order never changes a result, only
# how fast it comes): "prefix" runs each question's trials together, sorted by their first prompt, so
# that consecutive prompts share the longest prefix (a local model's KV cache, an API's prompt cache) and
# a stopped sweep holds whole questions; "plan": plan order (model, strategy, params, cell, task);
# "auto" (the default): prefix when the sweep has a local model, else plan. Sorting builds every first
# prompt before the sweep starts (measured 1.75 s for 2,000 tiny trials on a busy machine: a quarter of
# the runner bench's sweep against a fast loopback server, nothing against a model's seconds a call)
ORDERS = ("auto", "prefix", "plan")
# the size of a sweep, far above what a study needs (the shipped runs have at most 6 values a list and 500
# trials): each list of the grid (lengths, positions, documents, gold_index, models, strategies, a param's
# values), and the trials of the whole plan (models x strategy settings x cells x tasks, run/plan.py)
MAX_LIST = 1_000
MAX_TRIALS = 200_000


def _fail(msg: str):
    raise ValueError(f"sweep config: {msg}")


def _unknown(where: str, d: dict, allowed: set) -> None:
    extra = set(d) - allowed
    if any("key" in k and k != "api_key_env" for k in extra):
        _fail(
            f"{where}: never put an API key in a config file; name its environment variable with api_key_env"
        )
    if extra:
        _fail(f"{where}: unknown key(s) {', '.join(sorted(extra))} (allowed: {', '.join(sorted(allowed))})")


# a model's settings, checked when the config is read (one line each): a timeout of "abc" failed every trial
# with a TypeError, -1 sent 612 requests, 1e-300 requests per minute waited forever
RPM_BOUNDS = (0.01, 1_000_000.0)  # requests per minute: one every 100 minutes at the least
TIMEOUT_BOUNDS = (0.001, 86_400.0)  # seconds for one whole answer (providers/transport.py), up to a day
MAX_RETRIES = 10  # the SDK's own retries of one call
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")


# what an API key looks like, so that one pasted where a name or an address goes is refused, never echoed:
# a provider's key prefix, or a long string with digits that is not upper-case words (an environment
# variable's name is short, or upper-case words: OPENAI_API_KEY; an api-version is 2024-02-15-preview)
KEY_PREFIX = re.compile(r"(sk|pk|rk|gsk|hf|ghp|gho|ghs|glpat|xai|sess)[-_]|AIza|github_pat_", re.IGNORECASE)
KEY_QUERY = re.compile(r"key|token|secret|passw|auth|sig|credential", re.IGNORECASE)


def key_shaped(text: str) -> bool:
    """True for a string shaped like an API key rather than a name (see KEY_PREFIX)."""
    t = text.strip()
    if KEY_PREFIX.match(t):
        return True
    upper_words = re.fullmatch(r"[A-Z0-9_]+", t) and "_" in t
    return len(t) >= 24 and not upper_words and sum(c.isdigit() for c in t) >= 3


def _secret(value) -> str:
    """A value that may be a key, shown by its first 4 characters at most."""
    if not isinstance(value, str):
        return f"a {type(value).__name__}"
    return (
        f"'{value[:4]}…' ({len(value)} characters)" if len(value) > 4 else "a short value"
    )  # as providers.base.shown_name


def check_key_env(where: str, env) -> None:
    """api_key_env: the NAME of an environment variable. A key pasted there is refused showing only its first 4
    characters; any other bad value, which may be a key too, is shown no further."""
    if env is None:
        return
    if isinstance(env, str) and key_shaped(env):
        _fail(
            f"{where} holds what looks like an API key itself ({_secret(env)}); put the key in an environment "
            'variable and give its name here (e.g. api_key_env = "OPENAI_API_KEY")'
        )
    if not isinstance(env, str) or not ENV_NAME.fullmatch(env):
        _fail(
            f"{where} must be the name of an environment variable holding the key (e.g. OPENAI_API_KEY): "
            f"letters, digits and _, not starting with a digit; got {_secret(env)}"
        )


def check_url_has_no_key(where: str, url: str) -> None:
    """A base URL (checked as an address by providers.base.check_base_url) with no key inside: neither
    user-info (https://user:key@host) nor a query parameter named like a key or holding one; one line each,
    never echoing the secret. The key goes in the environment variable api_key_env names."""
    from urllib.parse import parse_qsl, urlsplit

    parts = urlsplit(url)
    if "@" in parts.netloc:
        _fail(
            f"{where} holds a user name or key before '@'; never put a key in a config: remove it and name the "
            "environment variable that holds it with api_key_env"
        )
    for name, value in parse_qsl(parts.query, keep_blank_values=True):
        if KEY_QUERY.search(name) or key_shaped(value):
            _fail(
                f"{where} holds a key in its query (parameter {name[:20]!r}); never put a key in a config: remove it "
                "and name the environment variable that holds it with api_key_env"
            )


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _list(key: str, value, example: str) -> list:
    """A non-empty list of at most MAX_LIST values, else one line."""
    if not isinstance(value, list) or not value:
        _fail(f"{key} must be a non-empty list{example}")
    if len(value) > MAX_LIST:
        _fail(f"{key} has {len(value):,} values; the limit is {MAX_LIST:,} a list (split the sweep)")
    return value


def _positive_int(where: str, value, allow_none=False):
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        _fail(f"{where} must be a positive whole number, got {value!r}")
    return value


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
            _fail(f"{where} must be a table with provider and model")
        _unknown(where, d, MODEL_KEYS)
        read_rules(MODEL_RULES, d, where)
        return cls(**d)


def bundled_task_file(name: str) -> Path | None:
    """The task file that ships under this bare file name (sample_docs/tasks), or None."""
    try:
        path = sample_path("tasks", name)
    except LookupError:
        return None
    return path if name and path.is_file() else None


def stored_tasks(path) -> str:
    """A config's task file as a stored sweep keeps it: the bare name of a task file that ships, else
    the absolute path."""
    resolved = Path(path).resolve()
    bundled = bundled_task_file(resolved.name)
    if bundled is not None and bundled.resolve() == resolved:
        return resolved.name
    return str(resolved)


@dataclass(frozen=True)
class SweepConfig:
    name: str
    tasks: str
    lengths: tuple[int, ...]
    positions: tuple[float, ...]
    strategies: tuple[str, ...]
    models: tuple[ModelConfig, ...]
    # R&R §4.1 (instead of positions): the answer at absolute token positions, each length taking those up
    # to itself: "every N" (0, N, 2N, ... up to the length) or a list of token counts
    positions_tokens: str | tuple[int, ...] | None = None
    # LITM §3.1: N documents with the gold one at 0-based index i (instead of lengths and positions)
    documents: tuple[int, ...] = ()
    gold_index: tuple[int, ...] = ()
    n_tasks: int | None = None
    params: dict = field(default_factory=dict)
    concurrency: int = 8
    max_calls: int | None = None
    max_usd: float | None = None
    encoding: str = "cl100k_base"
    max_tokens: int | None = None
    seed: int | None = 0
    max_retry_after: float = 60.0  # seconds: a longer Retry-After makes the trial a rate_limited error
    fail_fast: int = 5  # stop when the first N trials all fail alike (auth, not found, bad request); 0: never
    mode: str = "live"
    measure: str = "answer"
    order: str = "auto"
    # design = "multi-question" (components/run/multiq.py): K contexts, Q questions each, n documents per K
    design: str | None = None
    contexts: tuple[int, ...] = ()
    questions_per_context: tuple[int, ...] = ()
    n: int | None = None
    base_dir: str = "."  # where a relative tasks path is looked up first (the TOML file's folder)

    @classmethod
    def from_toml(cls, path: str | Path) -> SweepConfig:
        from components.core.loaders import read_bounded

        path = Path(path)
        raw = read_bounded(path, MAX_CONFIG_BYTES, "a sweep config", ValueError)
        try:
            data = tomllib.loads(raw.decode("utf-8"))
        except UnicodeDecodeError:
            raise ValueError(f"sweep config {path.name}: not UTF-8 text") from None
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"sweep config {path.name}: not valid TOML: {exc}") from None
        except RecursionError:
            raise ValueError(f"sweep config {path.name}: not valid TOML (it nests too deep)") from None
        return cls.from_dict(data, base_dir=str(path.resolve().parent))

    @classmethod
    def from_dict(cls, d: dict, base_dir: str = ".") -> SweepConfig:
        """A config from a [sweep] table (or a dict holding one): every key checked by its rule in RULES, in
        order, then the checks that read several keys (CHECKS); the first failure is one line (ValueError)."""
        s = d.get("sweep", d)
        if not isinstance(s, dict):
            _fail("expected a [sweep] table")
        _unknown("[sweep]", s, SWEEP_KEYS)
        got = read_rules(RULES, s)
        kept = {rule.field: rule.keep(got[rule.key]) for rule in RULES if rule.field}
        cfg = cls(**kept, **got["design"], base_dir=base_dir)
        for check in CHECKS:
            check(cfg)
        return cfg

    def check_params(self) -> None:
        """Every value (a scalar, or each value of a list, which sweeps it) checked by the Param of each
        chosen strategy that takes it; a name no strategy takes is a typo."""
        known = {p.name for strat in STRATEGIES.values() for p in strat.params}
        unknown = set(self.params) - known  # a param only other strategies take is just ignored
        if unknown:
            _fail(
                f"params: no strategy takes {', '.join(sorted(unknown))} (known: {', '.join(sorted(known))})"
            )
        for name, value in self.params.items():
            values = value if isinstance(value, list | tuple) else [value]
            if not values:
                _fail(f"params: {name} is an empty list; give a value or a list of values")
            if len(values) > MAX_LIST:
                _fail(
                    f"params: {name} has {len(values):,} values; the limit is {MAX_LIST:,} a list (split the sweep)"
                )
            if len(set(map(str, values))) != len(values):
                _fail(f"params: {name} lists a value twice")
            for strategy in self.strategies:
                param = STRATEGIES[strategy].param(name)
                for v in values if param is not None else ():
                    try:
                        param.check(v)
                    except ParamError as exc:
                        _fail(f"params ({strategy}): {exc}")

    def positions_for(self, length: int) -> tuple:
        """The answer positions of a document of `length` tokens: `positions` (fractions, or tokens inside
        every length), or those of `positions_tokens` up to the length (R&R §4.1: "we vary x from 0 to d in
        increments of 10k", 2/3/5/9 positions at d = 10k/20k/40k/80k)."""
        return (
            self.positions
            if self.positions_tokens is None
            else token_positions(self.positions_tokens, length)
        )

    def count_settings(self, strategy: str) -> int:
        """len(params_for(strategy)), without building them."""
        return math.prod(
            len(v) if isinstance(v := self.params.get(p.name, p.default), list | tuple) else 1
            for p in STRATEGIES[strategy].params
        )

    def params_for(self, strategy: str) -> list[dict]:
        """Every parameter setting of this strategy in the sweep: the cartesian product of the values of
        the params it takes (a list sweeps a param, a scalar fixes it), defaults for the rest."""
        strat = STRATEGIES[strategy]
        grid = [{}]
        for p in strat.params:
            value = self.params.get(p.name, p.default)
            values = list(value) if isinstance(value, list | tuple) else [value]
            grid = [{**g, p.name: p.check(v)} for g in grid for v in values]
        return grid

    @property
    def run_order(self) -> str:
        """The order trials run in: `order`, with "auto" resolved (prefix with a local model, else plan)."""
        if self.order != "auto":
            return self.order
        return "prefix" if any(m.provider == "local" for m in self.models) else "plan"

    def settings(self, model: ModelConfig, prompt_max_tokens: int) -> Settings:
        return Settings(
            max_tokens=model.max_tokens or self.max_tokens or prompt_max_tokens,
            temperature=0.0,
            seed=self.seed,
        )

    @property
    def tasks_path(self) -> Path:
        """The task file: relative to the config's folder, else to the current folder, else a bare name
        of a task file that ships (sample_docs/tasks: `tasks = "nq-open-30docs.jsonl.gz"`), as
        `litm sweep` takes a bundled config's name; so a config that uses a bundled set runs anywhere."""
        p = Path(self.tasks).expanduser()
        if not p.is_absolute() and (Path(self.base_dir) / p).exists():
            return Path(self.base_dir) / p
        bundled = (
            bundled_task_file(TASK_NAMES.get(p.name, p.name))
            if not p.exists() and p.parent == Path(".")
            else None
        )
        return bundled or p

    def to_dict(self) -> dict:
        """The config as stored with the sweep, in the shape a TOML file has (so that
        `from_dict(to_dict())` gives the same config back); no secrets: a config never holds a key.
        The tasks path is made absolute, so a stored sweep resumes from any folder; a task file that
        ships is stored by its bare name (stored_tasks), so the config holds no path of this machine
        and resumes on any other."""
        d = {k: v for k, v in asdict(self).items() if v not in (None, (), [], {})}
        d.pop("base_dir", None)
        if d.get("mode") == "live":  # the default: configs stored before batch mode had no mode
            d.pop("mode")
        for k, default in (
            ("measure", "answer"),
            ("order", "auto"),
        ):  # defaults: stored configs stay as they were
            if d.get(k) == default:
                d.pop(k)
        d["tasks"] = stored_tasks(self.tasks_path)
        budget = {k: d.pop(k) for k in ("max_calls", "max_usd") if k in d}
        if budget:
            d["budget"] = budget
        d["models"] = [{k: v for k, v in m.items() if v is not None} for m in d["models"]]
        return {k: list(v) if isinstance(v, tuple) else v for k, v in d.items()}

    @classmethod
    def from_stored(cls, stored: dict | str) -> SweepConfig:
        """A config from a run store's `sweeps.config` (to_dict's shape; older stores kept the budget
        keys at the top level and empty grid keys)."""
        d = json.loads(stored) if isinstance(stored, str) else dict(stored)
        d = {k: v for k, v in d.items() if v not in (None, [], {}) and k != "base_dir"}
        budget = {k: d.pop(k) for k in ("max_calls", "max_usd") if k in d}
        if budget:
            d["budget"] = {**budget, **d.get("budget", {})}
        return cls.from_dict(d)

    def all_tasks(self):
        """Every task the file holds (read once per file version): the distractor pool for all. A missing
        file's message names the task files that ship (found anywhere by their bare name)."""
        path = Path(self.tasks_path)
        if not path.exists():
            try:
                names = sorted(
                    p.name for p in sample_path("tasks").iterdir() if p.name.endswith((".jsonl", ".jsonl.gz"))
                )
            except (LookupError, OSError):
                names = []
            raise ValueError(
                f"no such file: {self.tasks}; bundled task sets: {', '.join(names) or 'none installed'}"
                + (" (use the bare name)" if names else "")
            )
        return _read_task_file(str(path), path.stat().st_mtime_ns if path.exists() else 0)

    def load_tasks(self) -> list:
        ts = self.all_tasks()
        tasks = ts.tasks[: self.n_tasks] if self.n_tasks else ts.tasks
        if not tasks:
            why = f" ({ts.errors[0][1]} on line {ts.errors[0][0]})" if ts.errors else ""
            raise ValueError(f"sweep config: no tasks could be read from {self.tasks}{why}")
        return tasks


@lru_cache(maxsize=8)
def _read_task_file(path: str, mtime_ns: int):
    from components.tasks.importers import read_tasks

    return read_tasks(path)


# the size of a sweep's plan, counted without making it (run/plan.py makes it) -----------------------------


def gold_indices(n: int, gold_index) -> list[int]:
    """The distinct 0-based indices of a gold_index list that exist for n documents, in order."""
    return list(dict.fromkeys(i if i >= 0 else n + i for i in gold_index if -n <= i < n))


def count_cells(config) -> int:
    """len(cells(config)), without building them."""
    if not config.documents:
        return sum(len(config.positions_for(length)) for length in config.lengths)
    return sum(len(gold_indices(n, config.gold_index)) for n in dict.fromkeys(config.documents))


def count_trials(config, n_tasks: int) -> int:
    """How many trials the plan of this config has with n_tasks tasks, without making it."""
    settings = sum(config.count_settings(s) for s in config.strategies)
    return len(config.models) * settings * count_cells(config) * n_tasks


def check_size(config, n_tasks: int, *, at_least: bool = False) -> None:
    """ValueError (one line) when the plan would hold more than MAX_TRIALS trials; at_least: n_tasks is
    the fewest the sweep can have (its task file not read yet)."""
    n = count_trials(config, n_tasks)
    if n > MAX_TRIALS:
        settings = sum(config.count_settings(s) for s in config.strategies)
        tasks = "a task" if at_least and n_tasks == 1 else f"{n_tasks:,} tasks"
        raise ValueError(
            f"sweep {config.name!r} has {'at least ' if at_least else ''}{n:,} trials "
            f"({len(config.models)} model(s) x {settings:,} strategy setting(s) x "
            f"{count_cells(config):,} cells x {tasks}); the limit is {MAX_TRIALS:,} trials a "
            "sweep: split it into smaller sweeps"
        )


# the rules of a config: one per key of a [sweep] table (RULES) and of a [[sweep.models]] table (MODEL_RULES),
# walked in order by SweepConfig.from_dict and ModelConfig.from_dict -----------------------------------------


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
        _fail(
            self.message.format(
                key=at.name(self.key),
                where=at.where,
                got=repr(value),
                shown=_shown(value),
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


def _text(rule: Rule, value, at: Reading) -> str:
    """A string that is not blank."""
    if not isinstance(value, str) or not value.strip():
        rule.fail(value, at)
    return value


def _positive(rule: Rule, value, at: Reading) -> int:
    return _positive_int(at.name(rule.key), value)


def _whole(rule: Rule, value, at: Reading) -> int:
    """A whole number (not a bool), from `low` and to `high` where the rule has them."""
    if (
        isinstance(value, bool)
        or not isinstance(value, int)
        or (rule.low is not None and value < rule.low)
        or (rule.high is not None and value > rule.high)
    ):
        rule.fail(value, at)
    return value


def _bounded(rule: Rule, value, at: Reading) -> float:
    """A number (not a bool) from `low` and to `high` where the rule has them (NaN and infinity never)."""
    ok = not isinstance(value, bool) and (
        isinstance(value, int) or isinstance(value, float) and math.isfinite(value)
    )
    if not ok or (rule.low is not None and value < rule.low) or (rule.high is not None and value > rule.high):
        rule.fail(value, at)
    return value


def _choice(rule: Rule, value, at: Reading):
    if not any(value == c for c in rule.choices):
        rule.fail(value, at)
    return value


def _table(rule: Rule, value, at: Reading) -> dict:
    """A table (an empty value is an empty table)."""
    value = value or {}
    if not isinstance(value, dict):
        rule.fail(value, at)
    return value


def _budget(rule: Rule, value, at: Reading) -> dict:
    value = _table(rule, value, at)
    _unknown("[sweep.budget]", value, BUDGET_KEYS)
    return value


def _design(rule: Rule, value, at: Reading) -> dict:
    """The multi-question design's fields (its own grid: K and Q instead of lengths and positions), or {}."""
    if not any(k in at.table for k in ("design", "contexts", "questions_per_context", "n")):
        return {}
    from components.run.multiq import check_design

    return check_design(at.table, _fail)


def grid_of(table: dict, got: dict) -> str:
    """Which grid a [sweep] table gives: "design" (multi-question, got["design"]), "documents" (documents and
    gold_index, LITM §3.1) or "tokens" (lengths and positions, R&R §4.1); both of the last two fails."""
    if got["design"]:
        return "design"
    by_documents = table.get("documents") is not None or table.get("gold_index") is not None
    by_tokens = any(table.get(k) is not None for k in ("lengths", "positions", "positions_tokens"))
    if by_documents and by_tokens:
        _fail(
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
        _list(rule.key, value, rule.example)
        for x in value:
            each(x, at.got)
        return value

    return check


def _length(x, got) -> None:
    _positive_int("every length", x)


def _position(x, got) -> None:
    if isinstance(x, bool) or not isinstance(x, int | float) or not math.isfinite(x) or x < 0:
        _fail(
            f"a position must be 0 or more: a fraction from 0 to 1 of the length, or a whole "
            f"number of tokens inside every length, got {x!r}"
        )
    shortest = min(got["lengths"])
    if x > 1 and (x != int(x) or x > shortest):
        _fail(
            f"position {x:g} counts tokens (it is above 1), so it must be a whole number no larger "
            f"than the shortest length ({shortest:,}); for a fraction give 0 to 1"
        )


def _positions(rule: Rule, value, at: Reading) -> list:
    """`positions`, unless the table gives `positions_tokens` instead (then [], and both together fail)."""
    if at.table.get("positions_tokens") is not None:
        if value is not None:
            _fail(
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
    _list(rule.key, value, ' of token counts, e.g. [0, 10000, 20000], or "every 10000"')
    for x in value:
        if isinstance(x, bool) or not isinstance(x, int) or x < 0 or x == 1:
            _fail(
                f"every position of positions_tokens must be a whole number of tokens, 0 or from 2, got {x!r}"
            )
    if len(set(value)) != len(value):
        _fail("positions_tokens lists a position twice")
    for length in at.got["lengths"]:
        if not token_positions(tuple(value), length):
            _fail(
                f"length {length:,} takes no position of positions_tokens (each length takes those up to itself)"
            )
    return tuple(value)


def _documents(x, got) -> None:
    _positive_int("every number of documents", x)


def _gold_index(x, got) -> None:
    if isinstance(x, bool) or not isinstance(x, int):
        _fail(f"a gold_index must be a whole number (0 is the first document, -1 the last), got {x!r}")


def _strategies(rule: Rule, value, at: Reading) -> list:
    _list(rule.key, value, rule.example)
    for name in value:
        if not isinstance(name, str) or name not in STRATEGIES:
            _fail(f"unknown strategy {name!r}; choose from {', '.join(STRATEGIES)}")
    return value


def _models(rule: Rule, value, at: Reading) -> tuple[ModelConfig, ...]:
    if not isinstance(value, list) or not value:
        rule.fail(value, at)
    _list(rule.key, value, "")
    return tuple(ModelConfig.from_dict(m, i) for i, m in enumerate(value))


_ONE_OF = "{key} must be one of {choices}, got {got}"

RULES: tuple[Rule, ...] = (
    Rule("name", _text, message="name is missing", keep=str.strip),
    Rule("tasks", _text, message="tasks (a task file path) is missing"),
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
        "params", _table, default={}, message="{key} must be a table, e.g. {{ r = 1000, k = 3 }}", keep=dict
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
        _bounded,
        low=0,
        optional=True,
        message="{key} must be a number of dollars, got {got}",
    ),
    Rule(
        "encoding",
        _choice,
        default="cl100k_base",
        choices=ENCODINGS,
        message="{key} must be one of {choices}",
    ),
    Rule("seed", _whole, default=0, optional=True, message="{key} must be a whole number, got {got}"),
    Rule(
        "max_retry_after",
        _bounded,
        default=60.0,
        low=0,
        high=86400,
        keep=float,
        message="{key} must be a number of seconds from {low} to {high}, got {got}",
    ),
    Rule(
        "fail_fast",
        _whole,
        default=5,
        low=0,
        message="{key} must be a whole number of trials (0: never stop early), got {got}",
    ),
    Rule("n_tasks", _positive, optional=True),
    Rule("concurrency", _positive, default=8),
    Rule("budget.max_calls", _positive, optional=True),
    Rule("max_tokens", _positive, optional=True),
    Rule("mode", _choice, default="live", choices=MODES, message=_ONE_OF),
    Rule("measure", _choice, default="answer", choices=MEASURES, message=_ONE_OF),
    Rule("order", _choice, default="auto", choices=ORDERS, message=_ONE_OF),
)
RULE: dict[str, Rule] = {rule.key: rule for rule in RULES}


def _base_url(rule: Rule, value, at: Reading) -> str | None:
    """An openai-compatible model's address is needed; any address is checked (check_base_url)."""
    if at.got["provider"] == "openai-compatible" and not value:
        _fail(f"{at.where}: an openai-compatible model needs base_url (e.g. http://127.0.0.1:8000/v1)")
    if value is not None:
        try:
            check_base_url(value, at.name(rule.key), strip=False)
        except BadBaseUrl as exc:
            _fail(str(exc))
        check_url_has_no_key(at.name(rule.key), value)
    return value


def _key_env(rule: Rule, value, at: Reading) -> str:
    check_key_env(at.name(rule.key), value)
    return value


def _cache_prefix(rule: Rule, value, at: Reading) -> bool:
    if not isinstance(value, bool):
        rule.fail(value, at)
    if value and at.got["provider"] != "anthropic":
        _fail(
            f"{at.name(rule.key)} marks a prefix for Anthropic's prompt caching; OpenAI caches prompts of "
            "1,024+ tokens by itself (leave it out)"
        )
    return value


_FROM_TO = "{key} must be a number from {low:,} to {high:,} ({unit}), got {shown}"

MODEL_RULES: tuple[Rule, ...] = (
    Rule(
        "provider",
        _choice,
        choices=PROVIDERS,
        message="{where}: provider must be one of {choices}, got {got}",
    ),
    Rule("model", _text, message="{where}: model name is missing"),
    Rule("context_window", _positive, optional=True),
    Rule("max_tokens", _positive, optional=True),
    Rule("base_url", _base_url),
    Rule("api_key_env", _key_env, optional=True),
    Rule(
        "requests_per_minute",
        _bounded,
        optional=True,
        low=RPM_BOUNDS[0],
        high=RPM_BOUNDS[1],
        message=_FROM_TO.replace("{unit}", "requests per minute"),
    ),
    Rule(
        "timeout",
        _bounded,
        optional=True,
        low=TIMEOUT_BOUNDS[0],
        high=TIMEOUT_BOUNDS[1],
        message=_FROM_TO.replace("{unit}", "seconds for one whole answer"),
    ),
    Rule(
        "max_retries",
        _whole,
        optional=True,
        low=0,
        high=MAX_RETRIES,
        message="{key} must be a whole number from {low} to {high} (the SDK's retries of one call), got {shown}",
    ),
    Rule("cache_prefix", _cache_prefix, optional=True, message="{key} must be true or false, got {shown}"),
)


# the checks that read several keys, after every key's own rule --------------------------------------------


def _measure_fits(cfg: SweepConfig) -> None:
    if cfg.measure != "answer":
        from components.run.measure import check_measure

        try:
            check_measure(cfg)
        except ValueError as exc:
            _fail(str(exc))


def _batch_fits(cfg: SweepConfig) -> None:
    if cfg.mode == "batch":
        for m in cfg.models:
            if m.provider not in BATCH_PROVIDERS:
                _fail(
                    f'mode = "batch" works with openai, openai-compatible and anthropic models only; '
                    f'{m.label} has no batch interface (use mode = "live")'
                )


def _size_fits(cfg: SweepConfig) -> None:
    try:
        check_size(cfg, cfg.n_tasks or 1, at_least=True)  # the plan counts the tasks it reads
    except ValueError as exc:
        _fail(str(exc))


def _models_distinct(cfg: SweepConfig) -> None:
    labels = [m.label for m in cfg.models]
    if len(set(labels)) != len(labels):
        _fail("the same model is listed twice")


CHECKS: tuple[Callable[[SweepConfig], None], ...] = (
    _measure_fits,
    _batch_fits,
    SweepConfig.check_params,
    _size_fits,
    _models_distinct,
)
