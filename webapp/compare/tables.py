"""Compare's findings: the verdict and its reasoning, the arms' table and the pairs' table, and the
failures of a pair side by side."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from webapp.compare import parts
from webapp.services import analysis, figures, models
from webapp.services.names import count
from webapp.session import State
from webapp.ui.render import md


def verdict_box(result: analysis.Comparison) -> None:
    """The one-line verdict first (report.verdict.headline: the words every surface uses), then its
    reasoning; where every arm runs free, the offer to price them at a reference model."""
    v = result.verdict
    icon = ":material/verified:" if v.confidence == "confident" else ":material/hourglass_top:"
    box = st.success if v.confidence == "confident" else st.info
    box(f"**{md(v.line)}**\n\n{md(v.reasons)}", icon=icon)
    if parts.all_free(result.arms):
        ref = analysis.REFERENCE_MODEL
        c1, c2 = st.columns([3, 1], vertical_alignment="center")
        c1.caption(
            f"Every arm here runs free (a local model). Their token counts differ, so the verdict and the "
            f"chart price them at **{md(ref)}**'s list price (dated {models.PRICES_DATE}) for reference; "
            "price every arm so to see those dollars in the tables too."
        )
        c2.button(
            f"Price as {ref.partition(':')[2]}",
            key=State.cmp_use_reference.key,
            icon=":material/sell:",
            on_click=parts.use_reference_price,
        )


def tables(result: analysis.Comparison) -> None:
    """The arms' table, then the pairs' (those with matched trials)."""
    arms = result.arms
    unscored = arms_table(arms)
    pairs_table(result.pairs, unscored)


def arms_table(arms: pd.DataFrame) -> list[str]:
    """The arms, numbered as on the accuracy-cost chart; returns the arms with no answer scored."""
    priced = sorted(set(arms["priced_as"].dropna().astype(str)))
    numbers = figures.arm_numbers(arms)
    table = pd.DataFrame(
        {
            "#": arms["label"].map(numbers),
            "arm": arms["label"],
            "n": arms["n"],
            "accuracy (95% CI)": [
                f"{100 * a:.1f}% ({100 * lo:.0f}–{100 * hi:.0f})" if n else "not measured"
                for n, a, lo, hi in zip(arms["n"], arms["accuracy"], arms["lo"], arms["hi"], strict=True)
            ],
            "$ per 1,000 questions": [
                analysis.money(x) if x == x else "unknown" for x in arms["cost_per_1000_usd"]
            ],
            "calls / q": arms["calls_per_question"],
            "s / q": [analysis.seconds_text(x) for x in arms["latency_s_per_question"]],
            "errors": arms["errors"],
            "Pareto": ["dominated" if d else "front" for d in arms["dominated"]],
        }
    )
    st.dataframe(
        table.sort_values("#"),
        hide_index=True,
        width="stretch",
        column_config={
            "#": st.column_config.NumberColumn(
                width="small", help="the arm's number on the accuracy-cost chart"
            ),
            "arm": st.column_config.TextColumn(help="strategy, parameters and model: the whole name"),
            "accuracy (95% CI)": st.column_config.TextColumn(help="accuracy and its Wilson 95% interval"),
            "$ per 1,000 questions": st.column_config.TextColumn(help="at the prices below"),
            "calls / q": st.column_config.NumberColumn(
                format="%.2f", help="LLM calls per question", width="small"
            ),
            "s / q": st.column_config.TextColumn(
                help="mean seconds in calls per question; unknown for batch answers (no time per request)",
                width="small",
            ),
            "n": st.column_config.NumberColumn(width="small"),
            "errors": st.column_config.NumberColumn(width="small"),
            "Pareto": st.column_config.TextColumn(width="small"),
        },
    )
    unscored = arms[(arms["n"] == 0) & (arms["errors"] < arms["trials"])]["label"].tolist()
    if unscored:
        st.caption(
            md(", ".join(unscored)) + ": no answer was generated, so no accuracy (a likelihood sweep "
            "scores the gold answer instead; its curve is under the accuracy charts below)."
        )
    if priced:
        st.caption("Priced as: " + md(", ".join(priced)) + f" (list prices dated {models.PRICES_DATE}).")
    return unscored


def pairs_table(every: list, unscored: list[str]) -> None:
    """The pairs with matched trials: difference, interval, raw and Holm-adjusted p; a line naming those
    without."""
    # an arm with no answer scored has no matched trials by nature: the arms' table says why, not this line
    unmatched = [p for p in every if not p.n_matched and not {p.a, p.b} & set(unscored)]
    pairs = [p for p in every if p.n_matched]
    if unmatched:
        st.caption(
            "No matched trials (no task and cell in common), so no difference can be measured: "
            + "; ".join(f"{md(p.a)} vs {md(p.b)}" for p in unmatched)
        )
    if pairs:
        st.markdown(
            f"**Pairs** (paired on task and cell; Newcombe 95% interval; exact McNemar test, and its p "
            f"adjusted by Holm's method for the {len(every)} pairs shown: the verdict reads the "
            "adjusted one)"
        )
        if any(p.samples_pooled for p in pairs):
            st.caption(
                "Repeated samples: each pair is a question (task and cell), its value the share of its samples "
                "answered right; the interval is the cluster-robust one of the mean difference and the p a "
                "sign-flip test of the questions' differences (on one sample each, McNemar's test); "
                "only a / only b right are the counts expected of one sample each."
            )
        st.dataframe(
            pd.DataFrame(
                {
                    "a": [p.a for p in pairs],
                    "b": [p.b for p in pairs],
                    "difference a − b": [p.diff * 100 for p in pairs],
                    "low": [p.ci[0] * 100 for p in pairs],
                    "high": [p.ci[1] * 100 for p in pairs],
                    "p": [p.p_value for p in pairs],
                    "p (Holm)": [p.p_holm for p in pairs],
                    "matched": [p.n_matched for p in pairs],
                    "left out": [p.left_out for p in pairs],
                    "only a right": [p.only_a for p in pairs],
                    "only b right": [p.only_b for p in pairs],
                }
            ),
            hide_index=True,
            width="stretch",
            column_config={
                "difference a − b": st.column_config.NumberColumn(format="%+.1f pts"),
                "low": st.column_config.NumberColumn("95% low", format="%+.1f"),
                "high": st.column_config.NumberColumn("95% high", format="%+.1f"),
                "p": st.column_config.NumberColumn("p (McNemar)", format="%.3g", help="raw: this pair alone"),
                "p (Holm)": st.column_config.NumberColumn(
                    "p (Holm)",
                    format="%.3g",
                    help="adjusted for the many pairs shown (Holm 1979, statsmodels "
                    "multipletests): what every verdict reads",
                ),
            },
        )


def failures(t: pd.DataFrame, pair: tuple[str, str]) -> None:
    fail, total = parts.failures(t, pair)
    shown = f"; the first {len(fail):,} are listed" if total > len(fail) else ""
    st.caption(f"{count(total, 'matched trial')} that at least one arm got wrong (0 wrong, 1 right){shown}.")
    if not fail.empty:
        st.dataframe(
            fail.rename(
                columns={
                    "answer_a": f"answer: {pair[0]}",
                    "answer_b": f"answer: {pair[1]}",
                    "ok_a": "a right",
                    "ok_b": "b right",
                }
            ).dropna(axis=1, how="all"),
            hide_index=True,
            width="stretch",
            height=320,
        )
