"""`litm compare`: arms (strategy x parameters x model) side by side from a run store: accuracy with n and
a Wilson interval, cost per 1,000 questions, paired differences with an exact McNemar p-value, the
Pareto front and a recommendation (components.report.compare)."""

from __future__ import annotations

import json
import math
import sys
from typing import TYPE_CHECKING

from components.cli.common import add_db, db_path

if TYPE_CHECKING:  # the command imports the engine when it runs, not when the CLI starts
    from components.report.compare import Comparison


def add_parser(sub, name):
    p = sub.add_parser(
        name, help="compare arms: accuracy, cost per 1,000 questions, paired tests, a recommendation"
    )
    add_db(p)
    p.add_argument("--sweep", action="append", help="sweep id or name (repeatable; default: every sweep)")
    p.add_argument(
        "--arms",
        nargs="+",
        metavar="LABEL",
        help="arms to compare, by label as printed (default: all); e.g. 'R&R · r=5,000, k=3 · gpt-4o-mini'",
    )
    p.add_argument("--length", type=int, help="only trials of this document length (tokens)")
    p.add_argument(
        "--model-price",
        metavar="MODEL",
        help="price every arm as this model of the price table (e.g. gpt-4o-mini, anthropic:claude-sonnet-4)",
    )
    p.add_argument("--batch", action="store_true", help="at the providers' batch prices")
    p.add_argument(
        "--difference",
        type=float,
        default=5.0,
        help="the difference (points) the planner and the recommendation look for (default 5)",
    )
    p.add_argument(
        "--margin",
        type=float,
        default=5.0,
        help="non-inferiority margin (points): a cheaper arm is recommended only if its 95%% interval "
        "shows it at most this much worse (default 5)",
    )
    p.add_argument(
        "--min-saving",
        type=float,
        default=10.0,
        help="and only if it saves at least this share of the most accurate arm's cost (percent; default 10)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def _num(x):
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else x


def _clean(value):
    """A JSON value with every NaN as null (the verdict's records hold NaN where a number is unknown)."""
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    return _num(value)


def to_json(result: Comparison) -> dict:
    """The --json object: {"arms": [...], "pairs": [...], "recommendation", "plan", "prices"}."""
    from components.providers import pricing

    arms = []
    for r in result.arms.to_dict("records"):
        arms.append(
            {
                "label": r["label"],
                "strategy": r["strategy"],
                "params": json.loads(r["params"] or "{}"),
                "model": r["model"],
                "n": int(r["n"]),
                "correct": int(r["correct"]),
                "accuracy": _num(r["accuracy"]),
                "ci": [_num(r["lo"]), _num(r["hi"])],
                "errors": int(r["errors"]),
                "trials": int(r["trials"]),
                "cost_per_1000_usd": _num(r["cost_per_1000_usd"]),
                "priced_as": r["priced_as"],
                "batch": bool(r["batch"]),
                "calls_per_question": _num(r["calls_per_question"]),
                "latency_s_per_question": _num(r["latency_s_per_question"]),
                "input_tokens_per_question": _num(r["input_tokens_per_question"]),
                "output_tokens_per_question": _num(r["output_tokens_per_question"]),
                "cached_input_tokens_per_question": _num(r["cached_input_tokens_per_question"]),
                "cache_write_tokens_per_question": _num(r["cache_write_tokens_per_question"]),
                "dominated": bool(r["dominated"]),
            }
        )
    pairs = [
        {
            **p.to_dict(),
            "diff": _num(p.diff),
            "ci": [_num(p.ci[0]), _num(p.ci[1])],
            "p_value": _num(p.p_value),
            "p_holm": _num(p.p_holm),
            "accuracy_a": _num(p.accuracy_a),
            "accuracy_b": _num(p.accuracy_b),
        }
        for p in result.pairs
    ]
    verdict = _clean(result.verdict.to_dict())
    return {
        "arms": arms,
        "pairs": pairs,
        "verdict": verdict,
        "margin": verdict["margin"],
        "min_saving": verdict["min_saving"],
        "saving_per_1000_usd": verdict["saving_per_1000_usd"],
        "recommendation": result.recommendation,
        "plan": _clean(result.plan.to_dict()),
        "prices": {"date": pricing.PRICES_DATE, "batch": {k: v["factor"] for k, v in pricing.BATCH.items()}},
    }


def _pct(x) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:.1f}%"


def _usd(x) -> str:
    from components.report.verdict import money

    return "unknown" if x is None or (isinstance(x, float) and math.isnan(x)) else money(x)


def table_text(obj: dict) -> str:
    from components.report.compare import seconds_text

    lines = [obj["verdict"]["line"], "arms (accuracy with Wilson 95% interval; cost per 1,000 questions)"]
    w = max([len(a["label"]) for a in obj["arms"]] + [4])
    lines.append(
        f"  {'arm':<{w}}  {'n':>5}  {'accuracy':>8}  {'95% interval':>15}  {'$/1,000':>10}  "
        f"{'calls':>5}  {'s/question':>10}"
    )
    for a in obj["arms"]:
        mark = "  (dominated)" if a["dominated"] else ""
        lines.append(
            f"  {a['label']:<{w}}  {a['n']:>5}  {_pct(a['accuracy']):>8}  "
            f"{_pct(a['ci'][0]) + '-' + _pct(a['ci'][1]):>15}  {_usd(a['cost_per_1000_usd']):>10}  "
            f"{a['calls_per_question'] or 0:>5.2f}  {seconds_text(a['latency_s_per_question']):>10}{mark}"
        )
    if obj["pairs"]:
        lines.append(
            "pairs (diff = accuracy of a - b over matched trials; Newcombe 95% interval; exact McNemar, "
            f"raw and Holm-adjusted over {len(obj['pairs'])} pairs)"
        )
        for p in obj["pairs"]:
            diff = "-" if p["diff"] is None else f"{100 * p['diff']:+.1f} pts"
            ci = "-" if p["ci"][0] is None else f"{100 * p['ci'][0]:+.1f} to {100 * p['ci'][1]:+.1f}"
            pv = "-" if p["p_value"] is None else f"{p['p_value']:.3g} (Holm {p['p_holm']:.3g})"
            lines.append(
                f"  {p['a']}  vs  {p['b']}: {diff} ({ci}), p = {pv}, "
                f"{p['n_matched']} matched, {p['left_out']} left out"
            )
    lines.append(obj["verdict"]["reasons"])
    lines.append(
        f"margin {100 * obj['margin']:.0f} points, minimum saving {100 * obj['min_saving']:.0f}% of the cost"
    )
    plan = obj["plan"]
    cost = "" if plan["cost_usd"] is None else f", about {_usd(plan['cost_usd'])}"
    lines.append(
        f"planner: {plan['pairs']} matched trials to find {100 * plan['difference']:.0f} points with power "
        f"{plan['power']} ({plan['discordance_source']} discordance {plan['discordance']:.2f}){cost}"
    )
    lines.append(
        f"prices checked {obj['prices']['date']}"
        + (" (batch)" if any(a["batch"] for a in obj["arms"]) else "")
    )
    return "\n".join(lines)


def run(args) -> int:
    import pandas as pd

    from components.report import compare
    from components.run.reader import summary_frame
    from components.run.store import RunStore

    db = db_path(args)
    if not db.exists():
        raise FileNotFoundError(f"no run store at {db}")
    if not 0 < args.difference < 100:
        raise ValueError("--difference is in points, between 0 and 100 (e.g. 5)")
    if not 0 < args.margin < 100:
        raise ValueError("--margin is in points, between 0 and 100 (e.g. 5)")
    if not 0 <= args.min_saving < 100:
        raise ValueError("--min-saving is a percentage of the cost, from 0 to 100 (e.g. 10)")
    with RunStore(db, readonly=True) as store:  # reading never writes
        frames = [summary_frame(store, s) for s in args.sweep] if args.sweep else [summary_frame(store)]
    trials = pd.concat(frames, ignore_index=True)
    if trials.empty:
        raise LookupError("no trials to compare in that store" + (" and sweep" if args.sweep else ""))
    if args.model_price and compare.price_for(args.model_price)[1] is None:
        raise LookupError(f"no price for {args.model_price!r} in the price table")
    result = compare.compare(
        trials,
        args.arms,
        length=args.length,
        price_model=args.model_price,
        batch=args.batch,
        difference=args.difference / 100,
        margin=args.margin / 100,
        min_saving=args.min_saving / 100,
    )
    if result.arms.empty:
        raise LookupError(f"no trials of length {args.length}" if args.length else "no arms to compare")
    obj = to_json(result)
    if args.json:
        json.dump(obj, sys.stdout, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        print(table_text(obj))
    return 0
