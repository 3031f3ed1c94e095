"""Compare arms side by side: accuracy with its interval, cost per 1,000 questions, paired differences
with an exact McNemar test, the Pareto front, a computed recommendation and a sample-size planner.

UI-free: a trials DataFrame (the run store's columns, components.run.schema) in, tables and plain
sentences out. An *arm* is strategy x parameters x model, named by `sweeps.arm_label`.

Statistics (all from scipy; each checked in tests/test_compare.py against numbers worked by hand):
- accuracy: the share of scored trials whose primary metric is correct, with a Wilson 95% interval
  (components.core.stats, scipy's binomtest);
- a pair of arms: trials are matched on task and cell (length and position, or documents and gold
  index), so the comparison is paired. The difference of accuracies gets Newcombe's hybrid score
  interval for paired data (Newcombe 1998, Stat Med 17:2635, method 10: Wilson limits of each
  accuracy combined with the phi correlation, continuity-corrected), which stays inside [-1, 1] and
  covers well at small n where the paired Wald interval does not; the p-value is McNemar's exact
  test, a two-sided binomial test of b against b + c discordant pairs at 1/2 (scipy binomtest);
- many pairs: Holm's step-down adjustment over the family of pairs shown (statsmodels multipletests,
  method="holm"; Holm 1979), beside the raw p-values; every verdict reads the adjusted ones;
- the verdict (`verdict`): a cheaper arm only when non-inferior within a margin (the 95% paired interval's
  lower bound above -margin, default 5 points) and saving at least a minimum (default 10% of the cost);
  the decision here, its record and its wording in report.verdict;
- planner: pairs needed for McNemar's test to find a difference d (report.planner, Connor 1987).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace

import pandas as pd

from components.core import evidence, stats
from components.core.cells import Cell
from components.providers import pricing
from components.report import analysis, sweeps
from components.report.pairstats import POOLED_CI, POOLED_TEST, pair_stats
from components.report.planner import DEFAULT_DIFFERENCE, PairsPlan, pairs_needed, pairs_plan
from components.report.verdict import (
    ALPHA,
    DEFAULT_MARGIN,
    DEFAULT_MIN_SAVING,
    REFERENCE_MODEL,
    Against,
    Figures,
    Verdict,
)

ARM_COLUMNS = ("strategy", "params", "model")
MATCH_COLUMNS = (
    "task",
    *Cell.columns,
    "contexts",
    "questions_per_context",
    "mq_document",
)  # a multi-question trial: its question in one document of K contexts
ARM_TABLE = [
    "label",
    "strategy",
    "params",
    "model",
    "n",
    "correct",
    "accuracy",
    "lo",
    "hi",
    "errors",
    "trials",
    "calls_per_question",
    "latency_s_per_question",
    "input_tokens_per_question",
    "output_tokens_per_question",
    "cached_input_tokens_per_question",
    "cache_write_tokens_per_question",
    "priced_as",
    "batch",
    "cost_per_1000_usd",
    "dominated",
]


# --- trials -> scored 0/1 values --------------------------------------------------------------------


def correct(values: pd.Series) -> pd.Series:
    """A trial is correct when its primary metric is non-zero: the Playground's verdict rule
    (webapp/services/live.py, `bool(trial.primary)`). Every primary metric (fuzzy match, subspan EM, exact
    match) is 0 or 1 already; NaN (not scored) stays NaN."""
    v = pd.to_numeric(values, errors="coerce")
    return v.where(v.isna(), (v > 0).astype(float))


def prepare(df: pd.DataFrame) -> pd.DataFrame:
    """Trials with `arm` (the label), `ok` (1/0, NaN when not scored: an error or no value) and the
    match key columns filled in (a store made before documents sweeps lacks them)."""
    out = df.reset_index(drop=True).copy()
    for c in (*ARM_COLUMNS, *MATCH_COLUMNS):
        if c not in out.columns:
            out[c] = None
    keys = out[list(ARM_COLUMNS)].astype(str)
    combos = keys.drop_duplicates()
    names = {
        tuple(r): sweeps.arm_label(dict(zip(ARM_COLUMNS, r, strict=True)))
        for r in combos.itertuples(index=False)
    }
    rows = zip(*(keys[c].to_numpy(dtype=object) for c in ARM_COLUMNS), strict=True)  # numpy: fast to iterate
    out["arm"] = [names[r] for r in rows] if len(out) else pd.Series(dtype=str)
    primary = out[sweeps.PRIMARY] if sweeps.PRIMARY in out.columns else sweeps.primary_values(out)
    ok = correct(primary)
    ok[analysis.is_error(out)] = math.nan
    out["ok"] = ok
    out["match_key"] = _key(out)  # once here, not per pair (a 100k-trial store has 14 lookups per view)
    return out


def default_arms(t: pd.DataFrame, ranked: list[str], most: int = 3) -> list[str]:
    """The arms to open on: those of the one sweep with the most arms (they share tasks and cells,
    so they can be paired), best first, at most `most`; arms from different sweeps (other task
    sets) rarely match any trial. `t` is prepare()'d; `ranked` the arm labels, best first."""
    if "sweep_key" not in t.columns or t.empty:
        return ranked[:most]
    per = t.groupby("sweep_key")["arm"].agg(lambda a: set(a))
    best = max(per.index, key=lambda k: (len(per[k]), (t["sweep_key"] == k).sum()))
    if len(per[best]) < 2:
        return ranked[:most]
    return [a for a in ranked if a in per[best]][:most]


def filter_length(df: pd.DataFrame, length: int | None) -> pd.DataFrame:
    """Trials of one document length (None: all lengths)."""
    if length is None or "length" not in df.columns:
        return df
    return df[pd.to_numeric(df["length"], errors="coerce") == int(length)]


# --- prices -------------------------------------------------------------------------------------------


def price_for(model: str, prices: dict | None = None) -> tuple[str, dict | None]:
    """(provider:model, {"input", "output"} per 1M tokens or None) for a trial's model string or a model
    named without its provider ('gpt-4o-mini' is looked up under every provider of the table)."""
    table = prices if prices is not None else pricing.PRICES
    provider, _, name = str(model).partition(":")
    if not name:
        provider, name = "", provider
    if provider in pricing.FREE_PROVIDERS:
        return f"{provider}:{name}", {"input": 0.0, "output": 0.0}
    if provider:
        price = pricing.price_of(provider, name, table)
        if price is None and provider == "openai-compatible":
            price = {"input": 0.0, "output": 0.0}  # self-hosted (components.providers.pricing)
        return f"{provider}:{name}", price
    for prov in table:
        price = pricing.price_of(prov, name, table)
        if price is not None:
            return f"{prov}:{name}", price
    return name, None


def cost_per_1000(
    input_tokens: float,
    output_tokens: float,
    model: str,
    *,
    batch: bool = False,
    prices: dict | None = None,
    cached_input_tokens: float = 0,
    cache_write_tokens: float = 0,
) -> float | None:
    """Dollars for 1,000 questions of `input_tokens` and `output_tokens` each (all stages) at `model`'s
    list price, or at its batch price (the provider's batch discount); None when the price is unknown.
    The part of the input the provider read from (`cached_input_tokens`) or wrote to
    (`cache_write_tokens`) its prompt cache is billed at the cached rates (providers.pricing)."""
    priced_as, price = price_for(model, prices)
    if price is None or pd.isna(input_tokens) or pd.isna(output_tokens):
        return None
    provider, _, name = priced_as.partition(":")
    usd = pricing.cost_usd(
        provider,
        name,
        input_tokens,
        output_tokens,
        prices,
        batch=batch,
        cached_input_tokens=0 if pd.isna(cached_input_tokens) else cached_input_tokens,
        cache_write_tokens=0 if pd.isna(cache_write_tokens) else cache_write_tokens,
    )
    return None if usd is None else 1000 * usd


# --- per arm --------------------------------------------------------------------------------------------


def _mean(values) -> float:
    v = pd.to_numeric(values, errors="coerce")
    return float(v.mean()) if v.notna().any() else math.nan


def seconds_text(x) -> str:
    """Seconds per question as shown everywhere (page, report, CLI): "unknown" when no call was timed."""
    return "unknown" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.2f}"


def _cache_mean(g: pd.DataFrame, column: str) -> float:
    """Mean prompt-cache tokens per trial (a trial stored before they were counted has none: 0)."""
    if column not in g.columns:
        return 0.0
    v = pd.to_numeric(g[column], errors="coerce").fillna(0)
    return float(v.mean()) if len(v) else 0.0


def _timed_mean(values) -> float:
    """Mean seconds over the trials whose calls were timed. A batch API reports no time per request, so
    its trials store 0 s; they are left out, and an arm with none timed is NaN ("unknown"), not 0."""
    v = pd.to_numeric(values, errors="coerce")
    v = v[v > 0] if v is not None else v
    return float(v.mean()) if v is not None and len(v) else math.nan


def arms(
    df: pd.DataFrame, *, price_model: str | None = None, batch: bool = False, prices: dict | None = None
) -> pd.DataFrame:
    """One row per arm: n (scored trials), correct, accuracy with its Wilson 95% interval, errors,
    trials, and per question (means over all its trials, failed ones too: they cost as well) calls,
    seconds in calls, input and output tokens and dollars per 1,000 questions, priced at the arm's own
    model or at `price_model` for all. `dominated` marks arms off the Pareto front."""
    t = df if "ok" in df.columns else prepare(df)
    rows = []
    for label, g in t.groupby("arm", sort=True):
        ok = g["ok"].dropna()
        if stats.sampled(g):  # repeated samples: n questions, each its samples' mean, clustered interval
            found = stats.pooled_stats(g["ok"], g["match_key"])
            n, k, lo, hi = found["n"], found["successes"], found["lo"], found["hi"]
        else:
            n, k = int(len(ok)), int(ok.sum())
            lo, hi = stats.proportion_ci(k, n, empty=stats.NO_INTERVAL)
        tin, tout = _mean(g.get("input_tokens")), _mean(g.get("output_tokens"))
        tcached, twritten = _cache_mean(g, "cached_input_tokens"), _cache_mean(g, "cache_write_tokens")
        model = price_model or str(g["model"].iloc[0])
        priced_as, _ = price_for(model, prices)
        rows.append(
            {
                "label": label,
                "strategy": g["strategy"].iloc[0],
                "params": g["params"].iloc[0],
                "model": g["model"].iloc[0],
                "n": n,
                "correct": k,
                "accuracy": k / n if n else math.nan,
                "lo": lo,
                "hi": hi,
                "errors": int(analysis.is_error(g).sum()),
                "trials": int(len(g)),
                "calls_per_question": _mean(g.get("calls")),
                "latency_s_per_question": _timed_mean(g.get("latency_s")),
                "input_tokens_per_question": tin,
                "output_tokens_per_question": tout,
                "cached_input_tokens_per_question": tcached,
                "cache_write_tokens_per_question": twritten,
                "priced_as": priced_as,
                "batch": bool(batch),
                "cost_per_1000_usd": cost_per_1000(
                    tin,
                    tout,
                    model,
                    batch=batch,
                    prices=prices,
                    cached_input_tokens=tcached,
                    cache_write_tokens=twritten,
                ),
            }
        )
    out = pd.DataFrame(rows, columns=ARM_TABLE[:-1])
    out["dominated"] = dominated(out)
    return out


def dominated(table: pd.DataFrame) -> pd.Series:
    """True for an arm another arm beats: at least as accurate and at most as costly, better in one.
    Arms without a known cost or without scored trials are never on the front (True)."""
    acc = pd.to_numeric(table.get("accuracy"), errors="coerce")
    cost = pd.to_numeric(table.get("cost_per_1000_usd"), errors="coerce")
    out = []
    for i in table.index:
        if pd.isna(acc[i]) or pd.isna(cost[i]):
            out.append(True)
            continue
        others = (acc >= acc[i]) & (cost <= cost[i]) & ((acc > acc[i]) | (cost < cost[i]))
        out.append(bool(others.drop(i).any()))
    return pd.Series(out, index=table.index, dtype=bool)


# --- per pair ---------------------------------------------------------------------------------------------


def _key(df: pd.DataFrame) -> pd.Series:
    cols = [[_fmt(v) for v in df[c].to_numpy(dtype=object)] for c in MATCH_COLUMNS if c in df.columns]
    return pd.Series(
        ["|".join(r) for r in zip(*cols, strict=True)] if cols else [""] * len(df), index=df.index
    )


def _fmt(v) -> str:
    if v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)):
        return ""
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def matched(df: pd.DataFrame, a: str, b: str) -> tuple[pd.DataFrame, int, int]:
    """(pairs, left out of A, left out of B): scored trials of arms a and b matched on task and cell
    (MATCH_COLUMNS; the model is each arm's own, so it is not a match key). A trial without a partner,
    or a repeat of a key already matched, is left out and counted."""
    t = df if "ok" in df.columns else prepare(df)
    sides = []
    for label in (a, b):
        s = t[(t["arm"] == label) & t["ok"].notna()].copy()
        s["key"] = s["match_key"] if "match_key" in s else _key(s)
        sides.append(s)
    sa, sb = sides
    da, db = (_one_per_question(s) for s in sides)
    pairs = da.merge(db, on="key", suffixes=("_a", "_b"))
    return pairs, len(da) - len(pairs), len(db) - len(pairs)


def _one_per_question(side: pd.DataFrame) -> pd.DataFrame:
    """One row per match key: its repeated samples pooled (`ok` their mean, core.stats.question_means: the one
    pooling of curves and shape tests, the other columns its last sample's), else the last repeat."""
    last = side.drop_duplicates("key", keep="last")
    if not stats.sampled(side):
        return last
    means = stats.question_means(side, ["key"], "ok")
    return last.assign(ok=last["key"].map(means), samples=last["key"].map(side.groupby("key").size()))


@dataclass(frozen=True)
class Pair:
    """The paired comparison of arm a with arm b over their matched trials (compare_pair)."""

    a: str
    b: str
    n_matched: int
    left_out: int  # trials of either arm without a partner (or a repeat of a matched key)
    left_out_a: int
    left_out_b: int
    both_correct: int
    only_a: int
    only_b: int
    neither: int
    accuracy_a: float
    accuracy_b: float
    diff: float  # acc(a) - acc(b)
    ci: list  # Newcombe's 95% interval of diff
    p_value: float  # exact McNemar
    ci_method: str = "Newcombe paired hybrid score (1998, method 10)"
    test: str = "exact McNemar (binomial test of discordant pairs)"
    p_holm: float = math.nan  # Holm-adjusted over the pairs shown (with_holm)
    correction: str = ""
    samples_pooled: bool = False  # repeated samples: each pair a question, its value its samples' mean

    @property
    def discordance(self) -> float | None:
        """The share of matched pairs the two arms answered differently (None without pairs)."""
        return (self.only_a + self.only_b) / self.n_matched if self.n_matched else None

    def to_dict(self) -> dict:
        """The JSON form (`litm compare --json`): every field by name."""
        return asdict(self)


def compare_pair(df: pd.DataFrame, a: str, b: str) -> Pair:
    """The paired comparison of arm a with arm b: n_matched, left out, the 2x2 table, accuracies over the
    matched trials, diff = acc(a) - acc(b) with Newcombe's interval, and McNemar's exact p-value."""
    pairs, left_a, left_b = matched(df, a, b)
    found = pair_stats(pairs["ok_a"], pairs["ok_b"])
    both, a_only, b_only, neither = found["cells"]
    n = len(pairs)
    lo, hi = found["ci"]
    pooled = bool(found["pooled"])
    return Pair(
        a=a,
        b=b,
        n_matched=n,
        left_out=left_a + left_b,
        left_out_a=left_a,
        left_out_b=left_b,
        both_correct=both,
        only_a=a_only,
        only_b=b_only,
        neither=neither,
        accuracy_a=(both + a_only) / n if n else math.nan,
        accuracy_b=(both + b_only) / n if n else math.nan,
        diff=found["diff"],
        ci=[lo, hi],
        p_value=found["p_value"],
        ci_method=POOLED_CI if pooled else Pair.ci_method,
        test=POOLED_TEST if pooled else Pair.test,
        samples_pooled=pooled,
    )


def pairs(df: pd.DataFrame, labels: list[str]) -> list[Pair]:
    """Every pair of the chosen arms, in the given order (a before b)."""
    t = df if "ok" in df.columns else prepare(df)
    return [
        compare_pair(t, labels[i], labels[j]) for i in range(len(labels)) for j in range(i + 1, len(labels))
    ]


def by_position(df: pd.DataFrame, a: str, b: str, x: str = "position") -> pd.DataFrame:
    """Per answer position (or gold index): matched pairs, diff = acc(a) - acc(b), its interval, p."""
    pairs_, _, _ = matched(df, a, b)
    col = f"{x}_a"
    rows = []
    if pairs_.empty or col not in pairs_:
        return pd.DataFrame(columns=[x, "n_matched", "diff", "lo", "hi", "p_value"])
    for value, g in pairs_.groupby(col, sort=True, dropna=True):
        found = pair_stats(g["ok_a"], g["ok_b"])
        lo, hi = found["ci"]
        rows.append(
            {
                x: value,
                "n_matched": len(g),
                "diff": found["diff"],
                "lo": lo,
                "hi": hi,
                "p_value": found["p_value"],
            }
        )
    return pd.DataFrame(rows)


def failures(df: pd.DataFrame, a: str, b: str) -> pd.DataFrame:
    """Matched trials that at least one arm got wrong, with both answers side by side."""
    pairs_, _, _ = matched(df, a, b)
    if pairs_.empty:
        return pd.DataFrame(
            columns=["task", *Cell.columns, "question", "answers", "answer_a", "ok_a", "answer_b", "ok_b"]
        )
    bad = pairs_[(pairs_["ok_a"] < 1) | (pairs_["ok_b"] < 1)]  # pooled samples: not right every time
    out = pd.DataFrame({c: bad.get(f"{c}_a") for c in MATCH_COLUMNS})
    for c in ("question", "answers"):
        out[c] = bad.get(f"{c}_a")
    for side in ("a", "b"):
        out[f"answer_{side}"] = bad.get(f"answer_{side}")
        ok = bad[f"ok_{side}"]
        out[f"ok_{side}"] = ok.astype(int) if ok.isin([0.0, 1.0]).all() else ok  # a pooled share stays
    for c in FAILURE_SOURCES:  # where each side's trial is stored: the app fetches the texts it lacks
        for side in ("a", "b"):
            if f"{c}_{side}" in bad:
                out[f"{c}_{side}"] = bad[f"{c}_{side}"]
    return out.reset_index(drop=True)


FAILURE_SOURCES = ("trial_id", "store_path", "shipped")


# --- recommendation: the decision (report.verdict words it) -----------------------------------------------


def _pair_of(pair_list: list[Pair], a: str, b: str) -> tuple[Pair | None, int]:
    """The pair (a, b) and the sign that turns its diff into acc(a) - acc(b)."""
    for p in pair_list:
        if p.a == a and p.b == b:
            return p, 1
        if p.a == b and p.b == a:
            return p, -1
    return None, 1


def _versus(p: Pair, sign: int) -> tuple[float, tuple[float, float]]:
    """acc(other) - acc(best) and its interval from the pair (best, other), `sign` as _pair_of gives."""
    if sign > 0:  # the pair is (best, other): diff = acc(best) - acc(other)
        return -p.diff, (-p.ci[1], -p.ci[0])
    return p.diff, (p.ci[0], p.ci[1])


def _tokens(row) -> float:
    t = (
        row.input_tokens_per_question if row.input_tokens_per_question == row.input_tokens_per_question else 0
    ) + (
        row.output_tokens_per_question
        if row.output_tokens_per_question == row.output_tokens_per_question
        else 0
    )
    return float(t)


def _reference_cost(row, reference: str) -> float | None:
    return cost_per_1000(row.input_tokens_per_question, row.output_tokens_per_question, reference)


def _figures(row) -> Figures:
    return Figures(label=row.label, accuracy=float(row.accuracy), n=int(row.n), cost=float(row.cost_))


def _against(row, p: Pair, sign: int, share: float = math.nan) -> Against:
    """`row`'s arm against the most accurate one, from their pair."""
    d, (lo, hi) = _versus(p, sign)
    return Against(_figures(row), d, lo, hi, p.n_matched, p.p_value, p.p_holm, share)


def _with_saving(rule: Verdict, rec, other) -> Verdict:
    """The rule with `rec` recommended against `other` and the saving between them (dollars; tokens and
    dollars at the reference price when every arm is free)."""
    saving = _saving(rec, other)
    out = replace(
        rule, recommend=rec.label, versus=None if other is None else other.label, saving_per_1000_usd=saving
    )
    if other is None:
        return out
    out = replace(out, tokens_saved_per_question=_tokens(other) - _tokens(rec))
    if rule.free and rule.reference:
        a, b = _reference_cost(rec, rule.reference), _reference_cost(other, rule.reference)
        out = replace(out, reference_saving_per_1000_usd=None if a is None or b is None else b - a)
    return out


def _cheaper_arms(
    best, rest: pd.DataFrame, pair_list: list[Pair], margin: float, min_saving: float
) -> tuple[list[tuple], list[tuple]]:
    """(non-inferior within `margin`, not yet shown within it): (row, pair, Against) of each arm cheaper
    than `best` by at least `min_saving` of its cost; an arm shown worse (Holm p < alpha) is in neither."""
    cheaper, not_shown = [], []
    for r in rest.itertuples():
        p, sign = _pair_of(pair_list, best.label, r.label)
        if p is None or not p.n_matched or pd.isna(r.cost_) or pd.isna(best.cost_) or best.cost_ <= 0:
            continue
        share = (best.cost_ - r.cost_) / best.cost_
        if share <= 0 or share < min_saving:
            continue
        against = _against(r, p, sign, share)
        if against.lo > -margin:
            cheaper.append((r, p, against))
        elif not (p.p_holm < ALPHA and against.diff < 0):  # an arm shown worse is no candidate at all
            not_shown.append((r, p, against))
    return cheaper, not_shown


def _cheaper_verdict(rule: Verdict, best, cheaper: list[tuple]) -> Verdict:
    """Step 1: the cheapest non-inferior arm; of equally cheap ones the most accurate (two arms at one
    price are not a coin toss)."""
    row, _, against = min(cheaper, key=lambda c: (c[0].cost_, -c[0].accuracy))
    return replace(_with_saving(rule, row, best), kind="cheaper", confidence="confident", chosen=against)


def _with_not_shown(rule: Verdict, not_shown: list[tuple]) -> Verdict:
    """The rule with the cheapest arm not yet shown within the margin and the matched trials that would
    show it (unchanged when there is none)."""
    if not not_shown:
        return rule
    _, pair, against = min(not_shown, key=lambda c: c[0].cost_)
    need = pairs_needed(rule.margin, pair.discordance)
    return replace(rule, not_shown=against, not_shown_pairs=need, pairs_needed=need)


def _cheapness(r) -> tuple:
    """How an arm ranks for price: dollars per 1,000 questions (unknown last), then tokens a question
    (what any price charges for), then the more accurate."""
    cost = r.cost_ if r.cost_ == r.cost_ else math.inf
    return (cost, _tokens(r), -r.accuracy)


def _compared(best, rest: pd.DataFrame, pair_list: list[Pair]) -> tuple[list[tuple], list]:
    """(Holm p, row, pair, acc(row) - acc(best)) of every arm with trials matching `best`'s, and the rows
    of the arms without."""
    compared, unpaired = [], []
    for r in rest.itertuples():
        p, sign = _pair_of(pair_list, best.label, r.label)
        if p is None or not p.n_matched:
            unpaired.append(r)
        else:
            compared.append((p.p_holm, r, p, _versus(p, sign)[0]))
    return compared, unpaired


def _tie_verdict(rule: Verdict, best, compared: list[tuple], unpaired: list, difference: float) -> Verdict:
    """Step 3, a tie: the cheapest of the arms the data cannot tell from the most accurate one, not yet,
    with the matched trials that would tell them apart."""
    p_max, runner, p, d = max(compared, key=lambda c: (c[0], -abs(c[3])))
    tied = [best] + [c[1] for c in compared if not (c[0] < ALPHA and c[3] < 0)]
    rec = min(tied, key=_cheapness)
    gap = max(abs(d) if d == d and d != 0 else difference, 0.01)
    need = pairs_plan(p, difference=gap).pairs
    if rec.label == best.label:
        other, reason = runner, "also cheapest" if _cheapness(best) < _cheapness(runner) else "none cheaper"
    else:
        other, reason = best, "cheaper" if len(tied) == 2 else "cheapest"
    return replace(
        _with_saving(rule, rec, other),
        kind="tie",
        confidence="not yet",
        pairs_needed=rule.pairs_needed or need,
        closest=_against(runner, p, _pair_of([p], best.label, runner.label)[1]),
        largest_p=p_max,
        tied=tuple(r.label for r in [rec, *(x for x in tied if x.label != rec.label)]),
        tie_reason=reason,
        equal=d == 0 and len(tied) == 2,
        gap=gap,
        tie_pairs=need,
        unpaired=tuple(r.label for r in unpaired),
    )


def _best_verdict(
    rule: Verdict, best, rest: pd.DataFrame, pair_list: list[Pair], difference: float
) -> Verdict:
    """Step 2: the most accurate arm against the others: confident when it beats every one at Holm p <
    alpha; else a tie (step 3)."""
    rule = replace(rule, family=len(pair_list))
    compared, unpaired = _compared(best, rest, pair_list)
    if not compared:
        return replace(rule, missing="matches")
    p_max, _, _, d = max(compared, key=lambda c: (c[0], -abs(c[3])))
    if p_max < ALPHA and not unpaired and d < 0:
        cheapest = min((c[1] for c in compared), key=_cheapness)
        return replace(
            _with_saving(rule, best, cheapest), kind="winner", confidence="confident", largest_p=p_max
        )
    return _tie_verdict(rule, best, compared, unpaired, difference)


def verdict(
    arm_table: pd.DataFrame,
    pair_list: list[Pair],
    *,
    margin: float = DEFAULT_MARGIN,
    min_saving: float = DEFAULT_MIN_SAVING,
    difference: float = DEFAULT_DIFFERENCE,
    reference: str = REFERENCE_MODEL,
) -> Verdict:
    """The decision, computed from the tables, with Holm-adjusted p-values (Pair.p_holm) only; its
    wording is report.verdict's.

    1. The most accurate arm is the reference. A CHEAPER arm is recommended only when it is
       non-inferior within `margin` (the lower bound of the 95% paired interval of acc(cheaper) -
       acc(best) is above -margin) AND saves at least `min_saving` of the reference's cost: the
       cheapest such arm, "confident".
    2. Else the most accurate arm when it beats every other arm at Holm-adjusted p < 0.05, "confident".
    3. Else a tie: the data cannot tell the most accurate arm from some others, so the cheapest of those
       (dollars, then tokens a question) is recommended, "not yet", with the matched trials that would
       tell them apart (and, for a cheaper arm not yet shown within the margin, those a non-inferiority
       check needs).
    Where every arm runs free (a local model), the saving is in tokens, and in dollars at `reference`'s
    list price."""
    rule = Verdict(margin=margin, min_saving=min_saving)
    t = arm_table[arm_table["n"] > 0] if not arm_table.empty else arm_table
    if len(t) < 2:
        return replace(rule, missing="arms")
    t = t.assign(cost_=pd.to_numeric(t["cost_per_1000_usd"], errors="coerce"))
    if bool((t["cost_"] == 0).all()):
        rule = replace(rule, free=True, reference=reference if price_for(reference)[1] is not None else None)
    # the reference: the most accurate arm; among equally accurate ones the dearest, so that a cheaper
    # equal one is judged by the rule below (non-inferior and saving enough), never crowned by a tie
    best = next(
        t.sort_values(["accuracy", "cost_"], ascending=[False, False], na_position="last").itertuples()
    )
    rule = replace(rule, best=_figures(best))
    rest = t[t["label"] != best.label]
    cheaper, not_shown = _cheaper_arms(best, rest, pair_list, margin, min_saving)
    if cheaper:
        return _cheaper_verdict(rule, best, cheaper)
    return _best_verdict(_with_not_shown(rule, not_shown), best, rest, pair_list, difference)


def _saving(best, other) -> float | None:
    """Dollars per 1,000 questions the recommended arm saves against `other` (negative: it costs more)."""
    if other is None or pd.isna(best.cost_) or pd.isna(other.cost_):
        return None
    return float(other.cost_ - best.cost_)


def with_holm(pair_list: list[Pair]) -> list[Pair]:
    """Each pair with `p_holm`: Holm's adjustment over the family of pairs shown (core.evidence.holm)."""
    adjusted = evidence.holm([p.p_value for p in pair_list])
    return [
        replace(p, p_holm=adj, correction=f"Holm over {len(pair_list)} pairs")
        for p, adj in zip(pair_list, adjusted, strict=True)
    ]


def known_labels(t: pd.DataFrame, labels: list[str], known: set[str]) -> list[str]:
    """`labels` with an arm named by its raw ids ('rr k=3 r=5000 · gpt-4o-mini', sweeps.arm_id: older
    links and scripts) given its display name."""
    if all(x in known for x in labels):
        return list(labels)
    combos = t[list(ARM_COLUMNS)].astype(str).drop_duplicates() if len(t) else pd.DataFrame()
    ids = {sweeps.arm_id(r): sweeps.arm_label(r) for r in combos.to_dict("records")}
    return [x if x in known else ids.get(x, x) for x in labels]


@dataclass(frozen=True)
class Comparison:
    """Everything `compare` computes: the arms' table (`arms`, compare.arms' columns), every pair of arms
    (`pairs`, with Holm-adjusted p), the decision (`verdict`), the planner's answer for the first pair
    (`plan`) and the prepared trials (`trials`)."""

    arms: pd.DataFrame
    pairs: list[Pair]
    verdict: Verdict
    plan: PairsPlan
    trials: pd.DataFrame

    @property
    def recommendation(self) -> str:
        """The verdict's text: its one line, then the reasoning."""
        return self.verdict.text


def compare(
    df: pd.DataFrame,
    labels: list[str] | None = None,
    *,
    length: int | None = None,
    price_model: str | None = None,
    batch: bool = False,
    prices: dict | None = None,
    difference: float = DEFAULT_DIFFERENCE,
    margin: float = DEFAULT_MARGIN,
    min_saving: float = DEFAULT_MIN_SAVING,
) -> Comparison:
    """Everything at once (a Comparison). `labels` chooses arms (default: all arms of the trials, most
    accurate first)."""
    t = filter_length(df, length)
    t = t if "ok" in t.columns else prepare(t)  # the page passes prepared trials: not twice
    table = arms(t, price_model=price_model, batch=batch, prices=prices)
    if labels:
        labels = known_labels(t, labels, set(table["label"]))
        unknown = [x for x in labels if x not in set(table["label"])]
        if unknown:
            raise LookupError(f"no arm named {unknown[0]!r}; arms: {', '.join(table['label'])}")
        table = table.set_index("label").loc[labels].reset_index()
        table["dominated"] = dominated(table)
    else:
        table = table.sort_values(["accuracy", "cost_per_1000_usd"], ascending=[False, True]).reset_index(
            drop=True
        )
    chosen = list(table["label"])
    pair_list = with_holm(pairs(t, chosen))
    top = pair_list[0] if pair_list else None
    return Comparison(
        arms=table,
        pairs=pair_list,
        verdict=verdict(table, pair_list, margin=margin, min_saving=min_saving, difference=difference),
        plan=pairs_plan(top, table, difference=difference, cells_per_task=cells_per_task(t, chosen[:2])),
        trials=t,
    )


def cells_per_task(df: pd.DataFrame, labels: list[str]) -> int:
    """Distinct cells (length and position, or documents and gold index) the given arms ran, at least 1."""
    t = df if "arm" in df.columns else prepare(df)
    part = t[t["arm"].isin(labels)]
    return max(1, int(part[list(MATCH_COLUMNS[1:])].astype(str).drop_duplicates().shape[0]))
