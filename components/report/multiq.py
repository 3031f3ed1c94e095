"""The multi-question design's results ("Context Overloading in RAG Based Systems", seed 004, §4-§5.3) for
Results and Compare, beside the paper's §5.3 numbers. UI-free: trials in, tables and plotly figures out.

A multi-question trial has `contexts` (K) and `questions_per_context` (Q) set (components.run.multiq):
one trial per question, the calls of a prompt held by its first question, so a group's sums are what
was sent and its per-question figures are sums divided by its questions.

- `table(df, metric)`: one row per arm (strategy setting, model) and (K, Q): questions, n scored, correct,
  accuracy with its Wilson 95% interval (report.analysis.accuracy: core.stats.proportion_ci), errors,
  the four categories (core.scoring.mq_category), calls, input and output tokens per question.
- `published(rows)`: the paper's §5.3 rows (report.published_004) as counts per (strategy, K, Q).
- `beside(ours, published)`: one table, ours and the paper's, row by row per K and strategy.
- `accuracy_figure`, `categories_figure`, `cost_figure`: the charts.

The paper sorted its mismatches by hand into incorrect, partially correct and not specified, and
published, per setting, only some of these counts (its whole-context runs: the incorrect ones). Its bars
here show what it published: incorrect, partially correct where given, and the rest of its questions
(counted correct by the paper's text: "9 incorrect" of 40 leaves 31).
"""

from __future__ import annotations

import math

import pandas as pd
import plotly.graph_objects as go

from components.core.metrics import PRIMARY
from components.core.scoring import CATEGORIES
from components.report.analysis import accuracy, is_error
from components.report.colours import PALETTE, colour_for, rgba
from components.report.sweeps import model_name, primary_values, strategy_label, with_setting
from components.report.theme import empty_note, esc, set_layout

K, Q = "contexts", "questions_per_context"
CATEGORY_LABELS = {
    "correct": "correct",
    "partial": "partially correct",
    "not_specified": "not specified",
    "wrong": "wrong",
}
CATEGORY_COLOURS = {
    "correct": PALETTE["green"],
    "partial": PALETTE["amber"],
    "not_specified": PALETTE["mid grey"],
    "wrong": PALETTE["red-orange"],
}
PAPER = "Mistral-7B-Instruct-v0.3 · Context Overloading §5.3"
ORDER = ("mq-full", "mq-chunked", "mq-keyword")  # the paper's order: whole context, chunks, keyword chunks


def _order(strategy) -> int:
    return ORDER.index(strategy) if strategy in ORDER else len(ORDER)


PAPER_SHORT = "paper §5.3"
TABLE_COLUMNS = [
    "arm",
    "setting",
    "strategy",
    "model",
    K,
    Q,
    "questions",
    "n",
    "hits",
    "accuracy",
    "lo",
    "hi",
    "errors",
    *CATEGORIES,
    "calls",
    "input_tokens",
    "output_tokens",
    "calls_per_question",
    "input_tokens_per_question",
    "output_tokens_per_question",
    "cost_usd",
]


def is_multi(df: pd.DataFrame) -> pd.Series:
    """True for the trials of a multi-question sweep (K set)."""
    if K not in df.columns:
        return pd.Series(False, index=df.index)
    return pd.to_numeric(df[K], errors="coerce").notna()


def trials(df: pd.DataFrame) -> pd.DataFrame:
    """The multi-question trials of df (K and Q as whole numbers)."""
    out = df[is_multi(df)].copy()
    for c in (K, Q):
        out[c] = pd.to_numeric(out[c], errors="coerce").astype(int) if len(out) else pd.Series(dtype=int)
    return out


def _values(df: pd.DataFrame, metric: str) -> pd.Series:
    if metric == PRIMARY and PRIMARY not in df.columns:
        return primary_values(df)
    if metric not in df.columns:
        return pd.Series(math.nan, index=df.index)
    return pd.to_numeric(df[metric], errors="coerce")


def table(df: pd.DataFrame, metric: str = "mq_match") -> pd.DataFrame:
    """One row per arm and (K, Q), in K order then arm (TABLE_COLUMNS; accuracy = the metric's mean over
    the n scored trials, hits its successes, lo/hi its 95% interval; the categories (correct, partial,
    not_specified, wrong) count the scored trials)."""
    t = trials(df)
    if t.empty:
        return pd.DataFrame(columns=TABLE_COLUMNS)
    t = with_setting(t)
    t["model_name"] = t["model"].map(model_name)
    t["arm"] = t["setting"] + " · " + t["model_name"]
    t["_value"] = _values(t, metric)
    by = ["arm", "setting", "strategy", "model_name", K, Q]
    acc = accuracy(t, by, "_value").rename(columns={"successes": "hits", "mean": "accuracy"})
    err = is_error(t)
    rows = []
    for key, g in t.groupby(by, sort=True):
        ok = g[~err.loc[g.index]]
        cats = ok["category"].value_counts() if "category" in ok else pd.Series(dtype=int)
        sums = {
            c: float(pd.to_numeric(g[c], errors="coerce").sum()) if c in g else 0.0
            for c in ("calls", "input_tokens", "output_tokens")
        }
        cost = pd.to_numeric(g["cost_usd"], errors="coerce") if "cost_usd" in g else pd.Series(dtype=float)
        questions = len(g)
        rows.append(
            {
                **dict(zip(by, key, strict=True)),
                "questions": questions,
                **{c: int(cats.get(c, 0)) for c in CATEGORIES},
                **sums,
                **{
                    f"{c}_per_question": sums[c] / questions
                    for c in ("calls", "input_tokens", "output_tokens")
                },
                "cost_usd": float(cost.sum()) if cost.notna().any() else math.nan,
            }
        )
    out = acc.merge(pd.DataFrame(rows), on=by).rename(columns={"model_name": "model"})
    out["hits"] = out["hits"].round().astype(int)
    out["_o"] = out["strategy"].map(_order)
    return out.sort_values([K, Q, "_o", "arm"], kind="stable").reset_index(drop=True)[TABLE_COLUMNS]


PUBLISHED_COLUMNS = [
    "strategy",
    "method",
    K,
    Q,
    "prompt_tokens",
    "questions",
    "incorrect",
    "partially_correct",
    "answered",
    "correct_or_partial",
    "correct",
    "what",
    "table",
    "model",
    "citation",
]


def published(rows: pd.DataFrame) -> pd.DataFrame:
    """The paper's §5.3 rows (one number each; report.published_004.load_published_004) as one row per
    (strategy, K, Q): its counts (NA where not published), `correct` = the questions it answered minus
    its incorrect and partially correct ones, and `what`: the counts in the paper's words."""
    if rows.empty:
        return pd.DataFrame(columns=PUBLISHED_COLUMNS)
    out = []
    for (strategy, k, q), g in rows.groupby(["strategy", K, Q], sort=True):
        value = {m: int(v) for m, v in zip(g["metric"], g["value"], strict=True)}
        first = g.iloc[0]
        questions = int(first["questions"])
        answered = value.get("answered", questions)
        incorrect = value.get("incorrect")
        partial = value.get("partially_correct")
        if incorrect is None and "correct_or_partial" in value:
            incorrect = answered - value["correct_or_partial"]
        correct = answered - (incorrect or 0) - (partial or 0)
        words = []
        if "answered" in value:
            words.append(f"{answered} of {questions} answered (then a timeout)")
        words.append(
            f"{incorrect} incorrect"
            if "incorrect" in value
            else f"{incorrect} incorrect (answered minus correct or partially correct)"
        )
        if partial is not None:
            words.append(f"{partial} partially correct")
        out.append(
            {
                "strategy": strategy,
                "method": first["method"],
                K: int(k),
                Q: int(q),
                "prompt_tokens": int(first["prompt_tokens"]),
                "questions": questions,
                "incorrect": incorrect,
                "partially_correct": partial,
                "answered": answered,
                "correct_or_partial": value.get("correct_or_partial"),
                "correct": correct,
                "what": ", ".join(words),
                "table": first["table"],
                "model": first["model"],
                "citation": first.get("citation", ""),
            }
        )
    return pd.DataFrame(out, columns=PUBLISHED_COLUMNS)


def _pct(x) -> str:
    return "" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:.0f}%"


def beside(ours: pd.DataFrame, paper: pd.DataFrame, *, every_k: bool = False) -> pd.DataFrame:
    """Ours and the paper's, one row each, by K, Q and strategy (ours first; ours named by their setting,
    'Multi-question: keyword chunks · chunk_tokens=600', and model): who, questions, accuracy with its interval, and the
    categories; the paper's rows for the K and Q of ours (every_k: all of them)."""
    rows = []
    for r in ours.itertuples(index=False):
        rows.append(
            {
                "K": getattr(r, K),
                "Q": getattr(r, Q),
                "strategy": r.setting,
                "source": f"{r.model} · this app",
                "questions": r.questions,
                "correct (95% CI)": (
                    f"{r.hits}/{r.n} = {_pct(r.accuracy)} ({_pct(r.lo)}–{_pct(r.hi)})"
                    if r.n
                    else "not measured"
                ),
                "partially correct": r.partial,
                "not specified": r.not_specified,
                "wrong": r.wrong,
                "incorrect as the paper counts it": r.wrong + r.not_specified,
                "errors": r.errors,
                "calls / question": round(r.calls_per_question, 3),
                "tokens in / question": round(r.input_tokens_per_question, 1),
                "tokens out / question": round(r.output_tokens_per_question, 1),
            }
        )
    have = {(int(getattr(r, K)), int(getattr(r, Q))) for r in ours.itertuples(index=False)}
    for r in paper.itertuples(index=False):
        if not every_k and (int(getattr(r, K)), int(getattr(r, Q))) not in have:
            continue
        rows.append(
            {
                "K": getattr(r, K),
                "Q": getattr(r, Q),
                "strategy": strategy_label(r.strategy),
                "source": f"{r.model} · {r.table} (published)",
                "questions": r.questions,
                "correct (95% CI)": f"{r.correct}/{r.answered} (published: {r.what})",
                "partially correct": r.partially_correct,
                "not specified": None,
                "wrong": None,
                "incorrect as the paper counts it": r.incorrect,
                "errors": None,
                "calls / question": None,
                "tokens in / question": None,
                "tokens out / question": None,
            }
        )
    out = pd.DataFrame(rows)
    if out.empty:
        return out
    out["_o"] = out["strategy"].str.split(" ").str[0].map(_order)
    out["_p"] = out["source"].str.endswith("(published)")
    out = out.sort_values(["K", "Q", "_o", "_p"], kind="stable").drop(columns=["_o", "_p"])
    for c in ("partially correct", "not specified", "wrong", "incorrect as the paper counts it", "errors"):
        out[c] = out[c].astype("Int64")
    return out.reset_index(drop=True)


# --- figures ----------------------------------------------------------------------------------------------


def _kq(k, q) -> str:
    return f"K = {int(k)}, Q = {int(q)}"


MQ_RANGE = (0.0, 1.08)  # a share's axis with room above 100% for the bars' printed counts


def accuracy_figure(
    tab: pd.DataFrame,
    *,
    metric_label: str = "two-way substring match",
    title: str = "Accuracy by number of contexts (K) and strategy",
    who: str = "",
) -> go.Figure:
    """Grouped bars: x = K (and Q), one bar per arm (its strategy's colour), 95% Wilson interval as error
    bars, "correct/n" printed on each bar; `who` ends each legend name (" · this app")."""
    fig = go.Figure()
    tab = tab[tab["n"] > 0] if len(tab) else tab
    for arm, part in tab.groupby("arm", sort=False):
        colour = colour_for(part["strategy"].iloc[0])
        xs = [_kq(k, q) for k, q in zip(part[K], part[Q], strict=True)]
        fig.add_trace(
            go.Bar(
                x=xs,
                y=part["accuracy"],
                name=f"{esc(arm)}{esc(who)} (n={int(part['n'].sum())})",
                legendgroup=esc(arm),
                marker=dict(color=colour, line=dict(color="#333", width=1)),
                error_y=dict(
                    type="data",
                    symmetric=False,
                    array=part["hi"] - part["accuracy"],
                    arrayminus=part["accuracy"] - part["lo"],
                    color="#333",
                    thickness=1.5,
                ),
                text=[f"{c}/{n}" for c, n in zip(part["hits"], part["n"], strict=True)],
                textposition="inside",
                insidetextanchor="start",
                customdata=part[["n", "lo", "hi", "errors", "hits"]].to_numpy(),
                hovertemplate=(
                    f"<b>{esc(arm)}</b><br>%{{x}}<br>{esc(metric_label)}: %{{y:.1%}} (%{{customdata[4]}} "
                    "of %{customdata[0]})<br>95% CI: %{customdata[1]:.1%} – %{customdata[2]:.1%}"
                    "<br>errors (not scored): %{customdata[3]}<extra></extra>"
                ),
            )
        )
    set_layout(
        fig,
        title,
        "contexts (K) and questions per context (Q)",
        "correct (share of the questions)",
        percent_range=MQ_RANGE,
    )
    fig.update_layout(barmode="group", bargap=0.25, uniformtext=dict(minsize=11, mode="hide"))
    if not len(tab):
        empty_note(fig, "No scored multi-question trials for this selection")
    return fig


def short_name(strategy) -> str:
    """'whole context' for 'mq-full': the strategy's display name without 'Multi-question: ' (as the
    Playground's picker shows it)."""
    return strategy_label(strategy).removeprefix("Multi-question: ")


def bar_names(tab: pd.DataFrame) -> list[str]:
    """A short name for each row's bar: its strategy, or its whole arm (lines apart) when two arms share
    a strategy."""
    shared = tab.groupby("strategy")["arm"].nunique() if len(tab) else pd.Series(dtype=int)
    return [
        esc(short_name(r.strategy))
        if shared.get(r.strategy, 1) == 1
        else "<br>".join(esc(x) for x in str(r.arm).split(" · "))
        for r in tab.itertuples(index=False)
    ]


def _papers_rows(tab: pd.DataFrame, paper: pd.DataFrame | None) -> pd.DataFrame:
    """The paper's rows at the K and Q we ran."""
    have = {(int(k), int(q)) for k, q in zip(tab[K], tab[Q], strict=True)} if len(tab) else set()
    if paper is None or not len(paper):
        return pd.DataFrame(columns=PUBLISHED_COLUMNS)
    keep = [(int(k), int(q)) in have for k, q in zip(paper[K], paper[Q], strict=True)]
    return paper[keep].reset_index(drop=True)


def _bar_order(fig: go.Figure, tab: pd.DataFrame, pap: pd.DataFrame, cols: list, pcols: list) -> None:
    """Bars in K order, then the paper's order of strategies, each of the paper's right after ours: a
    multi-category axis orders each level by first appearance, so an empty first trace sets it."""
    keys = [
        (int(getattr(r, K)), int(getattr(r, Q)), _order(r.strategy), 0, i)
        for i, r in enumerate(tab.itertuples())
    ]
    keys += [
        (int(getattr(r, K)), int(getattr(r, Q)), _order(r.strategy), 1, i)
        for i, r in enumerate(pap.itertuples())
    ]
    if not keys:
        return
    every = [
        cols[i] if p == 0 else pcols[i]
        for k, q, o, p, i in sorted(keys, key=lambda x: (x[2], x[3], x[0], x[1]))
    ]
    fig.add_trace(
        go.Bar(
            x=[[c[0] for c in every], [c[1] for c in every]],
            y=[0] * len(every),
            showlegend=False,
            hoverinfo="skip",
            marker=dict(color="rgba(0,0,0,0)"),
            name="order",
        )
    )


def _our_bars(fig: go.Figure, tab: pd.DataFrame, cols: list, who: str) -> None:
    """Our arms' questions by category, one stacked trace per category."""
    if tab.empty:
        return
    n = tab["n"].to_numpy()
    for cat in CATEGORIES:
        fig.add_trace(
            go.Bar(
                x=[[c[0] for c in cols], [c[1] for c in cols]],
                y=tab[cat].to_numpy() / n,
                name=f"{CATEGORY_LABELS[cat]}{esc(who)}",
                legendgroup=cat,
                marker=dict(color=CATEGORY_COLOURS[cat], line=dict(color="white", width=0.5)),
                customdata=list(zip(tab[cat], n, tab["arm"].map(esc), strict=True)),
                text=[str(int(v)) if v else "" for v in tab[cat]],
                textposition="inside",
                textangle=0,
                hovertemplate=(
                    f"<b>{CATEGORY_LABELS[cat]}</b><br>%{{customdata[2]}}<br>%{{x}}<br>%{{customdata[0]}} of "
                    "%{customdata[1]} questions (%{y:.0%})<extra></extra>"
                ),
            )
        )


def _paper_bars(fig: go.Figure, pap: pd.DataFrame, pcols: list) -> None:
    """The paper's counts, hatched: correct, partially correct, incorrect (and unanswered at K = 32)."""
    if not len(pap):
        return
    parts = [
        ("correct", "correct", "correct (the rest of its questions)"),
        ("partially_correct", "partial", "partially correct"),
        ("incorrect", "wrong", "incorrect"),
    ]
    if (pap["answered"] < pap["questions"]).any():
        pap = pap.assign(unanswered=pap["questions"] - pap["answered"])
        parts.append(("unanswered", "not_specified", "not answered (the API timed out)"))
    for column, cat, words in parts:
        values = pd.to_numeric(pap[column], errors="coerce").fillna(0).astype(int)
        fig.add_trace(
            go.Bar(
                x=[[c[0] for c in pcols], [c[1] for c in pcols]],
                y=values / pap["questions"],
                name=f"{words.split(' (')[0]} · {PAPER}",
                legendgroup=f"paper {cat}",
                marker=dict(
                    color=rgba(CATEGORY_COLOURS[cat], 0.55),
                    line=dict(color=CATEGORY_COLOURS[cat], width=1),
                    pattern=dict(shape="/", fgcolor="white", size=8),
                ),
                customdata=list(zip(values, pap["questions"], pap["what"], strict=True)),
                text=[str(v) if v else "" for v in values],
                textposition="inside",
                textangle=0,
                hovertemplate=(
                    f"<b>{words}</b>, as published ({PAPER})<br>%{{x}}<br>%{{customdata[0]}} of "
                    "%{customdata[1]} questions<br>%{customdata[2]}<extra></extra>"
                ),
            )
        )


def categories_figure(
    tab: pd.DataFrame,
    paper: pd.DataFrame | None = None,
    *,
    title: str = "Answers by category: ours and the paper's",
    who: str = "",
) -> go.Figure:
    """Stacked bars of the categories' shares of each arm's scored questions, x = (K and Q, arm); the
    paper's bars (hatched, "(paper)") beside ours for the same K and Q: correct, partially correct and
    incorrect as published (and, at K = 32, the questions a timeout left unanswered)."""
    fig = go.Figure()
    tab = tab[tab["n"] > 0].reset_index(drop=True) if len(tab) else tab
    cols = (
        list(zip([_kq(k, q) for k, q in zip(tab[K], tab[Q], strict=True)], bar_names(tab), strict=True))
        if len(tab)
        else []
    )
    pap = _papers_rows(tab, paper)
    pcols = [
        (_kq(getattr(r, K), getattr(r, Q)), f"{esc(short_name(r.strategy))}<br>(paper)")
        for r in pap.itertuples(index=False)
    ]
    _bar_order(fig, tab, pap, cols, pcols)
    _our_bars(fig, tab, cols, who)
    _paper_bars(fig, pap, pcols)
    set_layout(fig, title, "", "share of the questions", percent_range=MQ_RANGE)
    fig.update_layout(barmode="stack", bargap=0.25, uniformtext=dict(minsize=11, mode="hide"))
    fig.update_xaxes(tickangle=0)
    if tab.empty and not len(pap):
        empty_note(fig, "No multi-question trials for this selection")
    return fig


def cost_figure(
    tab: pd.DataFrame, *, title: str = "Calls and tokens per question", who: str = ""
) -> go.Figure:
    """Input tokens per question (bars, by K and arm), with the calls (and calls per question) on each bar."""
    fig = go.Figure()
    for arm, part in tab.groupby("arm", sort=False):
        colour = colour_for(part["strategy"].iloc[0])
        fig.add_trace(
            go.Bar(
                x=[_kq(k, q) for k, q in zip(part[K], part[Q], strict=True)],
                y=part["input_tokens_per_question"],
                name=f"{esc(arm)}{esc(who)}",
                marker=dict(color=colour, line=dict(color="#333", width=1)),
                text=[
                    f"{c:.0f} call{'s' if c != 1 else ''} ({c / n:.3f} a question)"
                    for c, n in zip(part["calls"], part["questions"], strict=True)
                ],
                textposition="outside",
                cliponaxis=False,
                customdata=part[
                    ["calls_per_question", "output_tokens_per_question", "calls", "questions"]
                ].to_numpy(),
                hovertemplate=(
                    f"<b>{esc(arm)}</b><br>%{{x}}<br>input tokens per question: %{{y:,.0f}}<br>output "
                    "tokens per question: %{customdata[1]:,.1f}<br>calls per question: %{customdata[0]:.3f} "
                    "(%{customdata[2]:.0f} calls, %{customdata[3]} questions)<extra></extra>"
                ),
            )
        )
    set_layout(
        fig, title, "contexts (K) and questions per context (Q)", "input tokens per question", percent=False
    )
    fig.update_layout(barmode="group", bargap=0.25)
    if tab.empty:
        empty_note(fig, "No multi-question trials for this selection")
    return fig


def table_lines(df: pd.DataFrame, paper: pd.DataFrame, metric: str = "mq_match") -> list[str]:
    """The shipped run's README table (markdown): per K and strategy, correct of n with its Wilson 95%
    interval, the categories, calls and tokens per question, and the paper's §5.3 counts beside them."""
    tab = table(df, metric)
    pub = {(r.strategy, int(getattr(r, K)), int(getattr(r, Q))): r for r in paper.itertuples(index=False)}
    lines = [
        "| K, Q (questions) | strategy | correct, 95% CI | partially correct | not specified | wrong | "
        "calls / question | tokens in / question | tokens out / question | paper (§5.3) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in tab.itertuples(index=False):
        k, q = int(getattr(r, K)), int(getattr(r, Q))
        p = pub.get((r.strategy, k, q))
        theirs = f"{p.correct}/{p.answered} correct ({p.what})" if p is not None else "not published"
        lines.append(
            f"| {k}, {q} ({r.questions}) | {r.setting} | {r.hits}/{r.n} = {_pct(r.accuracy)} "
            f"({_pct(r.lo)}–{_pct(r.hi)}) | {r.partial} | {r.not_specified} | {r.wrong} | "
            f"{r.calls_per_question:.3f} | {r.input_tokens_per_question:,.0f} | "
            f"{r.output_tokens_per_question:,.1f} | {theirs} |"
        )
    return lines
