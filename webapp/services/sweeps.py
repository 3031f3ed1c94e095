"""Sweeps as the Experiments page makes them: a config from the page's grid, its estimate, its TOML and
the `litm sweep` command that runs it, the task sets to choose from, and the past sweeps of the user's
store, formatted for reading."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import streamlit as st
import tomli_w

from components.run.config import SweepConfig
from components.run.config_rules import MODEL_RULES, RULE
from components.strategies import STRATEGIES
from webapp.services.stores import user_db

SAMPLES = RULE["samples"]  # the bounds of [sweep] samples (one definition: run.config_rules)
TEMPERATURE = next(r for r in MODEL_RULES if r.key == "temperature")  # a model's temperature bounds

__all__ = [
    "SAMPLES",
    "TEMPERATURE",
    "STRATEGIES",
    "SweepConfig",
    "bundled_sets",
    "command",
    "config_dict",
    "estimate_for",
    "generated",
    "past_frame",
    "read_set",
    "task_file",
    "toml_text",
    "uploaded",
]


def config_dict(name: str, tasks_path: str, g: dict, models: list[dict]) -> dict:
    """The [sweep] table of a grid (`g`: the page's lengths, positions, strategies, params, n_tasks,
    concurrency, max_usd, mode); parameters given as lists are swept, as in a TOML file."""
    params = {k: (v[0] if isinstance(v, list) and len(v) == 1 else v) for k, v in g["params"].items()}
    d = {
        "name": name,
        "tasks": tasks_path,
        "n_tasks": g["n_tasks"],
        "lengths": g["lengths"],
        "positions": g["positions"],
        "strategies": g["strategies"],
        "params": params,
        "concurrency": g["concurrency"],
        "models": models,
    }
    if g.get("mode", "live") != "live":
        d["mode"] = g["mode"]
    if g.get("samples", 1) > 1:  # repeated samples: each model samples at the temperature, seeds seed + i
        d["samples"] = g["samples"]
        d["models"] = [{**m, "temperature": g["temperature"], "seed": g["seed"]} for m in models]
    if g.get("judge"):  # an LLM judge (run/judging.py) on the models' provider
        d["metric"] = "judge"
        d["judge"] = g["judge"]
    if g["max_usd"] > 0:
        d["budget"] = {"max_usd": g["max_usd"]}
    return d


@st.cache_data(show_spinner="Estimating calls, tokens and cost…", max_entries=16)
def estimate_for(config_json: str, tasks_token: str, _tasks: list) -> dict:
    """The engine's estimate (components.run.estimate) of a config, as plain values."""
    from components.run.estimate import estimate

    cfg = SweepConfig.from_dict(json.loads(config_json))
    est = estimate(cfg, tasks=_tasks[: cfg.n_tasks] if cfg.n_tasks else _tasks)
    return {
        "trials": est.trials,
        "calls": est.calls,
        "input_tokens": est.input_tokens,
        "output_tokens": est.output_tokens,
        "usd": est.usd,
        "unpriced": list(est.unpriced),
        "note": est.note,
        "batch": est.batch,
        "samples": cfg.samples,
        "judge_calls": est.trials if cfg.metric == "judge" else 0,  # one per trial (run/judging.py)
    }


def file_name(name: str) -> str:
    """A sweep's TOML file name: 'my-sweep-2026-11-25.toml'."""
    return (re.sub(r"[^A-Za-z0-9_.-]+", "-", str(name)).strip("-.")[:80] or "sweep") + ".toml"


def toml_text(config: dict | str) -> str:
    """A sweep config (a [sweep] table as a dict, or as stored in the run store) as the TOML file that
    `litm sweep` reads: the same grid, tasks, models and budget; never a key (configs hold none)."""
    stored = SweepConfig.from_stored(config) if isinstance(config, str) else SweepConfig.from_dict(config)
    d = stored.to_dict()
    head = (
        f"# {d.get('name', 'sweep')}: run it with\n#   {command(d.get('name', 'sweep'))}\n"
        "# API keys come from the environment (OPENAI_API_KEY, ANTHROPIC_API_KEY), never from this file.\n"
    )
    return head + tomli_w.dumps({"sweep": d})


def command(name: str) -> str:
    """The command line that runs (or resumes) the sweep from its TOML, into the app's run store."""
    return f"litm sweep {file_name(name)} --db {user_db()}"


# --- task sets ----------------------------------------------------------------------------------------


@st.cache_data(show_spinner=False)
def bundled_sets() -> list:
    from components.tasks.samples import list_task_sets

    return list_task_sets()


@st.cache_data(show_spinner=False, max_entries=8)
def read_set(path: str, mtime: float):
    from components.tasks.importers import read_tasks

    return read_tasks(path)


def read_bundled(path: str):
    return read_set(path, Path(path).stat().st_mtime)


@st.cache_data(show_spinner="Generating tasks…", max_entries=8)
def generated(kind: str, n: int, seed: int, **params) -> list:
    from components.tasks.generators import generate

    return generate(kind, n, seed, **params)


def generator_parameter(kind: str):
    """The parameter a generated kind is swept over (tasks.harder.Parameter), or None."""
    from components.tasks.harder import parameter

    return parameter(kind)


def generator_kinds() -> dict[str, str]:
    from components.tasks.generators import DESCRIPTIONS, KINDS

    return {k: DESCRIPTIONS.get(k, "") for k in KINDS}


@st.cache_data(show_spinner=False, max_entries=4)
def uploaded(name: str, data: bytes):
    """Tasks of an uploaded file (unpacked as a stream, at most MAX_UPLOAD_TASK_BYTES); raises
    TaskFileError (a ValueError) with one line."""
    from components.tasks.importers import MAX_UPLOAD_TASK_BYTES, parse_tasks_bytes

    return parse_tasks_bytes(name, data, MAX_UPLOAD_TASK_BYTES)


def task_file(label: str, tasks: list) -> Path:
    """Where generated or uploaded tasks are written for the runner (named by their content)."""
    import hashlib

    from components.tasks.importers import dumps_tasks

    digest = hashlib.sha256(dumps_tasks(tasks).encode()).hexdigest()[:12]
    return user_db().parent / "tasks" / f"{label}-{digest}.jsonl"


def write_tasks(tasks: list, path: Path) -> None:
    from components.tasks.importers import write_tasks as write

    write(tasks, path)


def load_stored(config: str) -> tuple[SweepConfig, list]:
    """A stored sweep's config and its tasks (to resume it)."""
    cfg = SweepConfig.from_stored(config)
    return cfg, cfg.load_tasks()


# --- past sweeps, formatted ---------------------------------------------------------------------------

STATES = {"done": "finished", "running": "interrupted", "cancelled": "cancelled", "failed": "failed"}


def _count(v) -> str:
    return "–" if v is None or pd.isna(v) else f"{int(v):,}"


def _dollars(v) -> str:
    if v is None or pd.isna(v):
        return "unknown"
    v = float(v)
    return "$0" if v == 0 else f"${v:,.4f}" if v < 1 else f"${v:,.2f}"


def past_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """The past sweeps as a table to read: dates, counts with thousands separators, dollars, no 'None'."""
    if frame.empty:
        return frame
    created = pd.to_datetime(pd.to_numeric(frame["created"], errors="coerce"), unit="s")
    out = pd.DataFrame(
        {
            "sweep": frame["name"].astype(str),
            "state": frame["state"].astype(str),
            "started": created.dt.strftime("%Y-%m-%d %H:%M").fillna("–"),
            "trials": frame["trials"].map(_count),
            "errors": frame["errors"].map(_count),
            "calls": frame["calls"].map(_count),
            "tokens in": frame["input_tokens"].map(_count),
            "tokens out": frame["output_tokens"].map(_count),
            "dollars": frame["cost_usd"].map(_dollars),
            "note": frame["reason"].map(
                lambda r: "" if r is None or (isinstance(r, float) and pd.isna(r)) else str(r)
            ),
        }
    )
    return out.iloc[::-1].reset_index(drop=True)
