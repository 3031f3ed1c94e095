"""One self-contained HTML file of a comparison, for a meeting: the recommendation, the arms and pairs
tables with n, the charts (plotly.js inlined once, so it opens offline), the planner, failures side by
side, the prices used with their sources and dates, and how the statistics were made.

Every piece of text (labels, answers, questions, sources) goes through html.escape."""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from datetime import UTC, datetime

import pandas as pd

from components.core.cells import layout_of
from components.core.metrics import get_metric
from components.providers import pricing
from components.report.charts import arm_numbers
from components.report.colours import heatmap_words
from components.report.compare import Comparison, seconds_text
from components.report.sweeps import primary_names
from components.report.verdict import Verdict, money

METHODS = (
    "Accuracy: the share of scored trials whose primary metric is correct (non-zero), with a Wilson 95% "
    "interval. Pairs: trials matched on task and cell (length and position, or documents and gold index); "
    "difference with Newcombe's paired hybrid score interval (1998, method 10); p-value from the exact "
    "McNemar test (two-sided binomial test of the discordant pairs at 1/2), adjusted for the pairs shown by "
    "Holm's step-down method (Holm 1979; statsmodels multipletests): every verdict reads the adjusted "
    "p-values. Verdict: a cheaper arm is recommended only when non-inferior within the margin (the lower "
    "bound of the 95% paired interval of its difference from the most accurate arm above minus the margin) "
    "and saving at least the minimum share of cost; otherwise the most accurate arm when it beats every other "
    "arm at Holm-adjusted p < 0.05; otherwise a tie, and the cheapest arm the data cannot tell from the most "
    "accurate is recommended, not yet (where every arm runs free, priced at a reference model's list price "
    "from its tokens). The chart numbers the arms as the arms table does. Trials without a partner are "
    "left out and counted. Failed calls are errors, never wrong answers. Cost per 1,000 questions: the "
    "mean stored input and output tokens of all stages of an arm's trials at the list price (or batch "
    "price) of the model named. Planner: Connor (1987) sample size for McNemar's test."
)

# Long unbroken strings (a 2,000-character task id, an arm label, an answer) wrap inside the window:
# overflow-wrap:anywhere on the page and on every data cell lets them break anywhere, and counts so in a table
# column's smallest width, so tables stay as wide as the page. Headers keep their words whole (a column is at
# least as wide as its header's longest word), except the user strings in them (.u); numbers do not wrap.
# tests/test_report_wrap.py measures the page in chromium.
STYLE = """body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;max-width:1200px;
color:#222;padding:0 1rem;overflow-wrap:anywhere}h1{font-size:1.6rem}h2{font-size:1.2rem;margin-top:2rem;
border-bottom:1px solid #ddd}table{border-collapse:collapse;font-size:.9rem;margin:.5rem 0;max-width:100%}
td,th{border:1px solid #ddd;padding:.3rem .6rem;text-align:left;vertical-align:top}th{overflow-wrap:normal}
.u{overflow-wrap:anywhere}td.num,td.word{white-space:nowrap;overflow-wrap:normal}th{background:#f4f4f4}td.num{text-align:right;font-variant-numeric:tabular-nums}
.rec{background:#eef6ee;border-left:4px solid #2e7d32;padding:.8rem 1rem;font-size:1.05rem}
.dominated{color:#888}.scope{font-size:.95rem}.small{font-size:.85rem;color:#555}pre{white-space:pre-wrap;margin:0;font-family:inherit}"""


def _e(x) -> str:
    return html.escape("" if x is None else str(x))


def _pct(x) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:.1f}%"


def _usd(x) -> str:
    return "unknown" if x is None or (isinstance(x, float) and math.isnan(x)) else money(x)


def _table(headers: list[str], rows: list[list[str]], classes: list[str] | None = None, user: int = 0) -> str:
    """An HTML table; the last `user` headers hold user strings (arm labels), which may break anywhere."""
    head = "".join(
        f'<th><span class="u">{_e(h)}</span></th>' if i >= len(headers) - user else f"<th>{_e(h)}</th>"
        for i, h in enumerate(headers)
    )
    body = []
    for i, r in enumerate(rows):
        cls = f' class="{classes[i]}"' if classes and classes[i] else ""
        body.append(f"<tr{cls}>" + "".join(r) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _td(x, num: bool = False) -> str:
    return f'<td class="num">{_e(x)}</td>' if num else f"<td>{_e(x)}</td>"


def arms_html(arms: pd.DataFrame) -> str:
    """The arms table, numbered as on the accuracy-cost chart (charts.arm_numbers), in that order."""
    rows, classes = [], []
    numbers = arm_numbers(arms)
    for r in sorted(arms.itertuples(), key=lambda r: numbers.get(r.label, 0)):
        rows.append(
            [
                _td(numbers.get(r.label, ""), True),
                _td(r.label),
                _td(r.n, True),
                _td(_pct(r.accuracy), True),
                _td(f"{_pct(r.lo)} – {_pct(r.hi)}", True),
                _td(_usd(r.cost_per_1000_usd), True),
                _td(r.priced_as + (" (batch)" if r.batch else "")),
                _td(f"{r.calls_per_question:.2f}", True),
                _td(seconds_text(r.latency_s_per_question), True),
                _td(r.errors, True),
                f'<td class="word">{"dominated" if r.dominated else "on the front"}</td>',
            ]
        )
        classes.append("dominated" if r.dominated else "")
    return _table(
        [
            "#",
            "arm",
            "n",
            "accuracy",
            "95% interval (Wilson)",
            "$ per 1,000 questions",
            "priced as",
            "calls / question",
            "seconds / question",
            "errors",
            "Pareto",
        ],
        rows,
        classes,
    )


def pairs_html(pairs: list) -> str:
    """The pairs table (report.compare.Pair)."""
    rows = []
    for p in pairs:
        diff = "–" if p.diff != p.diff else f"{100 * p.diff:+.1f} points"
        ci = "–" if p.ci[0] != p.ci[0] else f"{100 * p.ci[0]:+.1f} to {100 * p.ci[1]:+.1f}"
        pv = "–" if p.p_value != p.p_value else f"{p.p_value:.3g}"
        ph = "–" if p.p_holm != p.p_holm else f"{p.p_holm:.3g}"
        rows.append(
            [
                _td(p.a),
                _td(p.b),
                _td(diff, True),
                _td(ci, True),
                _td(pv, True),
                _td(ph, True),
                _td(p.n_matched, True),
                _td(p.left_out, True),
                _td(f"{p.only_a:.3g} / {p.only_b:.3g}", True),
            ]
        )
    return _table(
        [
            "a",
            "b",
            "difference a − b",
            "95% interval (Newcombe)",
            "p (exact McNemar)",
            "p (Holm)",
            "matched",
            "left out",
            "only a right / only b right",
        ],
        rows,
    )


def prices_html(arms: pd.DataFrame, prices: dict | None, edited: bool) -> str:
    table = prices if prices is not None else pricing.PRICES
    rows = []
    for priced_as in dict.fromkeys(arms["priced_as"]) if len(arms) else []:
        provider, _, model = str(priced_as).partition(":")
        entry = pricing.price_of(provider, model, table) if model else None
        if provider in pricing.FREE_PROVIDERS:
            rows.append([_td(priced_as), _td("0", True), _td("0", True), _td("runs locally: free"), _td("")])
        elif entry is None:
            rows.append(
                [
                    _td(priced_as),
                    _td("–"),
                    _td("–"),
                    _td("self-hosted: free" if provider == "openai-compatible" else "no price known"),
                    _td(""),
                ]
            )
        else:
            rows.append(
                [
                    _td(priced_as),
                    _td(entry["input"], True),
                    _td(entry["output"], True),
                    _td(entry.get("source", "")),
                    _td(entry.get("checked", "")),
                ]
            )
    batch = "; ".join(
        f"{p}: {v['factor']:.0%} of list price ({v.get('source', '')})" for p, v in pricing.BATCH.items()
    )
    note = " Prices were edited in the session that made this report." if edited else ""
    return (
        _table(["model", "input $ / 1M tokens", "output $ / 1M tokens", "source", "checked"], rows)
        + f'<p class="small">Price table dated {_e(pricing.PRICES_DATE)}. Batch prices: {_e(batch)}.'
        f"{_e(note)}</p>"
    )


def failures_html(fail: pd.DataFrame, a: str, b: str, limit: int = 50, total: int | None = None) -> str:
    if fail.empty:
        return "<p>No matched trial that either arm got wrong.</p>"
    rows = []
    for r in fail.head(limit).itertuples():
        cell = (
            f"length {r.length}, position {r.position}"
            if pd.notna(r.length)
            else f"{r.documents} documents, gold index {r.gold_index}"
        )
        answers = ", ".join(map(str, r.answers)) if isinstance(r.answers, list | tuple) else r.answers
        rows.append(
            [
                _td(r.task),
                _td(cell),
                f"<td><pre>{_e(r.question)}</pre></td>",
                _td(answers),
                f"<td><pre>{_e(r.answer_a)}</pre>{'✓' if r.ok_a else '✗'}</td>",
                f"<td><pre>{_e(r.answer_b)}</pre>{'✓' if r.ok_b else '✗'}</td>",
            ]
        )
    total = len(fail) if total is None else total  # `fail` may be the first rows only
    shown = min(limit, len(fail))
    more = f'<p class="small">First {shown} of {total}.</p>' if total > shown else ""
    return (
        _table(["task", "cell", "question", "gold answers", f"answer of {a}", f"answer of {b}"], rows, user=2)
        + more
    )


def _numbers(values: pd.Series, fmt) -> list[str]:
    found = pd.to_numeric(values, errors="coerce").dropna().unique()
    return [fmt(v) for v in sorted(found)]


def _position(p: float) -> str:
    return f"{p:.0%}" if p <= 1 else f"token {p:,.0f}"


def _metric_label(name: str) -> str:
    try:
        return get_metric(name).label
    except ValueError:
        return name


def scope(trials: pd.DataFrame, labels: Sequence[str]) -> list[tuple[str, str]]:
    """What the comparison was measured on, as (name, value) pairs for the report's header: the task set,
    the lengths (or numbers of documents), the positions (or gold indexes), the metric and n, read from
    the compared arms' trials (compare.prepare'd: `arm`, `ok`)."""
    part = trials[trials["arm"].isin(labels)] if "arm" in trials else trials
    if part.empty:
        return [("n", "0 trials")]
    out = []
    sets = sorted({str(x) for x in part.get("task_set", pd.Series(dtype=object)).dropna() if str(x)})
    out.append(("task set" if len(sets) == 1 else "task sets", ", ".join(sets) or "not recorded"))
    if layout_of(part).by_documents:
        out.append(("documents", ", ".join(_numbers(part["documents"], lambda v: f"{v:,.0f}"))))
        out.append(
            ("gold index", ", ".join(_numbers(part["gold_index"], lambda v: f"{v:.0f}")) + " (0 = first)")
        )
    else:
        lengths = _numbers(part["length"], lambda v: f"{v:,.0f}")
        out.append(("length" if len(lengths) == 1 else "lengths", f"{', '.join(lengths)} tokens"))
        out.append(("positions", ", ".join(_numbers(part["position"], _position))))
    metrics = [str(m) for m in dict.fromkeys(primary_names(part).dropna())]
    named = ", ".join(_metric_label(m) for m in metrics) or "not recorded"
    out.append(("metric", f"{named} (each strategy's primary metric; correct when above zero)"))
    scored = int(part["ok"].notna().sum()) if "ok" in part else len(part)
    tasks = part["task"].nunique() if "task" in part else 0
    out.append(("n", f"{scored:,} scored trials of {tasks:,} tasks over {len(labels)} arms"))
    return out


def scope_html(trials: pd.DataFrame, labels: Sequence[str]) -> str:
    """The header's line of what was measured (scope), every value escaped."""
    items = " · ".join(f"<b>{_e(name)}</b> {_e(value)}" for name, value in scope(trials, labels))
    return f'<p class="scope">{items}</p>'


def verdict_html(v: Verdict) -> str:
    """The one-line verdict, then its reasoning and the rule's settings (from compare.verdict)."""
    rule = (
        f"Margin {100 * v.margin:.1f} points, minimum saving {100 * v.min_saving:.0f}% of cost, "
        f"p-values adjusted by {v.correction}, alpha {v.alpha}."
    )
    return (
        f'<div class="rec"><p><b>{_e(v.line)}</b></p><p>{_e(v.reasons)}</p>'
        f'<p class="small">{_e(rule)}</p></div>'
    )


def frame_html(df: pd.DataFrame) -> str:
    """A table of text cells as HTML, every cell escaped (numbers right-aligned)."""
    rows = [
        [_td(v, num=isinstance(v, int | float) and not isinstance(v, bool)) for v in r]
        for r in df.itertuples(index=False)
    ]
    return _table([str(c) for c in df.columns], rows)


def figures_html(figures: list) -> str:
    """Plotly figures as HTML: plotly.js inlined with the first one only, so the file works offline."""
    out = []
    for i, fig in enumerate(figures):
        out.append(
            fig.to_html(
                full_html=False, include_plotlyjs="inline" if i == 0 else False, config={"displaylogo": False}
            )
        )
    return "\n".join(out)


def build(
    result: Comparison,
    *,
    figures: list,
    failures: pd.DataFrame | None = None,
    pair: tuple[str, str] | None = None,
    prices: dict | None = None,
    prices_edited: bool = False,
    sources: Sequence[str] = (),
    title: str = "LITM Explorer: comparison",
    now: datetime | None = None,
    failures_total: int | None = None,
    tables: Sequence[tuple[str, str, pd.DataFrame]] = (),
) -> str:
    """The report as one HTML string. `result` is compare.compare(); `figures` plotly figures;
    `failures` the pair's failures (or their first rows, `failures_total` counting them all); `tables`
    more sections after the charts, each (heading, caption, table)."""
    now = now or datetime.now(UTC)
    arms, pairs, plan = result.arms, result.pairs, result.plan
    cost = "" if plan.cost_usd is None else f", about {_usd(plan.cost_usd)} for both arms"
    plan_text = (
        f"To tell a {100 * plan.difference:.0f}-point difference apart with power {plan.power} at "
        f"alpha {plan.alpha}: {plan.pairs} matched trials ({plan.tasks} tasks of "
        f"{plan.cells_per_task} cells){cost}. Discordance {plan.discordance:.2f} "
        f"({'seen in the first pair' if plan.discordance_source == 'seen' else 'stated default'})."
    )
    n_total = int(arms["trials"].sum()) if len(arms) else 0
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>{_e(title)}</title><style>{STYLE}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
        f'<p class="small">Made {_e(now.strftime("%Y-%m-%d %H:%M UTC"))} by LITM Explorer from {n_total:,} trials'
        + (f" ({_e('; '.join(sources))})" if sources else "")
        + ".</p>",
        scope_html(result.trials, list(arms["label"]) if len(arms) else []),
        verdict_html(result.verdict),
        "<h2>Arms</h2>",
        arms_html(arms),
        "<h2>Pairs</h2>",
        pairs_html(pairs) if pairs else "<p>Only one arm.</p>",
        "<h2>Planner</h2>",
        f"<p>{_e(plan_text)}</p>",
        "<h2>Charts</h2>",
        figures_html(figures),
    ]
    for heading, caption, frame in tables:
        parts += [f"<h2>{_e(heading)}</h2>", frame_html(frame), f"<p class='small'>{_e(caption)}</p>"]
    if failures is not None and pair:
        parts += [
            f"<h2>Failures: {_e(pair[0])} against {_e(pair[1])}</h2>",
            failures_html(failures, *pair, total=failures_total),
        ]
    parts += [
        "<h2>Prices</h2>",
        prices_html(arms, prices, prices_edited),
        "<h2>Methods</h2>",
        f"<p class='small'>{_e(METHODS)}</p>",
        "</body></html>",
    ]
    return "\n".join(parts)


RESULTS_METHODS = (
    "Accuracy: the share of scored trials whose metric is correct, with a Wilson 95% interval; n is the "
    "number of scored trials at each point (failed calls are errors, counted apart, never wrong answers). "
    "Shape: the position-bias index (mean of the first and last positions minus the middle one) with a 95% "
    "percentile bootstrap interval over questions (a question's positions resampled together); a shape is "
    "named only when its interval excludes zero. Heatmap: one panel per arm, context length across, where "
    f"the answer sits down (0% at the top), {heatmap_words()}."
)


def _points_html(table: pd.DataFrame, x_title: str) -> str:
    """A curve's points: series, x, n, accuracy, interval, errors (report.analysis.u_curve's table)."""
    rows = []
    for r in table.itertuples():
        rows.append(
            [
                _td(r.series),
                _td(f"{r.position:g}", True),
                _td(int(r.n), True),
                _td(_pct(r.mean), True),
                _td(f"{_pct(r.lo)} – {_pct(r.hi)}", True),
                _td(int(r.errors), True),
            ]
        )
    return _table(["line", x_title, "n", "accuracy", "95% interval (Wilson)", "errors"], rows)


def build_results(
    *,
    title: str,
    figures: list,
    curves: Sequence[tuple[str, pd.DataFrame, str]] = (),
    shapes: Sequence[tuple[str, str]] = (),
    about: str = "",
    now: datetime | None = None,
) -> str:
    """The Results report as one HTML string: `title` (sweep name, model and date), `figures` (plotly, the
    sweep's curves and heatmap; plotly.js inlined once), `curves` as (heading, u_curve table, x title)
    with n and intervals per point, `shapes` as (line, sentence), `about` (what was measured, by whom)."""
    now = now or datetime.now(UTC)
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>{_e(title)}</title><style>{STYLE}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
        f'<p class="small">Made {_e(now.strftime("%Y-%m-%d %H:%M UTC"))} by LITM Explorer. {_e(about)}</p>',
    ]
    if shapes:
        items = "".join(f"<li><b>{_e(name)}.</b> {_e(text)}</li>" for name, text in shapes)
        parts += ["<h2>Shape of each curve</h2>", f"<ul>{items}</ul>"]
    parts += ["<h2>Charts</h2>", figures_html(figures)]
    for heading, table, x_title in curves:
        parts += [f"<h2>{_e(heading)}</h2>", _points_html(table, x_title)]
    parts += ["<h2>Methods</h2>", f"<p class='small'>{_e(RESULTS_METHODS)}</p>", "</body></html>"]
    return "\n".join(parts)
