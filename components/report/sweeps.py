"""Display names, sweep and arm labels, and the run stores combined into one trials frame for Results
and Compare.

UI-free. THE display name of each kind of thing, from its registry, used by every page, chart,
legend, table and sentence (raw ids stay in code, URLs and exports):
- a strategy: `strategy_label('icr')` -> 'ICR' (components.strategies' label);
- a model: `model_title('local:qwen2.5-coder-0.5b-instruct')` -> 'Qwen2.5 Coder 0.5B' (the bundled
  models' titles), 'gpt-4o-mini' for 'openai:gpt-4o-mini';
- a metric: `metric_label('subspan_em')` -> 'best subspan EM' (components.core.metrics);
- an arm's setting: `setting_label` -> 'R&R · r=2,000, k=5' (parameters in full, never cut); an arm
  (setting x model): `arm_label` -> 'ICR · k=3 · gpt-4o-mini';
- a sweep: `sweep_label` -> 'my sweep · Qwen2.5 Coder 0.5B · 2026-11-26' (`label_sweeps`, one per store).
`combine_stores` joins every store's trials with those labels and each trial's primary metric value
(column components.core.metrics.PRIMARY).
"""

from __future__ import annotations

import json
import math

import pandas as pd

from components.core.metrics import LABELS, METRICS, PRIMARY, get_metric
from components.providers.localmodel import ALIASES, MODELS
from components.strategies import STRATEGIES


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def strategy_label(name) -> str:
    """'ICR' for 'icr': the strategy registry's label; an unknown name as it is ('' for none)."""
    if _missing(name):
        return ""
    s = STRATEGIES.get(str(name))
    return s.label if s is not None else str(name)


def model_title(model) -> str:
    """'Qwen2.5 Coder 0.5B' for the bundled 'local:qwen2.5-coder-0.5b-instruct'; 'gpt-4o-mini' for
    'openai:gpt-4o-mini' (a trial's model is provider:model); '' for none."""
    if _missing(model):
        return ""
    text = str(model)
    provider, _, name = text.partition(":")
    if not name:
        name, provider = provider, ""
    weights = MODELS.get(ALIASES.get(name, name)) if provider in ("local", "") else None
    if weights is not None:
        return weights.title.split(" Instruct")[0].split(",")[0].strip()
    return name


def metric_label(name_or_column) -> str:
    """'best subspan EM' for 'subspan_em' or 'subspan-em' (components.core.metrics), "each strategy's own
    metric" for the primary column; an unknown name as it is."""
    key = str(name_or_column)
    if key in LABELS:
        return LABELS[key]
    try:
        return get_metric(key).label
    except (KeyError, ValueError):
        return key


def _value(v) -> str:
    if isinstance(v, bool):
        return str(int(v))
    if isinstance(v, int) or (isinstance(v, float) and v.is_integer() and abs(v) < 1e15):
        return f"{int(v):,}"
    return str(v)


def params_text(params, strategy=None) -> str:
    """'r=2,000, k=5' from a trial's params (a dict or JSON text); '' for none. Every value in full, in
    the order the strategy lists its parameters (others after, by name)."""
    if isinstance(params, str):
        try:
            params = json.loads(params) if params.strip() else {}
        except ValueError:
            params = {}
    if not isinstance(params, dict):
        return ""
    s = STRATEGIES.get(str(strategy)) if not _missing(strategy) else None
    order = {p.name: i for i, p in enumerate(s.params)} if s is not None else {}
    keys = sorted(params, key=lambda k: (order.get(k, len(order)), str(k)))
    return ", ".join(f"{k}={_value(params[k])}" for k in keys)


def primary_names(df: pd.DataFrame) -> pd.Series:
    """Each trial's primary metric, by name (trials from stores made before the `metric` column existed
    take their strategy's metric)."""
    names = df["metric"] if "metric" in df.columns else pd.Series(None, index=df.index, dtype=object)
    fallback = (
        df["strategy"].map(
            {s: STRATEGIES[s].metric if s in STRATEGIES else None for s in df["strategy"].dropna().unique()}
        )
        if "strategy" in df.columns
        else names
    )  # a dict per distinct strategy, not a call per trial
    return names.where(names.notna(), fallback)


def primary_values(df: pd.DataFrame) -> pd.Series:
    """Each trial's value of its strategy's primary metric (primary_names)."""
    names = primary_names(df)
    out = pd.Series(math.nan, index=df.index, dtype=float)
    for m in METRICS.values():
        mask = (names == m.name) & (m.column in df.columns)
        if mask.any():
            out[mask] = pd.to_numeric(df.loc[mask, m.column], errors="coerce")
    return out


def setting_label(row) -> str:
    """'Chunked R&R · r=10,000, k=5, c=20,000' from a trial's strategy and params (a dict or JSON text): the
    strategy's display name, then its parameters in full."""
    params = params_text(row.get("params"), row.get("strategy"))
    return " · ".join(x for x in (strategy_label(row.get("strategy", "")), params) if x)


model_name = model_title  # the one model name (kept for callers that knew it by this name)


def arm_label(row) -> str:
    """The one readable name of an arm (strategy x parameters x model), used everywhere:
    'R&R · r=5,000, k=3 · gpt-4o-mini'."""
    model = model_title(row.get("model"))
    return setting_label(row) + (f" · {model}" if model else "")


def arm_id(row) -> str:
    """An arm by its raw ids, as older links and scripts name it: 'rr k=3 r=5000 · gpt-4o-mini'
    (`litm compare --arms` takes it as well as the display name)."""
    params = row.get("params")
    if isinstance(params, str):
        try:
            params = json.loads(params) if params.strip() else {}
        except ValueError:
            params = {}
    bits = [f"{k}={v}" for k, v in sorted(params.items())] if isinstance(params, dict) else []
    setting = " ".join([str(row.get("strategy", "")), *bits]).strip()
    model = "" if _missing(row.get("model")) else str(row.get("model"))
    model = model.split(":", 1)[1] if ":" in model else model
    return setting + (f" · {model}" if model else "")


def setting_parts(label: str) -> tuple[str, str]:
    """('R&R', 'r=2,000, k=5') from a setting label: the strategy's name and its parameters."""
    head, _, rest = str(label).partition(" · ")
    return head, rest


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
    """'strategies Baseline, R&R · lengths 10,000, 20,000 · positions 0, 0.5, 1' from a sweep config."""
    bits = []
    for key, name in (
        ("strategies", "strategies"),
        ("lengths", "lengths"),
        ("positions", "positions"),
        ("positions_tokens", "positions (tokens)"),
        ("n_tasks", "tasks"),
        ("seed", "seed"),
    ):
        value = config.get(key)
        if isinstance(value, list) and value and isinstance(value[0], dict):
            value = [v.get("name") or v.get("strategy") or "?" for v in value]
        if key == "strategies" and isinstance(value, list):
            value = [strategy_label(v) for v in value]
        if value not in (None, "", []):
            bits.append(f"{name} {_short_list(value)}")
    return " · ".join(bits)


def sweep_label(name, models, date: str = "", status: str = "done", shipped: bool = False) -> str:
    """THE name of a sweep on every page: 'my sweep · Qwen2.5 Coder 0.5B · 2026-11-26' ('shipped: '
    before a shipped one, its status after an unfinished one); `models` display names."""
    models = ", ".join(models) if not isinstance(models, str) else models
    if shipped:
        return f"shipped: {name} · {models or 'model?'} · {date}"
    return " · ".join(x for x in (str(name), models, date) if x) + (
        "" if status in ("done", "") else f" ({status})"
    )


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
            sorted({model_title(m) for m in pairs.loc[pairs["sweep_id"] == s.id, "model"]})
            if pairs is not None
            else []
        )
        if not models:
            spec = cfg.get("models") or cfg.get("model")
            models = [
                model_title(m.get("model", m)) if isinstance(m, dict) else model_title(m)
                for m in (spec if isinstance(spec, list) else [spec] if spec else [])
            ]
        created = getattr(s, "created", None)
        date = pd.Timestamp(created, unit="s").strftime("%Y-%m-%d") if created and pd.notna(created) else ""
        settings = sweep_settings(cfg)
        status = str(getattr(s, "status", ""))
        label = sweep_label(s.name, models, date, status, shipped)
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
