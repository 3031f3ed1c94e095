"""Compare: two or more arms (strategy x parameters x model) side by side, from any store: accuracy with
n and a Wilson interval, cost per 1,000 questions, paired differences with an exact McNemar p-value,
the Pareto front, a computed recommendation, a planner, failures side by side, a link to this view and
a one-file report. The statistics are components.report.compare; the helpers webapp/compareview.py."""

from __future__ import annotations

from functools import partial

import pandas as pd
import streamlit as st

from components.report import charts, compare
from webapp.compare import parts as cv
from webapp.services import stores as runs
from webapp.ui import charts as chartview
from webapp.ui import pickers
from webapp.ui.render import guard, md

K = cv.K


def choose(trials: pd.DataFrame, sweeps: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """Sweeps, length and arms to compare; returns (prepared trials of the chosen sweeps, chosen arm labels)."""
    with st.container(border=True):
        c1, c2 = st.columns([3, 1])
        labels = dict(zip(sweeps["sweep_key"], sweeps["label"], strict=True))
        have = runs.with_trials(sweeps, trials)
        chosen = pickers.multi(c1, "Sweeps", have, K + "sweeps", format_func=lambda k: labels.get(k, k),
                               placeholder="every sweep of every store")
        part = trials[trials["sweep_key"].isin(chosen)] if chosen else trials
        lengths = sorted(int(x) for x in pd.to_numeric(part["length"], errors="coerce").dropna().unique())
        length = pickers.select(c2, "Document length", [cv.ALL_LENGTHS, *map(str, lengths)], K + "length",
                                help="cost per 1,000 questions depends on the length: compare at one")
        part = compare.filter_length(part, None if length in (None, cv.ALL_LENGTHS) else int(length))
        t = compare.prepare(part)
        ranked = compare.arms(t).sort_values("accuracy", ascending=False)["label"].tolist()
        default = compare.default_arms(t, ranked)
        arms = pickers.multi(st, "Arms (strategy, parameters, model)", ranked, K + "arms", default=default,
                             placeholder="choose two or more arms")
    return t, arms


def pricing_controls() -> tuple[str | None, bool]:
    c1, c2 = st.columns([3, 1])
    table = cv.session_prices()
    from components.providers import pricing

    models = [f"{p}:{m}" for p, ms in (table or pricing.PRICES).items() for m in sorted(ms)]
    price = pickers.select(c1, "Price every arm as", [cv.OWN, *models], K + "price_model",
                           help="re-price the stored token counts of every arm at another model's list price")
    batch = pickers.toggle(c2, "Batch prices", K + "batch",
                           help="the providers' batch APIs: half the list price (OpenAI, Anthropic)")
    edited = " · edited for this session" if table is not None else ""
    with st.expander(f"Prices: table dated {pricing.PRICES_DATE}{edited} (see sources, edit for this session)"):
        cv.price_editor(st)
    return (None if price == cv.OWN else price), batch


def tables(result: dict) -> None:
    arms = result["arms"]
    st.dataframe(pd.DataFrame({
        "arm": arms["label"], "n": arms["n"], "accuracy": arms["accuracy"] * 100,
        "95% interval": [f"{100 * lo:.1f} – {100 * hi:.1f}%" for lo, hi in zip(arms["lo"], arms["hi"], strict=True)],
        "$ per 1,000 questions": arms["cost_per_1000_usd"], "priced as": arms["priced_as"],
        "calls / question": arms["calls_per_question"], "seconds / question": [compare.seconds_text(x) for x in arms["latency_s_per_question"]],
        "errors": arms["errors"], "Pareto": ["dominated" if d else "front" for d in arms["dominated"]]}),
        hide_index=True, width="stretch", column_config={
            "accuracy": st.column_config.NumberColumn(format="%.1f%%"),
            "95% interval": st.column_config.TextColumn(help="Wilson 95% interval of the accuracy"),
            "$ per 1,000 questions": st.column_config.NumberColumn(format="$%.4f"),
            "calls / question": st.column_config.NumberColumn(format="%.2f"),
            "seconds / question": st.column_config.TextColumn(
                help="mean seconds in calls per question; unknown for batch answers (no time per request)")})
    unmatched = [p for p in result["pairs"] if not p["n_matched"]]
    pairs = [p for p in result["pairs"] if p["n_matched"]]
    if unmatched:
        st.caption("No matched trials (no task and cell in common), so no difference can be measured: "
                   + "; ".join(f"{md(p['a'])} vs {md(p['b'])}" for p in unmatched))
    if pairs:
        st.markdown("**Pairs** (paired on task and cell; Newcombe 95% interval; exact McNemar test)")
        st.dataframe(pd.DataFrame({
            "a": [p["a"] for p in pairs], "b": [p["b"] for p in pairs],
            "difference a − b": [p["diff"] * 100 for p in pairs], "low": [p["ci"][0] * 100 for p in pairs],
            "high": [p["ci"][1] * 100 for p in pairs], "p": [p["p_value"] for p in pairs],
            "matched": [p["n_matched"] for p in pairs], "left out": [p["left_out"] for p in pairs],
            "only a right": [p["only_a"] for p in pairs], "only b right": [p["only_b"] for p in pairs]}),
            hide_index=True, width="stretch", column_config={
                "difference a − b": st.column_config.NumberColumn(format="%+.1f pts"),
                "low": st.column_config.NumberColumn("95% low", format="%+.1f"),
                "high": st.column_config.NumberColumn("95% high", format="%+.1f"),
                "p": st.column_config.NumberColumn("p (McNemar)", format="%.3g")})


def pick_pair(labels: list[str]) -> tuple[str, str] | None:
    options = [f"{a}  vs  {b}" for i, a in enumerate(labels) for b in labels[i + 1:]]
    if not options:
        return None
    chosen = pickers.select(st, "Pair", options, K + "pair")
    return tuple(chosen.split("  vs  ", 1)) if chosen else None


def planner(result: dict, pair: tuple[str, str] | None) -> None:
    c1, c2, c3 = st.columns(3)
    d = c1.number_input("Difference that matters (points)", 1.0, 50.0, step=1.0, key=K + "difference")
    power = c2.selectbox("Power", [0.8, 0.9], key=K + "power")
    p = next((x for x in result["pairs"] if pair and (x["a"], x["b"]) == pair), None)
    t = result["trials"]
    cells = compare.cells_per_task(t, list(pair or []))
    plan = compare.plan(p, result["arms"], difference=d / 100, power=power, cells_per_task=cells)
    cost = "unknown (no price)" if plan["cost_usd"] is None else f"${plan['cost_usd']:,.2f}"
    c3.metric("Tasks needed", f"{plan['tasks']:,}", help=f"{plan['pairs']:,} matched trials over {cells} cells")
    st.caption(f"{plan['pairs']:,} matched trials ({plan['tasks']:,} tasks × {cells} cells) to tell a {d:.0f}-point "
               f"difference apart with power {power} at alpha 0.05 (exact McNemar; Connor 1987), using "
               f"{'the discordance seen in this pair' if plan['discordance_source'] == 'seen' else 'a default'} "
               f"of {plan['discordance']:.2f}. Running both arms on them costs about {cost}.")
    if pair and st.button("Plan this sweep in Experiments", key=K + "to_experiments", icon=":material/tune:",
                          help="fills the Experiments grid with these two arms' strategies, parameters, "
                               "lengths and positions, and this many tasks"):
        try:
            cv.plan_in_experiments(t, pair, plan["tasks"])
        except Exception:  # noqa: BLE001 - the page runs outside the app's navigation
            st.info("The Experiments grid is filled: open **Experiments**.")


def failures(t: pd.DataFrame, pair: tuple[str, str]) -> None:
    fail, total = cv.failures(t, pair)
    shown = f"; the first {len(fail):,} are listed" if total > len(fail) else ""
    st.caption(f"{total:,} matched trial(s) that at least one arm got wrong (0 wrong, 1 right){shown}.")
    if not fail.empty:
        st.dataframe(fail.rename(columns={"answer_a": f"answer: {pair[0]}", "answer_b": f"answer: {pair[1]}",
                                          "ok_a": "a right", "ok_b": "b right"}).dropna(axis=1, how="all"),
                     hide_index=True, width="stretch", height=320)


def main() -> None:
    st.title("Compare")
    st.caption("Choose two or more arms (strategy × parameters × model) from any run store. Trials are paired "
               "on task and cell, so the test is McNemar's exact test on the pairs the arms answered differently.")
    cv.seed_from_url()
    trials, sweeps, problems = runs.load_all()
    for p in problems:
        st.warning(f"Could not read a run store: {p}")
    if trials.empty:
        st.info("No runs yet: run a sweep on the **Experiments** page, or import runs on **Results**.")
        return
    t, labels = choose(trials, sweeps)
    price_model, batch = pricing_controls()
    if len(labels) < 2:
        st.info("Choose at least two arms to compare.")
        cv.write_url()
        return
    result = compare.compare(t, labels, price_model=price_model, batch=batch, prices=cv.session_prices(),
                             difference=float(st.session_state.get(K + "difference") or 5) / 100)
    result["trials"] = t
    st.info(md(result["recommendation"]), icon=":material/lightbulb:")
    tables(result)
    with guard("the charts"):
        left, right = st.columns(2)
        with left:
            chartview.show(charts.pareto(result["arms"]), "pareto", "one point per arm: right costs more per "
                           "1,000 questions, higher is more accurate (bars: 95% Wilson intervals); grey arms are "
                           "dominated (another arm is as accurate for less).", key=K + "pareto_chart", series=False)
        with right:
            chartview.show(cv.u_curves(t, labels), "compare-u-curves", "accuracy of each arm where the answer "
                           "sits; lines apart by more than their bands differ at that position.", key=K + "u_chart")
    pair = pick_pair(labels)
    if pair:
        with guard("the differences"):
            chartview.show(cv.differences(t, *pair), "compare-differences", "above zero the first arm is "
                           "more accurate at that position, over the same (matched) trials; bars are 95% intervals.",
                           key=K + "diff_chart", series=False)
        with st.expander("Planner: how many tasks to tell a difference apart", expanded=True):
            planner(result, pair)
        with st.expander("Failures only: both answers side by side"):
            failures(t, pair)
    link = cv.write_url()
    st.markdown("**Link to this view** (copy it with the button at the right of the box)")
    st.code(link, language=None)
    sources = sorted(set(t[t["arm"].isin(labels)]["sweep_label"].dropna().astype(str))) if "sweep_label" in t else []
    with guard("the report"):
        # made on click (data as a callable): the report inlines plotly.js and reads the failures' texts
        st.download_button("Download report (one HTML file)",
                           partial(cv.report, result, pair, sources, cv.session_prices()),
                           file_name="litm-compare-report.html", mime="text/html", key=K + "report",
                           icon=":material/download:", on_click="ignore")


main()
