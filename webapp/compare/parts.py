"""Helpers of the Compare page: session-editable prices, the charts (named by model and source, zoomed to
their data), the pair the recommendation names, the one-file report, and the grid the planner hands to
Experiments. The statistics live in services.analysis (components.report.compare)."""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from webapp.services import analysis, figures, models, multiq, published, stores, views
from webapp.services.names import THIS_APP, models_of
from webapp.session import State
from webapp.session.url import OWN_PRICES

OWN = OWN_PRICES


# --- prices ------------------------------------------------------------------------------------------------


def session_prices() -> dict | None:
    """The price table edited in this session, or None (the shipped table and override file)."""
    return State().cmp_prices


def price_editor(where) -> None:
    """The price table as an editable grid; edits hold for this session only."""
    rows = pd.DataFrame(models.price_rows(session_prices()))
    where.caption(
        f"List prices in USD per million tokens, table dated **{models.PRICES_DATE}** "
        f"(each row says where it was checked). Batch: "
        + ", ".join(f"{p} {v['factor']:.0%} of list" for p, v in models.BATCH.items())
        + ". Edits apply to this session only; for good, use `LITM_PRICES` or "
        "`~/.config/litm-explorer/prices.json`."
    )
    edited = where.data_editor(
        rows,
        key=State.cmp_price_grid.key,
        hide_index=True,
        width="stretch",
        disabled=["source"],
        column_config={
            "input": st.column_config.NumberColumn("input $/1M", min_value=0.0, max_value=models.MAX_PRICE),
            "output": st.column_config.NumberColumn("output $/1M", min_value=0.0, max_value=models.MAX_PRICE),
        },
    )
    c1, c2 = where.columns(2)
    if c1.button("Use these prices", key=State.cmp_price_apply.key):
        table: dict = {}
        for r in edited.dropna(subset=["provider", "model", "input", "output"]).to_dict("records"):
            table.setdefault(str(r["provider"]), {})[str(r["model"])] = {
                "input": float(r["input"]),
                "output": float(r["output"]),
                "source": str(r.get("source") or "edited"),
                "checked": str(r.get("checked") or "edited in this session"),
            }
        State().cmp_prices = table
    if c2.button(
        "Back to the shipped prices", key=State.cmp_price_reset.key, disabled=session_prices() is None
    ):
        State.cmp_prices.clear()
        State.cmp_price_grid.clear()


# --- figures and report ---------------------------------------------------------------------------------------


def x_axis(t: pd.DataFrame) -> tuple[str, str]:
    """(column, title) of the position axis: the trials' layout (the gold index in a documents sweep,
    else the answer position) and its title, the engine's."""
    layout = analysis.layout_of(t)
    return layout.x, layout.x_title(analysis.position_kind(t))


def u_curves(t: pd.DataFrame, labels: list[str], overlays: pd.DataFrame | None = None):
    """Accuracy by position, one line per arm (each arm's label names its model; the source is this app).
    The page writes each line's shape under it (`u_curve_shapes`) and draws the likelihood curves
    (ui.curves) where the arms' trials carry answer_logprob. `overlays`: published curves chosen from
    `overlay_options`, drawn dotted."""
    part = t[t["arm"].isin(labels)]
    x, title = x_axis(part)
    table = analysis.u_curve(part, "ok", series=("arm",), x=x)  # accuracy_lines escapes the labels itself
    return figures.accuracy_lines(
        table,
        x,
        title="Accuracy by position, per arm",
        x_title=title,
        metric_label="accuracy (primary metric)",
        overlays=overlays if overlays is not None and not overlays.empty else None,
    )


def overlay_options(t: pd.DataFrame, labels: list[str]) -> pd.DataFrame:
    """The published curves on the arms' gold-index axis, for their numbers of documents: Lost in the
    Middle Tables 5-7 and the later papers' curves of the same experiment (services.published); none on
    a token-position axis (R&R's curves are per length: the Results page offers them)."""
    part, x, _, _ = u_curve_parts(t, labels)
    if x != "gold_index" or "documents" not in part:
        return pd.DataFrame()
    docs = set(pd.to_numeric(part["documents"], errors="coerce").dropna().astype(int))
    return published.index_curves(docs) if docs else pd.DataFrame()


def overlay_names(overlays: pd.DataFrame | None) -> dict[str, str]:
    """Legend names of the chosen published curves: model, method, N, paper and table."""
    if overlays is None or overlays.empty:
        return {}
    return {
        figures.esc(lab): figures.esc(t) for lab, t in zip(overlays["label"], overlays["title"], strict=True)
    }


def u_curve_parts(t: pd.DataFrame, labels: list[str]) -> tuple[pd.DataFrame, str, str, str]:
    """(the arms' trials, the position column, its title, the size column a line is split by)."""
    part = t[t["arm"].isin(labels)]
    x, title = x_axis(part)
    return part, x, title, "documents" if x == "gold_index" else "length"


def u_curve_shapes(t: pd.DataFrame, labels: list[str]) -> list[dict]:
    """The shape of each arm's accuracy curve (report.shape), split by size where an arm holds several."""
    part, x, _, size = u_curve_parts(t, labels)
    return analysis.shapes(part, part["ok"], part["arm"], x, size) if len(part) else []


def differences(t: pd.DataFrame, a: str, b: str):
    x, title = x_axis(t[t["arm"].isin([a, b])])
    return figures.position_differences(analysis.by_position(t, a, b, x=x), a, b, x=x, x_title=title)


def note(t: pd.DataFrame, labels: list[str], overlays: pd.DataFrame | None = None) -> str:
    """Whose numbers: the arms' models, measured by this app; and the published curves drawn, if any."""
    part = t[t["arm"].isin(labels)]
    text = (
        f"Measured by {THIS_APP} with {models_of(part['model']) or 'the arms’ models'}; 95% Wilson intervals."
    )
    if overlays is not None and not overlays.empty:
        text += f" Dotted: as published ({'; '.join(dict.fromkeys(overlays['title']))}), not measured here."
    return text


def pareto(arms: pd.DataFrame):
    """The accuracy-cost chart: both axes from zero, each arm numbered as in the arms table (report.charts)."""
    return figures.pareto(arms)


def all_free(arms: pd.DataFrame) -> bool:
    """Every arm with scored trials runs free (a local model): cost cannot tell them apart."""
    part = arms[arms["n"] > 0] if len(arms) else arms
    cost = (
        pd.to_numeric(part.get("cost_per_1000_usd"), errors="coerce") if len(part) else pd.Series(dtype=float)
    )
    return bool(len(cost)) and bool((cost == 0).all())


def use_reference_price() -> None:
    """Price every arm as the reference model (a button's callback: before the price picker is drawn)."""
    State().cmp_price_model = analysis.REFERENCE_MODEL


def recommended_pair(result: analysis.Comparison, labels: list[str]) -> tuple[str, str] | None:
    """The pair the verdict weighs (the arm recommended and the one against it), in the order of
    `labels`; the recommended arm and the next one when it names only one."""
    v = result.verdict
    named = [x for x in dict.fromkeys((v.recommend, v.versus)) if x in labels]
    if len(named) == 1 and len(labels) >= 2:
        named.append(next(x for x in labels if x != named[0]))
    if len(named) != 2:
        return None
    first, second = sorted(named, key=labels.index)
    return first, second


FAILURES_SHOWN = 1000  # failures of a pair listed with their texts (fetched from the stores)


def failures(t: pd.DataFrame, pair: tuple[str, str], limit: int = FAILURES_SHOWN) -> tuple[pd.DataFrame, int]:
    """(the first `limit` failures of the pair, with the question, gold answers and both answers read
    from the stores, since the page holds summary columns only; how many failures in all)."""
    fail = analysis.failures(t, *pair)
    total = len(fail)
    fail = fail.head(limit).copy()
    sources = [f"{c}_a" for c in analysis.FAILURE_SOURCES] + [f"{c}_b" for c in analysis.FAILURE_SOURCES]
    if fail.empty or not set(sources) <= set(fail.columns):
        return fail.drop(columns=[c for c in sources if c in fail]), total
    for side in ("a", "b"):
        ids = fail[[f"{c}_{side}" for c in analysis.FAILURE_SOURCES]]
        full = stores.whole(views.fresh(ids.set_axis(list(analysis.FAILURE_SOURCES), axis=1)))
        if side == "a":
            fail["question"], fail["answers"] = full.get("question"), full.get("answers")
        fail[f"answer_{side}"] = full.get("answer")
    return fail.drop(columns=sources), total


def report(
    result: analysis.Comparison, pair: tuple[str, str] | None, sources: list[str], prices: dict | None = None
) -> bytes:
    """The one-file report; made when its download button is clicked (outside the script run, so the
    session's edited prices come in as `prices`)."""
    t = result.trials
    labels = list(result.arms["label"])
    shown = [pareto(result.arms), u_curves(t, labels)]
    fail, total = None, None
    if pair:
        shown.append(differences(t, *pair))
        fail, total = failures(t, pair, limit=50)  # the report lists the first 50
    tables = []
    mq = multiq.trials(t[t["arm"].isin(labels)]) if "arm" in t else t.iloc[0:0]
    if not mq.empty:  # multi-question arms: Compare's view of them by K, as the page draws it
        tab = multiq.table(mq, "ok")
        shown += [multiq.accuracy_figure(tab, "correct"), multiq.categories_figure(tab)]
        tables.append(
            (
                "Many questions at once: the chosen arms by K",
                f"Correct: the two-way substring match, 95% Wilson intervals. Published: {multiq.citation()}",
                multiq.beside(tab),
            )
        )
    text = analysis.report(
        result,
        figures=shown,
        failures=fail,
        failures_total=total,
        pair=pair,
        prices=prices,
        prices_edited=prices is not None,
        sources=sources,
        tables=tables,
    )
    return text.encode("utf-8")


def plan_in_experiments(t: pd.DataFrame, pair: tuple[str, str], tasks: int) -> None:
    """Hand the pair's strategies, parameters, lengths and positions and the tasks the planner asks for
    to Experiments (which applies them once and caps the tasks at the task set's size), then open it."""
    part = t[t["arm"].isin(pair)]
    params: dict[str, list[int]] = {}
    for blob in part["params"].dropna().unique():
        try:
            found = json.loads(blob) if isinstance(blob, str) else {}
        except ValueError:
            found = {}
        for name, value in (found or {}).items():
            if isinstance(value, int | float):
                params.setdefault(name, [])
                if int(value) not in params[name]:
                    params[name].append(int(value))
    State().sweep_plan = {
        "strategies": sorted(set(part["strategy"].dropna().astype(str))),
        "params": {k: sorted(v) for k, v in params.items()},
        "lengths": sorted(int(x) for x in pd.to_numeric(part["length"], errors="coerce").dropna().unique()),
        "positions": sorted(
            float(x) for x in pd.to_numeric(part["position"], errors="coerce").dropna().unique()
        ),
        "n_tasks": int(tasks),
    }
    st.switch_page("experiments/page.py")
