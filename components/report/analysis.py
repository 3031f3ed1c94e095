"""Trials (a DataFrame of the run store's trial columns) -> accuracy with n and a confidence interval.

UI-free. Every accuracy comes with n (scored trials), the number of successes and a 95% interval:
Wilson for 0/1 scores (components.core.stats), a normal interval of the mean for fractional ones
(page recall, precision). Trials with an error are counted as errors and never scored.
Sweep and arm labels, and the stores combined into one frame: components.report.sweeps; published
curves on our axes: components.report.overlays.
"""

from __future__ import annotations

import math

import pandas as pd

from components.core.positions import first_pages
from components.core.stats import NO_INTERVAL, pooled_stats, proportion_ci, question_of, sampled
from components.report.sweeps import model_title, strategy_label, with_setting

STAT_COLUMNS = ["n", "successes", "mean", "lo", "hi", "errors"]


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
        lo, hi = proportion_ci(total, n, empty=NO_INTERVAL)
    else:
        sd = float(v.std(ddof=1)) if n > 1 else 0.0
        half = 1.96 * sd / math.sqrt(n)
        lo, hi = max(0.0, mean - half), min(1.0, mean + half)
    return {"n": n, "successes": total, "mean": mean, "lo": lo, "hi": hi, "errors": errors}


# ALR2 §5.1 defines its retrieval measures over every retrieved sentence (gold fact) of a cell, pooled:
# Hallucination = 1 - (1/N) sum_i 1{z_i in c_i}, N all retrieved sentences. A trial stores its counts
# (run/schema.Trial); a cell's rate is the sum of one over the sum of the other, not a mean of rates
# (one trial with 1 invented sentence and one with 9 found ones: 0.1, not 0.5).
POOLED = {
    "hallucination_rate": ("sentences_hallucinated", "sentences_retrieved"),
    "sentence_recall": ("gold_facts_recalled", "gold_facts"),
}


def _pooled_stats(group: pd.DataFrame, metric: str, errors: int) -> dict:
    """A pooled rate (POOLED) over the trials of a group that stored its counts. n is the trials
    pooled, successes the pooled count (hallucinated sentences, recalled facts). The 95% interval is
    the wider of a Wilson interval on the pooled counts and a ratio estimator's interval that takes
    the trials as clusters (the sentences of one trial are not independent). A group whose trials
    predate the counts (a store written before them) falls back to the mean of the trials' rates."""
    num_col, den_col = POOLED[metric]
    if num_col not in group or den_col not in group:
        return _stats(group[metric], errors)
    num = pd.to_numeric(group[num_col], errors="coerce")
    den = pd.to_numeric(group[den_col], errors="coerce")
    has = num.notna() & den.notna() & (den > 0)
    if not has.any():
        return _stats(group[metric], errors)
    h, d = num[has].astype(float), den[has].astype(float)
    m, total, units = int(len(h)), float(h.sum()), float(d.sum())
    rate = total / units
    lo, hi = proportion_ci(min(total, units), int(units))
    if m > 1:
        se = math.sqrt(m / (m - 1) * float(((h - rate * d) ** 2).sum())) / units
        lo, hi = min(lo, max(0.0, rate - 1.96 * se)), max(hi, min(1.0, rate + 1.96 * se))
    return {"n": m, "successes": total, "mean": rate, "lo": lo, "hi": hi, "errors": errors}


def _group_stats(group: pd.DataFrame, metric: str, errors: int) -> dict:
    if metric in POOLED:
        return _pooled_stats(group, metric, errors)
    if sampled(group):  # repeated samples: n is the questions, the interval clustered by question
        found = pooled_stats(group[metric], question_of(group))
        return {**{k: found[k] for k in ("n", "successes", "mean", "lo", "hi")}, "errors": errors}
    return _stats(group[metric], errors)


def accuracy(df: pd.DataFrame, by: list[str], metric: str = "score") -> pd.DataFrame:
    """One row per group of `by`: n, successes, mean, lo, hi (95%), errors (trials not scored).
    ALR2's hallucination rate and sentence recall are pooled over the group's sentences (POOLED)."""
    by = [c for c in by if c in df.columns]
    if df.empty or metric not in df.columns:
        return pd.DataFrame(columns=[*by, *STAT_COLUMNS])
    df = df.reset_index(drop=True)
    err = is_error(df)
    if not by:
        return pd.DataFrame([_group_stats(df.loc[~err], metric, int(err.sum()))])
    rows = []
    for key, group in df.groupby(by, dropna=False, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        g_err = err.loc[group.index]
        rows.append(
            {**dict(zip(by, key, strict=True)), **_group_stats(group.loc[~g_err], metric, int(g_err.sum()))}
        )
    return pd.DataFrame(rows, columns=[*by, *STAT_COLUMNS])


def first_pages_mask(df: pd.DataFrame) -> pd.Series:
    """True for trials whose retrieval stage returned exactly pages 1, 2, ..., m in order (m >= 2):
    what a weak model answers to any question (components.core.positions.first_pages), counted apart."""
    if "retrieved_pages" not in df:
        return pd.Series(False, index=df.index)
    return (
        df["retrieved_pages"]
        .map(lambda v: first_pages(v) if isinstance(v, list | tuple) else False)
        .astype(bool)
    )


def series_label(df: pd.DataFrame, series: list[str]) -> pd.Series:
    """One readable label per row from the series columns, e.g. 'R&R · gpt-4o': a strategy or a model
    by its display name (report.sweeps), other columns as they are."""
    series = [c for c in series if c in df.columns]
    if not series:
        return pd.Series("all", index=df.index, dtype=object)
    names = {"strategy": strategy_label, "model": model_title}
    parts = [
        df[c].map({v: names[c](v) for v in df[c].unique()}).astype(str) if c in names else df[c].astype(str)
        for c in series
    ]
    out = parts[0]
    for p in parts[1:]:
        out = out + " · " + p
    return out


def u_curve(
    df: pd.DataFrame, metric: str = "score", series: tuple[str, ...] = ("strategy",), x: str = "position"
) -> pd.DataFrame:
    """Accuracy against answer position, one series per value of the `series` columns."""
    table = accuracy(df, [*series, x], metric)
    table["series"] = series_label(table, list(series))
    if table.empty:
        return table
    return table.sort_values(["series", x]).reset_index(drop=True)


def by_length(
    df: pd.DataFrame, metric: str = "score", series: tuple[str, ...] = ("strategy",)
) -> pd.DataFrame:
    """Accuracy against document length, one series per value of the `series` columns."""
    return u_curve(df, metric, series, x="length")


def heatmap(
    df: pd.DataFrame, metric: str = "score", rows: str = "length", cols: str = "position"
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(mean, n) matrices: rows are lengths, columns are answer positions (or, for a LITM sweep,
    rows="documents", cols="gold_index")."""
    table = accuracy(df, [rows, cols], metric)
    if table.empty:
        return pd.DataFrame(), pd.DataFrame()
    mean = table.pivot(index=rows, columns=cols, values="mean").sort_index().sort_index(axis=1)
    n = table.pivot(index=rows, columns=cols, values="n").reindex_like(mean).fillna(0).astype(int)
    return mean, n


COST_COLUMNS = {
    "calls": "calls",
    "input_tokens": "input tokens",
    "output_tokens": "output tokens",
    "cost_usd": "dollars",
}


def cost_table(
    df: pd.DataFrame, metric: str = "score", by: tuple[str, ...] = ("setting", "model")
) -> pd.DataFrame:
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


def position_kind(trials: pd.DataFrame) -> str:
    """'fraction' when every answer position is a fraction of the length (<= 1), else 'tokens'."""
    pos = pd.to_numeric(trials.get("position", pd.Series(dtype=float)), errors="coerce").dropna()
    return "fraction" if len(pos) and (pos <= 1).all() else "tokens"
