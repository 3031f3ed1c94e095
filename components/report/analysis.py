"""Trials (a DataFrame of the run store's trial columns) -> accuracy with n and a confidence interval.

UI-free. Every accuracy comes with n (scored trials), the number of successes and a 95% interval:
Wilson for 0/1 scores, a normal interval of the mean for fractional ones (page recall, precision).
Trials with an error are counted as errors and never scored.
"""

from __future__ import annotations

import json
import math

import pandas as pd

from components.core import stats
from components.core.metrics import METRICS as ALL_METRICS

# metric column -> label shown in the UI (components.core.metrics is the one list); "primary" is each
# trial's own strategy's metric, the value the Playground's verdict shows for the same trial
PRIMARY = "primary"
METRICS: dict[str, str] = {PRIMARY: "each strategy's own metric",
                           **{m.column: m.label for m in ALL_METRICS.values()}}


def primary_values(df: pd.DataFrame) -> pd.Series:
    """Each trial's value of its strategy's primary metric (trials from stores made before the
    `metric` column existed take their strategy's metric)."""
    from components.strategies import STRATEGIES

    names = df["metric"] if "metric" in df.columns else pd.Series(None, index=df.index, dtype=object)
    fallback = df["strategy"].map({s: STRATEGIES[s].metric if s in STRATEGIES else None
                                   for s in df["strategy"].dropna().unique()}) \
        if "strategy" in df.columns else names  # a dict per distinct strategy, not a call per trial
    names = names.where(names.notna(), fallback)
    out = pd.Series(math.nan, index=df.index, dtype=float)
    for m in ALL_METRICS.values():
        mask = (names == m.name) & (m.column in df.columns)
        if mask.any():
            out[mask] = pd.to_numeric(df.loc[mask, m.column], errors="coerce")
    return out

STAT_COLUMNS = ["n", "successes", "mean", "lo", "hi", "errors"]


def proportion_ci(successes: float, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson interval (components.core.stats); NaN for no trials, so an empty group draws no band."""
    if n <= 0:
        return (math.nan, math.nan)
    return stats.proportion_ci(int(round(successes)), int(n), confidence)


def is_error(df: pd.DataFrame) -> pd.Series:
    """True where a trial failed (an error message is stored); such trials are never scored."""
    if "error" not in df.columns:
        return pd.Series(False, index=df.index)
    err = df["error"]
    return err.notna() & (err.astype(str).str.strip() != "")


def scored(df: pd.DataFrame, metric: str = "score") -> pd.DataFrame:
    """Trials that count for `metric`: no error and a value present."""
    if metric not in df.columns:
        return df.iloc[0:0]
    ok = ~is_error(df) & pd.to_numeric(df[metric], errors="coerce").notna()
    return df[ok]


def _stats(values: pd.Series, errors: int) -> dict:
    v = pd.to_numeric(values, errors="coerce").dropna().astype(float)
    n = int(len(v))
    if n == 0:
        return {"n": 0, "successes": 0.0, "mean": math.nan, "lo": math.nan, "hi": math.nan, "errors": errors}
    total = float(v.sum())
    mean = total / n
    if v.isin([0.0, 1.0]).all():
        lo, hi = proportion_ci(total, n)
    else:
        sd = float(v.std(ddof=1)) if n > 1 else 0.0
        half = 1.96 * sd / math.sqrt(n)
        lo, hi = max(0.0, mean - half), min(1.0, mean + half)
    return {"n": n, "successes": total, "mean": mean, "lo": lo, "hi": hi, "errors": errors}


def accuracy(df: pd.DataFrame, by: list[str], metric: str = "score") -> pd.DataFrame:
    """One row per group of `by`: n, successes, mean, lo, hi (95%), errors (trials not scored)."""
    by = [c for c in by if c in df.columns]
    if df.empty or metric not in df.columns:
        return pd.DataFrame(columns=[*by, *STAT_COLUMNS])
    df = df.reset_index(drop=True)
    err = is_error(df)
    if not by:
        return pd.DataFrame([_stats(df.loc[~err, metric], int(err.sum()))])
    rows = []
    for key, group in df.groupby(by, dropna=False, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        g_err = err.loc[group.index]
        rows.append({**dict(zip(by, key, strict=True)), **_stats(group.loc[~g_err, metric], int(g_err.sum()))})
    return pd.DataFrame(rows, columns=[*by, *STAT_COLUMNS])


def first_pages_mask(df: pd.DataFrame) -> pd.Series:
    """True for trials whose retrieval stage returned exactly pages 1, 2, ..., m in order (m >= 2):
    what a weak model answers to any question (components.run.moving.first_pages), counted apart."""
    from components.run.moving import first_pages

    if "retrieved_pages" not in df:
        return pd.Series(False, index=df.index)
    return df["retrieved_pages"].map(lambda v: first_pages(v) if isinstance(v, list | tuple) else False).astype(bool)


def series_label(df: pd.DataFrame, series: list[str]) -> pd.Series:
    """One readable label per row from the series columns, e.g. 'rr · gpt-4o'."""
    series = [c for c in series if c in df.columns]
    if not series:
        return pd.Series("all", index=df.index, dtype=object)
    parts = [df[c].astype(str) for c in series]
    out = parts[0]
    for p in parts[1:]:
        out = out + " · " + p
    return out


def u_curve(df: pd.DataFrame, metric: str = "score", series: tuple[str, ...] = ("strategy",),
            x: str = "position") -> pd.DataFrame:
    """Accuracy against answer position, one series per value of the `series` columns."""
    table = accuracy(df, [*series, x], metric)
    table["series"] = series_label(table, list(series))
    if table.empty:
        return table
    return table.sort_values(["series", x]).reset_index(drop=True)


def by_length(df: pd.DataFrame, metric: str = "score", series: tuple[str, ...] = ("strategy",)) -> pd.DataFrame:
    """Accuracy against document length, one series per value of the `series` columns."""
    return u_curve(df, metric, series, x="length")


def heatmap(df: pd.DataFrame, metric: str = "score", rows: str = "length",
            cols: str = "position") -> tuple[pd.DataFrame, pd.DataFrame]:
    """(mean, n) matrices: rows are lengths, columns are answer positions (or, for a LITM sweep,
    rows="documents", cols="gold_index")."""
    table = accuracy(df, [rows, cols], metric)
    if table.empty:
        return pd.DataFrame(), pd.DataFrame()
    mean = table.pivot(index=rows, columns=cols, values="mean").sort_index().sort_index(axis=1)
    n = table.pivot(index=rows, columns=cols, values="n").reindex_like(mean).fillna(0).astype(int)
    return mean, n


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
        key = (type(s), s if _hashable(s) else repr(s), type(p),
               p if _hashable(p) else json.dumps(p, sort_keys=True, default=str))
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


COST_COLUMNS = {"calls": "calls", "input_tokens": "input tokens", "output_tokens": "output tokens",
                "cost_usd": "dollars"}


def cost_table(df: pd.DataFrame, metric: str = "score", by: tuple[str, ...] = ("setting", "model")) -> pd.DataFrame:
    """Accuracy with its cost per group: mean calls, input/output tokens and dollars per trial, and totals.

    Cost means count every trial (failed calls cost too); accuracy counts scored trials only.
    `usd_known` is False where no price was known for some trial (its dollars are then a lower bound).
    """
    df = df.reset_index(drop=True)
    if "setting" in by and "setting" not in df.columns:
        df = with_setting(df)
    by = [c for c in by if c in df.columns]
    table = accuracy(df, by, metric)
    if table.empty:
        return table
    costs = []
    for key, group in df.groupby(by, dropna=False, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        row = dict(zip(by, key, strict=True))
        row["trials"] = len(group)
        for col in COST_COLUMNS:
            values = pd.to_numeric(group[col], errors="coerce") if col in group else pd.Series(dtype=float)
            row[f"{col}_per_trial"] = float(values.mean()) if values.notna().any() else math.nan
            row[f"{col}_total"] = float(values.sum()) if values.notna().any() else math.nan
        usd = pd.to_numeric(group["cost_usd"], errors="coerce") if "cost_usd" in group else None
        row["usd_known"] = bool(usd is not None and usd.notna().all())
        costs.append(row)
    return table.merge(pd.DataFrame(costs), on=by, how="left")


def error_summary(df: pd.DataFrame, by: tuple[str, ...] = ("strategy", "model")) -> pd.DataFrame:
    """Count of failed trials per group and their most common message."""
    df = df.reset_index(drop=True)
    err = is_error(df)
    bad = df[err]
    by = [c for c in by if c in df.columns]
    if bad.empty:
        return pd.DataFrame(columns=[*by, "errors", "example"])
    rows = []
    for key, group in bad.groupby(by, dropna=False, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        msg = group["error"].astype(str).value_counts().index[0]
        rows.append({**dict(zip(by, key, strict=True)), "errors": len(group), "example": msg[:200]})
    return pd.DataFrame(rows)


def filter_trials(df: pd.DataFrame, **choices) -> pd.DataFrame:
    """Keep rows whose column is in the chosen values; an empty or None choice keeps everything."""
    mask = pd.Series(True, index=df.index)
    for col, values in choices.items():
        if values and col in df.columns:
            mask &= df[col].astype(str).isin([str(v) for v in values])
    return df[mask]


# --- published numbers --------------------------------------------------------------------------

PUBLISHED_METRIC_LABELS = {
    "fuzzy_match_pct": "fuzzy match (%)",
    "accuracy_pct": "accuracy (%)",
    "em_pct": "exact match (%)",
    "em_fraction": "exact match (0-1)",
    "hallucination_rate_pct": "hallucination rate (%)",
    "recall_pct": "recall (%)",
    "llm_calls": "LLM calls",
    "input_tokens": "input tokens",
    "output_tokens": "output tokens",
}


def published_label(source: str, table: str, model: str, extra: str = "") -> str:
    """'published (rr2024, Table 7, GPT-4 Turbo)' — the only way a published number is named."""
    bits = [b for b in (source, table, model, extra) if isinstance(b, str) and b]
    return "published (" + ", ".join(bits) + ")"


def published_position_curves(pub: pd.DataFrame) -> pd.DataFrame:
    """R&R Tables 7-9: accuracy (as published, 0-1) against answer position in tokens, by d and method."""
    rows = pub[pub["answer_position_tokens"].notna() & (pub["metric"] == "fuzzy_match_pct")].copy()
    if rows.empty:
        return rows
    rows["position"] = rows["answer_position_tokens"].astype(int)
    rows["length"] = rows["doc_length_tokens"].astype(int)
    rows["mean"] = rows["value"].astype(float) / 100.0
    rows["label"] = [published_label(r.source, r.table, r.model, f"{r.dataset} {r.method} d={r.length // 1000}k")
                     for r in rows.itertuples()]
    return rows.sort_values(["table", "method", "length", "position"])


def published_index_curves(pub: pd.DataFrame) -> pd.DataFrame:
    """Lost in the Middle: accuracy (as published, 0-1) against the gold document's index, by N."""
    rows = pub[(pub["source"] == "liu2023") & pub["gold_index"].notna()].copy()
    if rows.empty:
        return rows
    rows["position"] = rows["gold_index"].astype(int)
    rows["n_documents"] = rows["n_documents"].astype(int)
    rows["mean"] = rows["value"].astype(float) / 100.0
    rows["label"] = [published_label(r.source, r.table, r.model, f"{r.n_documents} documents")
                     for r in rows.itertuples()]
    return rows.sort_values(["table", "model", "position"])


def position_kind(trials: pd.DataFrame) -> str:
    """'fraction' when every answer position is a fraction of the length (<= 1), else 'tokens'."""
    pos = pd.to_numeric(trials.get("position", pd.Series(dtype=float)), errors="coerce").dropna()
    return "fraction" if len(pos) and (pos <= 1).all() else "tokens"


def overlay_candidates(pub: pd.DataFrame, trials: pd.DataFrame) -> pd.DataFrame:
    """Published position curves (R&R Tables 7-9) on the x-axis of the trials, column `x`.

    Positions in tokens are compared as they are; positions given as fractions of the length are
    compared with the published position divided by its d. Curves whose d is among the trial
    lengths come first; when none matches, all are offered (the label names each d).
    """
    if trials.empty or pub is None or pub.empty:
        return pd.DataFrame()
    curves = published_position_curves(pub)
    if curves.empty:
        return curves
    kind = position_kind(trials)
    curves["x"] = curves["position"] / curves["length"] if kind == "fraction" else curves["position"]
    lengths = set(pd.to_numeric(trials.get("length"), errors="coerce").dropna().astype(int))
    near = curves[curves["length"].isin(lengths)]
    return (near if not near.empty else curves).reset_index(drop=True)


# --- drill-down: a stored call's prompt, with its regions found again ----------------------------

_REGION_PATTERNS = [
    ("instruction", r"<INSTRUCTIONS>.*?</INSTRUCTIONS>"),
    ("reminder", r"<INSTRUCTIONS_REMINDER>.*?</INSTRUCTIONS_REMINDER>"),
    ("page", r"<PAGE (\d+)>.*?</PAGE \1>"),
    ("page", r"^Document \[(\d+)\]\(Title: [^\n]*"),
    ("question", r"^Question: [^\n]*"),
]


def message_text(messages: list[dict]) -> str:
    """The text of a stored request: its messages' contents, in order."""
    parts = []
    for m in messages or []:
        content = m.get("content", "") if isinstance(m, dict) else str(m)
        if isinstance(content, list):  # content blocks
            content = "".join(b.get("text", "") if isinstance(b, dict) else str(b) for b in content)
        parts.append(str(content))
    return "\n\n".join(parts)


def rebuild_prompt(messages: list[dict], gold_pages=(), stage: int = 1, label: str = "",
                   encoding: str = "cl100k_base"):
    """A components.core.prompts.Prompt from a stored request, its spans found by the templates' tags
    (<INSTRUCTIONS>, <INSTRUCTIONS_REMINDER>, <PAGE p>, LITM's `Document [i](Title: ...)`, `Question:`).
    Pages listed in `gold_pages` become gold spans. Token offsets are counted piece by piece."""
    import re

    from components.core.prompts import Prompt, Span
    from components.core.tokens import tokenizer

    text = message_text(messages)
    gold = {int(p) for p in (gold_pages or []) if str(p).lstrip("-").isdigit()}
    found: list[tuple[int, int, str, int | None]] = []
    for kind, pattern in _REGION_PATTERNS:
        for m in re.finditer(pattern, text, flags=re.S | re.M):
            page = int(m.group(1)) if m.groups() else None
            if kind == "page" and page in gold:
                kind_here = "gold"
            else:
                kind_here = kind
            found.append((m.start(), m.end(), kind_here, page))
    found.sort(key=lambda f: (f[0], -f[1]))
    spans, pos, toks, last_end = [], 0, 0, -1
    tok = tokenizer(encoding)
    for start, end, kind, page in found:
        if start < last_end:  # nested or overlapping match: keep the outer one
            continue
        toks += tok.count(text[pos:start]) if start > pos else 0
        n = tok.count(text[start:end])
        spans.append(Span(kind, start, end, toks, toks + n, page, None))
        toks += n
        pos = last_end = end
    toks += tok.count(text[pos:]) if pos < len(text) else 0
    return Prompt(stage, text, toks, tuple(spans), label)


# --- run stores -> one trials frame with readable sweep labels ------------------------------------

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
    for key, name in (("strategies", "strategies"), ("lengths", "lengths"), ("positions", "positions"),
                      ("n_tasks", "tasks"), ("seed", "seed")):
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
        models = sorted({str(m) for m in pairs.loc[pairs["sweep_id"] == s.id, "model"]}) if has_models else []
        if not models:
            spec = cfg.get("models") or cfg.get("model")
            models = [str(m.get("model", m)) if isinstance(m, dict) else str(m)
                      for m in (spec if isinstance(spec, list) else [spec] if spec else [])]
        created = getattr(s, "created", None)
        date = pd.Timestamp(created, unit="s").strftime("%Y-%m-%d") if created and pd.notna(created) else ""
        settings = sweep_settings(cfg)
        status = str(getattr(s, "status", ""))
        if shipped:
            label = f"shipped: {s.name} · {', '.join(models) or 'model?'} · {date}"
        else:
            label = f"{s.name} · {', '.join(models)} · {date}" + ("" if status == "done" else f" ({status})")
        rows.append({"sweep_key": f"{store_label}#{s.id}", "sweep_id": s.id, "label": label, "status": status,
                     "task_set": task_set_of(cfg), "models": ", ".join(models), "date": date,
                     "settings": settings, "store": store_label, "shipped": shipped,
                     "trials": int(counts.get(s.id, 0))})
    return pd.DataFrame(rows, columns=["sweep_key", "sweep_id", "label", "status", "task_set", "models", "date",
                                       "settings", "store", "shipped", "trials"])


def combine_stores(loaded: list[tuple[str, bool, str, pd.DataFrame, pd.DataFrame]]) -> tuple[pd.DataFrame, pd.DataFrame]:
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
