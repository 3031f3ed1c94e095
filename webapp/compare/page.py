"""Compare: two or more arms (strategy x parameters x model) side by side, from any store: accuracy with
n and a Wilson interval, cost per 1,000 questions, paired differences with an exact McNemar p-value and
its Holm adjustment over the pairs shown, the Pareto front, a one-line verdict (non-inferiority within a
margin the user sets, a minimum saving) then its reasoning, a planner, failures side by side, a link to
this view and a one-file report. It opens on this browser's latest sweep and its arms; the planner opens on the pair
the recommendation names. The statistics are services.analysis; the helpers compare/parts.py."""

from __future__ import annotations

from functools import partial

import pandas as pd
import streamlit as st

from webapp import session
from webapp.compare import multiq, parts
from webapp.services import analysis, figures, models, sharing, stores
from webapp.session import State, url
from webapp.ui import charts, curves, pickers
from webapp.ui.render import guard, md


def open_on_my_latest(trials: pd.DataFrame, sweeps: pd.DataFrame) -> None:
    """First visit (no sweep chosen, none in the link): this browser's latest sweep with trials."""
    state = State()
    if state.cmp_sweeps is not None or "sweep" in url.given("compare"):
        return
    have = set(trials["sweep_key"].unique())
    for r in sharing.my_sweeps().itertuples():
        key = stores.sweep_key(r.id)
        if key in have:
            state.cmp_sweeps = [key]
            return
    state.cmp_sweeps = []


def choose(trials: pd.DataFrame, sweeps: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """Sweeps, length and arms to compare; returns (prepared trials of the chosen sweeps, chosen arm labels)."""
    state = State()
    c1, c2 = st.columns([3, 1])
    labels = dict(zip(sweeps["sweep_key"], sweeps["label"], strict=True))
    have = stores.with_trials(sweeps, trials)
    chosen = pickers.multi(
        c1,
        "Sweeps",
        have,
        State.cmp_sweeps,
        format_func=lambda k: labels.get(k, k),
        placeholder="every sweep of every store",
    )
    part = trials[trials["sweep_key"].isin(chosen)] if chosen else trials
    lengths = sorted(int(x) for x in pd.to_numeric(part["length"], errors="coerce").dropna().unique())
    length = pickers.select(
        c2,
        "Document length",
        [url.ALL_LENGTHS, *map(str, lengths)],
        State.cmp_length,
        help="cost per 1,000 questions depends on the length: compare at one",
    )
    part = analysis.filter_length(part, None if length in (None, url.ALL_LENGTHS) else int(length))
    t = analysis.prepare(part)
    ranked = analysis.arms(t).sort_values("accuracy", ascending=False)["label"].tolist()
    default = analysis.default_arms(t, ranked)
    if (
        state.cmp_sweeps_for is not None
        and state.cmp_sweeps_for != chosen
        and "arm" not in url.given("compare")
    ):
        state.cmp_arms = None  # other sweeps: their own default arms, never an empty list
    state.cmp_sweeps_for = list(chosen)
    if state.cmp_arms:  # a link naming arms by their raw ids ('rr k=3 r=5000 · gpt-4o-mini'): their names
        state.cmp_arms = analysis.known_labels(t, list(state.cmp_arms), set(ranked))
    arms = pickers.multi(
        st,
        "Arms (strategy, parameters, model)",
        ranked,
        State.cmp_arms,
        default=default,
        placeholder="choose two or more arms",
    )
    return t, arms


def pricing_controls() -> tuple[str | None, bool]:
    c1, c2 = st.columns([3, 1])
    table = parts.session_prices()
    every = [f"{p}:{m}" for p, ms in (table or models.PRICES).items() for m in sorted(ms)]
    price = pickers.select(
        c1,
        "Price every arm as",
        [parts.OWN, *every],
        State.cmp_price_model,
        help="re-price the stored token counts of every arm at another model's list price",
    )
    batch = pickers.toggle(
        c2,
        "Batch prices",
        State.cmp_batch,
        help="the providers' batch APIs: half the list price (OpenAI, Anthropic)",
    )
    edited = " · edited for this session" if table is not None else ""
    with st.expander(
        f"Prices: table dated {models.PRICES_DATE}{edited} (see sources, edit for this session)"
    ):
        parts.price_editor(st)
    return (None if price == parts.OWN else price), batch


def tables(result: dict) -> None:
    arms = result["arms"]
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
    # an arm with no answer scored has no matched trials by nature: the line above says why, not this one
    unmatched = [p for p in result["pairs"] if not p.n_matched and not {p.a, p.b} & set(unscored)]
    pairs = [p for p in result["pairs"] if p.n_matched]
    if unmatched:
        st.caption(
            "No matched trials (no task and cell in common), so no difference can be measured: "
            + "; ".join(f"{md(p.a)} vs {md(p.b)}" for p in unmatched)
        )
    if pairs:
        st.markdown(
            f"**Pairs** (paired on task and cell; Newcombe 95% interval; exact McNemar test, and its p "
            f"adjusted by Holm's method for the {len(result['pairs'])} pairs shown: the verdict reads the "
            "adjusted one)"
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


SEP = "  vs  "


def pick_pair(labels: list[str], result: dict) -> tuple[str, str] | None:
    options = [f"{a}{SEP}{b}" for i, a in enumerate(labels) for b in labels[i + 1 :]]
    if not options:
        return None
    state = State()
    named = parts.recommended_pair(result, labels)
    if named and state.cmp_pair_for != labels and "pair" not in url.given("compare"):
        state.cmp_pair = f"{named[0]}{SEP}{named[1]}"  # the pair the recommendation names
    state.cmp_pair_for = list(labels)
    chosen = pickers.select(
        st, "Pair", options, State.cmp_pair, help="the pair the recommendation names, to begin with"
    )
    return tuple(chosen.split(SEP, 1)) if chosen else None


def planner(result: dict, pair: tuple[str, str] | None) -> None:
    c1, c2, c3 = st.columns(3)
    d = c1.number_input("Difference that matters (points)", 1.0, 50.0, step=1.0, key=State.cmp_difference.key)
    power = c2.selectbox("Power", [0.8, 0.9], key=State.cmp_power.key)
    p = next((x for x in result["pairs"] if pair and (x.a, x.b) == pair), None)
    t = result["trials"]
    cells = analysis.cells_per_task(t, list(pair or []))
    plan = analysis.pairs_plan(p, result["arms"], difference=d / 100, power=power, cells_per_task=cells)
    cost = "unknown (no price)" if plan["cost_usd"] is None else f"${plan['cost_usd']:,.2f}"
    c3.metric(
        "Tasks needed", f"{plan['tasks']:,}", help=f"{plan['pairs']:,} matched trials over {cells} cells"
    )
    st.caption(
        f"{plan['pairs']:,} matched trials ({plan['tasks']:,} tasks × {cells} cells) to tell a {d:.0f}-point "
        f"difference apart with power {power} at alpha 0.05 (exact McNemar; Connor 1987), using "
        f"{'the discordance seen in this pair' if plan['discordance_source'] == 'seen' else 'a default'} "
        f"of {plan['discordance']:.2f}. Running both arms on them costs about {cost}."
    )
    if pair and st.button(
        "Plan this sweep in Experiments",
        key=State.cmp_to_experiments.key,
        icon=":material/tune:",
        help="fills the Experiments grid with these two arms' strategies, parameters, "
        "lengths and positions, and this many tasks",
    ):
        try:
            parts.plan_in_experiments(t, pair, plan["tasks"])
        except Exception:  # noqa: BLE001 - the page runs outside the app's navigation
            st.info("The Experiments grid is filled: open **Experiments**.")


def failures(t: pd.DataFrame, pair: tuple[str, str]) -> None:
    fail, total = parts.failures(t, pair)
    shown = f"; the first {len(fail):,} are listed" if total > len(fail) else ""
    st.caption(f"{total:,} matched trial(s) that at least one arm got wrong (0 wrong, 1 right){shown}.")
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


def decision_rule(where) -> tuple[float, float]:
    """The non-inferiority margin (points) and the minimum saving (% of cost) the verdict uses."""
    c1, c2, c3 = where.columns([1, 1, 2])
    margin = c1.number_input(
        "Margin (points)",
        0.5,
        50.0,
        step=0.5,
        format="%.1f",
        key=State.cmp_margin.key,
        help="a cheaper arm is recommended only if its 95% paired interval shows it at most "
        "this many points less accurate than the most accurate arm",
    )
    saving = c2.number_input(
        "Minimum saving (% of cost)",
        0.0,
        90.0,
        step=5.0,
        format="%.0f",
        key=State.cmp_min_saving.key,
        help="and only if it saves at least this share of the most accurate arm's cost per 1,000 questions",
    )
    c3.caption(
        f"**Decision rule.** Defaults: a margin of {100 * analysis.DEFAULT_MARGIN:.0f} points and a "
        f"minimum saving of {100 * analysis.DEFAULT_MIN_SAVING:.0f}% of cost. A cheaper arm is recommended "
        "only when it is non-inferior within the margin and saves at least the minimum (confident); else "
        "the most accurate arm if it beats every other after Holm's correction (confident); else it is a tie, "
        "and the cheapest of the arms the data cannot tell apart is recommended (not yet)."
    )
    return float(margin) / 100, float(saving) / 100


def verdict_box(result: dict) -> None:
    """The one-line verdict first (report.compare.headline: the words every surface uses), then its
    reasoning; where every arm runs free, the offer to price them at a reference model."""
    v = result["verdict"]
    icon = ":material/verified:" if v.confidence == "confident" else ":material/hourglass_top:"
    box = st.success if v.confidence == "confident" else st.info
    box(f"**{md(v.line)}**\n\n{md(v.reasons)}", icon=icon)
    if parts.all_free(result["arms"]):
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


def overlay_picker(where, t: pd.DataFrame, labels: list[str]) -> pd.DataFrame | None:
    """Published curves to draw over the arms' gold-index curves (none chosen at first)."""
    options = parts.overlay_options(t, labels)
    if options.empty:
        return None
    titles = dict(zip(options["label"], options["title"], strict=True))
    chosen = pickers.multi(
        where,
        "Overlay published curves",
        list(titles),
        State.cmp_u_overlay,
        placeholder="none",
        format_func=titles.get,
        help="Lost in the Middle Tables 5-7, then later papers' curves of the same NQ "
        "experiment (Found in the Middle, Pos2Distill), each naming its model, method "
        "and paper; as published, with the paper's own metric (best subspan EM or "
        "accuracy), beside the arms' primary metric",
    )
    return options[options["label"].isin(chosen)] if chosen else None


def charts_section(t: pd.DataFrame, result: dict, labels: list[str]) -> None:
    present = State().present
    note = parts.note(t, labels)
    with guard("the charts"):
        charts.show(
            parts.pareto(result["arms"]),
            "pareto",
            "one point per arm, numbered as in the table above: "
            "right costs more per 1,000 questions, higher is more accurate (bars: 95% Wilson intervals); "
            f"{figures.colour_word(figures.DOMINATED)} arms are dominated (another arm is as accurate for "
            "less); arms on one spot share a "
            "point.",
            series=False,
            note=note,
            height=420 if present else 480,
        )
        with st.container():
            over = overlay_picker(st, t, labels)
            charts.show(
                parts.u_curves(t, labels, over),
                "compare-u-curves",
                "accuracy of each arm where the "
                "answer sits; lines apart by more than their bands differ at that position"
                + ("; dotted lines with hollow markers are published curves." if over is not None else "."),
                note=parts.note(t, labels, over),
                names=parts.overlay_names(over),
                height=420 if present else None,
            )
        curves.shape_sentences(
            parts.u_curve_shapes(t, labels), "accuracy, primary metric"
        )  # the page's width
        part, x, title, size = parts.u_curve_parts(t, labels)
        if curves.has_likelihood(part):
            curves.likelihood_chart(
                part, part["arm"], x, size, title, name="compare-likelihood", height=420 if present else None
            )


def main() -> None:
    state = session.start("compare")
    st.title("Compare")
    if not state.present:
        st.caption(
            "Choose two or more arms (strategy × parameters × model) from any run store. Trials are paired "
            "on task and cell, so the test is McNemar's exact test on the pairs the arms answered differently."
        )
    trials, sweeps, problems = sharing.load_runs()
    for p in problems:
        st.warning(f"Could not read a run store: {md(p)}")
    if trials.empty:
        st.info("No runs yet: run a sweep on the **Experiments** page, or import runs on **Results**.")
        return
    open_on_my_latest(trials, sweeps)
    top, body, bottom = st.container(), st.container(), st.container()
    with top if not state.present else bottom:  # presenter mode: the chart first, the choices folded under it
        with st.expander("Arms, sweeps and prices", expanded=not state.present):
            t, labels = choose(trials, sweeps)
            price_model, batch = pricing_controls()
        margin, min_saving = decision_rule(
            st.expander("Decision rule: margin and minimum saving") if state.present else st.container()
        )
    if len(labels) < 2:
        with body:
            st.info("Choose at least two arms to compare.")
        url.link("compare")
        return
    result = analysis.compare(
        t,
        labels,
        price_model=price_model,
        batch=batch,
        prices=parts.session_prices(),
        difference=float(state.cmp_difference or 5) / 100,
        margin=margin,
        min_saving=min_saving,
    )
    result["trials"] = t
    with body:
        if state.present:
            charts_section(t, result, labels)
        verdict_box(result)
        tables(result)
        multiq.section(t, labels)  # multi-question arms: accuracy and categories by K, the paper's counts
        if not state.present:
            charts_section(t, result, labels)
        pair = pick_pair(labels, result)
        if pair:
            with guard("the differences"):
                charts.show(
                    parts.differences(t, *pair),
                    "compare-differences",
                    "above zero the first arm is "
                    "more accurate at that position, over the same (matched) trials; bars are 95% intervals.",
                    series=False,
                    note=parts.note(t, list(pair)),
                )
            with st.expander(
                "Planner: how many tasks to tell a difference apart", expanded=not state.present
            ):
                planner(result, pair)
            with st.expander("Failures only: both answers side by side"):
                failures(t, pair)
    with bottom:
        link = url.link("compare")
        with st.expander("Link to this view and the report", expanded=not state.present):
            st.markdown("**Link to this view** (copy it with the button at the right of the box)")
            st.code(link, language=None, wrap_lines=True)
            sources = (
                sorted(set(t[t["arm"].isin(labels)]["sweep_label"].dropna().astype(str)))
                if "sweep_label" in t
                else []
            )
            with guard("the report"):
                # made on click (data as a callable): the report inlines plotly.js and reads the failures' texts
                st.download_button(
                    "Download report (one HTML file)",
                    partial(parts.report, result, pair, sources, parts.session_prices()),
                    file_name="litm-compare-report.html",
                    mime="text/html",
                    key=State.cmp_report.key,
                    icon=":material/download:",
                    on_click="ignore",
                )


with guard("the Compare page"):
    main()
