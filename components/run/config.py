"""Sweep configuration (TOML): what a sweep is, read and checked, and the size of its plan counted.

A sweep is task x cell x strategy x model. This module holds the config itself (`SweepConfig`: reading a
TOML file or a stored sweep, its task file, its parameter grid); the rest is split by what it holds:
- components/run/config_rules.py: the rules table, one `Rule` per key of a [sweep] table (`RULES`) and of
  a [[sweep.models]] table (`MODEL_RULES`): its default, its check, its bounds and the one line a bad
  value gets; the keys each table allows; `ModelConfig`;
- components/run/config_read.py: how a table is read by its rules (`Rule`, `read_rules`, `fail`);
- components/run/config_checks.py: `CHECKS`, which read several keys at once, and the plan's size;
- components/run/config_secrets.py: a key pasted into a config, refused without echoing it.
Every public name of those modules that callers use is importable from here too. The plan itself is
components/run/plan.py and the cost estimate components/run/estimate.py.
"""

from __future__ import annotations

import json
import math
import tomllib
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path

from components.core.resources import sample_path
from components.providers.base import Settings
from components.run.config_checks import (
    CHECKS,
    MAX_TRIALS,
    check_size,
    count_cells,
    count_trials,
    gold_indices,
)
from components.run.config_read import MAX_LIST, Reading, Rule, fail, read_rules, refuse_unknown
from components.run.config_rules import (
    BATCH_PROVIDERS,
    BUDGET_KEYS,
    MAX_RETRIES,
    MEASURES,
    MODEL_KEYS,
    MODEL_RULES,
    MODES,
    ORDERS,
    RPM_BOUNDS,
    RULE,
    RULES,
    SWEEP_KEYS,
    TIMEOUT_BOUNDS,
    ModelConfig,
    grid_of,
    token_positions,
)
from components.run.config_secrets import (
    ENV_NAME,
    KEY_PREFIX,
    KEY_QUERY,
    check_key_env,
    check_url_has_no_key,
    key_shaped,
)
from components.strategies import STRATEGIES, ParamError
from components.tasks.squad import NAMES as TASK_NAMES

__all__ = [  # what callers have always imported from here; each is defined in the module it comes from
    "BATCH_PROVIDERS",
    "BUDGET_KEYS",
    "CHECKS",
    "ENV_NAME",
    "KEY_PREFIX",
    "KEY_QUERY",
    "MAX_CONFIG_BYTES",
    "MAX_LIST",
    "MAX_RETRIES",
    "MAX_TRIALS",
    "MEASURES",
    "MODEL_KEYS",
    "MODEL_RULES",
    "MODES",
    "ORDERS",
    "RPM_BOUNDS",
    "RULE",
    "RULES",
    "SWEEP_KEYS",
    "TIMEOUT_BOUNDS",
    "ModelConfig",
    "Reading",
    "Rule",
    "SweepConfig",
    "bundled_task_file",
    "check_key_env",
    "check_size",
    "check_url_has_no_key",
    "count_cells",
    "count_trials",
    "gold_indices",
    "grid_of",
    "key_shaped",
    "read_rules",
    "stored_tasks",
    "token_positions",
]

MAX_CONFIG_BYTES = 1024 * 1024  # a sweep config file (a few hundred bytes in practice)


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
    metric: str | None = None  # "judge": the LLM judge ([sweep.judge]) scores each answer
    judge: ModelConfig | None = None
    samples: int = 1  # repeated samples of each trial (each its own trial, with its index)
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
        extra = sorted(set(data) - {"sweep"}) if isinstance(data.get("sweep"), dict) else []
        if extra:  # a table beside [sweep] (a typo such as [sweeps], or [sweep] keys written before it)
            shown = ", ".join(repr(k[:40]) for k in extra[:5])
            raise ValueError(
                f"sweep config {path.name}: unknown top-level key(s) {shown}; every setting goes in the [sweep] "
                "table (and [[sweep.models]])"
            )
        return cls.from_dict(data, base_dir=str(path.resolve().parent))

    @classmethod
    def from_dict(cls, d: dict, base_dir: str = ".") -> SweepConfig:
        """A config from a [sweep] table (or a dict holding one): every key checked by its rule in RULES, in
        order, then the checks that read several keys (CHECKS); the first failure is one line (ValueError)."""
        s = d.get("sweep", d)
        if not isinstance(s, dict):
            fail("expected a [sweep] table")
        refuse_unknown("[sweep]", s, SWEEP_KEYS)
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
            fail(
                f"params: no strategy takes {', '.join(sorted(unknown))} (known: {', '.join(sorted(known))})"
            )
        for name, value in self.params.items():
            values = value if isinstance(value, list | tuple) else [value]
            if not values:
                fail(f"params: {name} is an empty list; give a value or a list of values")
            if len(values) > MAX_LIST:
                fail(
                    f"params: {name} has {len(values):,} values; the limit is {MAX_LIST:,} a list (split the sweep)"
                )
            if len(set(map(str, values))) != len(values):
                fail(f"params: {name} lists a value twice")
            for strategy in self.strategies:
                param = STRATEGIES[strategy].param(name)
                for v in values if param is not None else ():
                    try:
                        param.check(v)
                    except ParamError as exc:
                        fail(f"params ({strategy}): {exc}")

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

    def settings(self, model: ModelConfig, prompt_max_tokens: int, sample: int | None = None) -> Settings:
        """A call's settings: the model's temperature (0 when unset) and seed (the sweep's when unset); the
        sample of index i > 0 (samples > 1) asks with seed + i, so each sample is its own call."""
        seed = self.seed if model.seed is None else model.seed
        return Settings(
            max_tokens=model.max_tokens or self.max_tokens or prompt_max_tokens,
            temperature=float(model.temperature or 0.0),
            seed=(seed or 0) + sample if sample else seed,
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
        if d.get("samples") == 1:  # the default: stored configs stay as they were
            d.pop("samples")
        if "judge" in d:
            d["judge"] = {k: v for k, v in d["judge"].items() if v is not None}
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
                files = [
                    p.name for p in sample_path("tasks").iterdir() if p.name.endswith((".jsonl", ".jsonl.gz"))
                ]
                names = sorted(
                    [
                        *files,
                        *(name for name, file in TASK_NAMES.items() if sample_path("tasks", file).is_file()),
                    ]
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
