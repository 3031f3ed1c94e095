"""Sweep and arm labels, and the run stores combined into one trials frame for Results and Compare.

UI-free. An arm (strategy x parameters x model) has one readable name (`arm_label`), a sweep one
label per store (`label_sweeps`); `combine_stores` joins every store's trials with those labels and
each trial's primary metric value (column components.core.metrics.PRIMARY).
"""

from __future__ import annotations

import json
import math

import pandas as pd

from components.core.metrics import METRICS, PRIMARY
from components.strategies import STRATEGIES


def primary_values(df: pd.DataFrame) -> pd.Series:
    """Each trial's value of its strategy's primary metric (trials from stores made before the
    `metric` column existed take their strategy's metric)."""
    names = df["metric"] if "metric" in df.columns else pd.Series(None, index=df.index, dtype=object)
    fallback = (
        df["strategy"].map(
            {s: STRATEGIES[s].metric if s in STRATEGIES else None for s in df["strategy"].dropna().unique()}
        )
        if "strategy" in df.columns
        else names
    )  # a dict per distinct strategy, not a call per trial
    names = names.where(names.notna(), fallback)
    out = pd.Series(math.nan, index=df.index, dtype=float)
    for m in METRICS.values():
        mask = (names == m.name) & (m.column in df.columns)
        if mask.any():
            out[mask] = pd.to_numeric(df.loc[mask, m.column], errors="coerce")
    return out


def setting_label(row: pd.Series) -> str:
    """'chunked-rr c=20000 k=5' from a trial's strategy and params (a dict or JSON text)."""
    params = row.get("params")
    if isinstance(params, str):
        try:
            params = json.loads(params) if params.strip() else {}
        except ValueError:
            params = {}
    if not isinstance(params, dict):
        params = {}
    bits = [f"{k}={v}" for k, v in sorted(params.items())]
    return " ".join([str(row.get("strategy", "")), *bits]).strip()


def model_name(model) -> str:
    """'gpt-4o-mini' from 'openai:gpt-4o-mini' (a trial's model is provider:model)."""
    text = "" if model is None or (isinstance(model, float) and math.isnan(model)) else str(model)
    return text.split(":", 1)[1] if ":" in text else text


def arm_label(row) -> str:
    """The one readable name of an arm (strategy x parameters x model), used everywhere:
    'rr k=3 r=5000 · gpt-4o-mini'."""
    model = model_name(row.get("model"))
    return setting_label(row) + (f" · {model}" if model else "")


def with_setting(df: pd.DataFrame) -> pd.DataFrame:
    """df with a `setting` column: setting_label of each row, made once per distinct strategy and
    params (a store of 100k trials holds a handful; labelling row by row took seconds)."""
    out = df.copy()
    if not len(df):
        out["setting"] = pd.Series(dtype=str)
        return out
    strategies = df["strategy"].tolist() if "strategy" in df.columns else [""] * len(df)
    params = df["params"].tolist() if "params" in df.columns else [None] * len(df)
    labels: dict = {}
    column = []
    for s, p in zip(strategies, params, strict=True):
        key = (
            type(s),
            s if _hashable(s) else repr(s),
            type(p),
            p if _hashable(p) else json.dumps(p, sort_keys=True, default=str),
        )
        label = labels.get(key)
        if label is None:
            label = labels[key] = setting_label({"strategy": s, "params": p})
        column.append(label)
    out["setting"] = column
    return out


def _hashable(x) -> bool:
    try:
        hash(x)
    except TypeError:
        return False
    return True


def _config(blob) -> dict:
    if isinstance(blob, dict):
        return blob
    try:
        value = json.loads(blob) if isinstance(blob, str) and blob.strip() else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _short_list(values, unit: str = "") -> str:
    if values is None:
        return ""
    values = values if isinstance(values, list | tuple) else [values]
    text = ", ".join(f"{v:,}" if isinstance(v, int) and v > 999 else str(v) for v in values[:6])
    return text + (" …" if len(values) > 6 else "") + unit


def task_set_of(config: dict) -> str:
    """The task set a sweep ran on, as its config names it."""
    for key in ("task_set", "tasks", "task_file", "generator"):
        value = config.get(key)
        if isinstance(value, dict):
            value = value.get("name") or value.get("kind") or value.get("path")
        if value:
            return str(value).rsplit("/", 1)[-1]
    return ""


def sweep_settings(config: dict) -> str:
    """'strategies baseline, rr · lengths 10,000, 20,000 · positions 0, 0.5, 1' from a sweep config."""
    bits = []
    for key, name in (
        ("strategies", "strategies"),
        ("lengths", "lengths"),
        ("positions", "positions"),
        ("n_tasks", "tasks"),
        ("seed", "seed"),
    ):
        value = config.get(key)
        if isinstance(value, list) and value and isinstance(value[0], dict):
            value = [v.get("name") or v.get("strategy") or "?" for v in value]
        if value not in (None, "", []):
            bits.append(f"{name} {_short_list(value)}")
    return " · ".join(bits)


def label_sweeps(sweeps: pd.DataFrame, trials: pd.DataFrame, store_label: str, shipped: bool) -> pd.DataFrame:
    """One row per sweep: key (unique across stores), label, status, task_set, models, date, settings."""
    rows = []
    # Models and counts per sweep in one groupby over the distinct (sweep, model) pairs, not a set of
    # every trial's model per sweep (100k trials: 0.07 s of every Results rerun).
    has_models = "sweep_id" in trials and "model" in trials
    pairs = trials[["sweep_id", "model"]].dropna().drop_duplicates() if has_models else None
    counts = trials["sweep_id"].value_counts() if "sweep_id" in trials else pd.Series(dtype=int)
    for s in sweeps.itertuples():
        cfg = _config(getattr(s, "config", None))
        models = (
            sorted({str(m) for m in pairs.loc[pairs["sweep_id"] == s.id, "model"]})
            if pairs is not None
            else []
        )
        if not models:
            spec = cfg.get("models") or cfg.get("model")
            models = [
                str(m.get("model", m)) if isinstance(m, dict) else str(m)
                for m in (spec if isinstance(spec, list) else [spec] if spec else [])
            ]
        created = getattr(s, "created", None)
        date = pd.Timestamp(created, unit="s").strftime("%Y-%m-%d") if created and pd.notna(created) else ""
        settings = sweep_settings(cfg)
        status = str(getattr(s, "status", ""))
        if shipped:
            label = f"shipped: {s.name} · {', '.join(models) or 'model?'} · {date}"
        else:
            label = f"{s.name} · {', '.join(models)} · {date}" + ("" if status == "done" else f" ({status})")
        rows.append(
            {
                "sweep_key": f"{store_label}#{s.id}",
                "sweep_id": s.id,
                "label": label,
                "status": status,
                "task_set": task_set_of(cfg),
                "models": ", ".join(models),
                "date": date,
                "settings": settings,
                "store": store_label,
                "shipped": shipped,
                "trials": int(counts.get(s.id, 0)),
            }
        )
    return pd.DataFrame(
        rows,
        columns=[
            "sweep_key",
            "sweep_id",
            "label",
            "status",
            "task_set",
            "models",
            "date",
            "settings",
            "store",
            "shipped",
            "trials",
        ],
    )


def combine_stores(
    loaded: list[tuple[str, bool, str, pd.DataFrame, pd.DataFrame]],
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """[(store label, shipped, path, trials, sweeps)] -> (all trials with sweep_key/sweep_label/task_set/
    store/store_path columns, all sweeps labelled)."""
    all_trials, all_sweeps = [], []
    for store_label, shipped, path, trials, sweeps in loaded:
        labelled = label_sweeps(sweeps, trials, store_label, shipped)
        t = trials.copy()
        # Per distinct sweep, then mapped (one dict lookup per trial, no string built per trial).
        keys = {i: f"{store_label}#{i}" for i in t["sweep_id"].unique()} if len(t) else {}
        t["sweep_key"] = t["sweep_id"].map(keys) if len(t) else pd.Series(dtype=str)
        by_key = labelled.set_index("sweep_key")
        t["sweep_label"] = t["sweep_key"].map(by_key["label"]) if len(t) else pd.Series(dtype=object)
        t["task_set"] = t["sweep_key"].map(by_key["task_set"]) if len(t) else pd.Series(dtype=object)
        t["store"] = store_label
        t["store_path"] = path
        t["shipped"] = shipped
        t[PRIMARY] = primary_values(t) if len(t) else pd.Series(dtype=float)
        all_trials.append(t)
        all_sweeps.append(labelled)
    trials = pd.concat(all_trials, ignore_index=True) if all_trials else pd.DataFrame()
    sweeps = pd.concat(all_sweeps, ignore_index=True) if all_sweeps else pd.DataFrame()
    return trials, sweeps
