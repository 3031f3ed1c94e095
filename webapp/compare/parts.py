"""Helpers of the Compare page: its state in the URL (query parameters), session-editable prices, the
charts and the one-file report. The statistics live in components.report.compare."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from components.providers import pricing
from components.report import analysis, charts, compare, report_html
from webapp.services import stores as runs
from webapp.session import url as urlstate

K = "cmp_"  # widget keys of the page (named in webapp/state.py)
# query parameter -> (session key, is a list)
URL_KEYS = {"sweep": (K + "sweeps", True), "arm": (K + "arms", True), "length": (K + "length", False),
            "price": (K + "price_model", False), "batch": (K + "batch", False), "pair": (K + "pair", False),
            "d": (K + "difference", False)}
OWN = "each arm's own model"
ALL_LENGTHS = "all lengths"


def seed_from_url() -> None:
    """Widget values from the URL (once per URL): a copied link opens the same view."""
    urlstate.seed("compare", URL_KEYS, {"batch": lambda v: v in ("1", "true", "yes"), "d": float})


def write_url() -> str:
    """The page's state into the URL; returns the link to copy."""
    return urlstate.write("compare", URL_KEYS, skip=(OWN, ALL_LENGTHS))


# --- prices ------------------------------------------------------------------------------------------------

def session_prices() -> dict | None:
    """The price table edited in this session, or None (the shipped table and override file)."""
    return st.session_state.get(K + "prices")


def price_editor(where) -> None:
    """The price table as an editable grid; edits hold for this session only."""
    rows = pd.DataFrame(pricing.price_rows(session_prices()))
    where.caption(f"List prices in USD per million tokens, table dated **{pricing.PRICES_DATE}** "
                  f"(each row says where it was checked). Batch: "
                  + ", ".join(f"{p} {v['factor']:.0%} of list" for p, v in pricing.BATCH.items())
                  + ". Edits apply to this session only; for good, use `LITM_PRICES` or "
                    "`~/.config/litm-explorer/prices.json`.")
    edited = where.data_editor(rows, key=K + "price_grid", hide_index=True, width="stretch", disabled=["source"],
                               column_config={"input": st.column_config.NumberColumn("input $/1M", min_value=0.0),
                                              "output": st.column_config.NumberColumn("output $/1M", min_value=0.0)})
    c1, c2 = where.columns(2)
    if c1.button("Use these prices", key=K + "price_apply"):
        table: dict = {}
        for r in edited.dropna(subset=["provider", "model", "input", "output"]).to_dict("records"):
            table.setdefault(str(r["provider"]), {})[str(r["model"])] = {
                "input": float(r["input"]), "output": float(r["output"]), "source": str(r.get("source") or "edited"),
                "checked": str(r.get("checked") or "edited in this session")}
        st.session_state[K + "prices"] = table
    if c2.button("Back to the shipped prices", key=K + "price_reset", disabled=session_prices() is None):
        st.session_state.pop(K + "prices", None)
        st.session_state.pop(K + "price_grid", None)


# --- figures and report ---------------------------------------------------------------------------------------

def x_axis(t: pd.DataFrame) -> tuple[str, str]:
    """(column, title) of the position axis: gold index in a documents sweep, else the answer position."""
    if "gold_index" in t and t["gold_index"].notna().any() and t["position"].isna().all():
        return "gold_index", "gold document index"
    kind = analysis.position_kind(t)
    return "position", "answer position (fraction of the document)" if kind == "fraction" else \
        "answer position (tokens)"


def u_curves(t: pd.DataFrame, labels: list[str]):
    part = t[t["arm"].isin(labels)]
    x, title = x_axis(part)
    table = analysis.u_curve(part, "ok", series=("arm",), x=x)
    if not table.empty:
        table["series"] = table["series"].map(charts._safe)
    return charts.accuracy_lines(table, x, title="Accuracy by position, per arm", x_title=title,
                                 metric_label="accuracy (primary metric)")


def differences(t: pd.DataFrame, a: str, b: str):
    x, title = x_axis(t[t["arm"].isin([a, b])])
    return charts.position_differences(compare.by_position(t, a, b, x=x), a, b, x=x, x_title=title)


FAILURES_SHOWN = 1000  # failures of a pair listed with their texts (fetched from the stores)


def failures(t: pd.DataFrame, pair: tuple[str, str], limit: int = FAILURES_SHOWN) -> tuple[pd.DataFrame, int]:
    """(the first `limit` failures of the pair, with the question, gold answers and both answers read
    from the stores, since the page holds summary columns only; how many failures in all)."""
    fail = compare.failures(t, *pair)
    total = len(fail)
    fail = fail.head(limit).copy()
    sources = [f"{c}_a" for c in compare.FAILURE_SOURCES] + [f"{c}_b" for c in compare.FAILURE_SOURCES]
    if fail.empty or not set(sources) <= set(fail.columns):
        return fail.drop(columns=[c for c in sources if c in fail]), total
    for side in ("a", "b"):
        ids = fail[[f"{c}_{side}" for c in compare.FAILURE_SOURCES]]
        full = runs.whole(ids.set_axis(list(compare.FAILURE_SOURCES), axis=1))
        if side == "a":
            fail["question"], fail["answers"] = full.get("question"), full.get("answers")
        fail[f"answer_{side}"] = full.get("answer")
    return fail.drop(columns=sources), total


def report(result: dict, pair: tuple[str, str] | None, sources: list[str], prices: dict | None = None) -> bytes:
    """The one-file report; made when its download button is clicked (outside the script run, so the
    session's edited prices come in as `prices`)."""
    t = result["trials"]
    labels = list(result["arms"]["label"])
    figures = [charts.pareto(result["arms"]), u_curves(t, labels)]
    fail, total = None, None
    if pair:
        figures.append(differences(t, *pair))
        fail, total = failures(t, pair, limit=50)  # the report lists the first 50
    text = report_html.build(result, figures=figures, failures=fail, failures_total=total, pair=pair,
                             prices=prices, prices_edited=prices is not None, sources=sources)
    return text.encode("utf-8")


def plan_in_experiments(t: pd.DataFrame, pair: tuple[str, str], tasks: int) -> None:
    """Fill the Experiments grid with the pair's strategies and parameters and the tasks the planner
    asks for (the page caps them at the task set's size), then open Experiments."""
    import json

    from webapp.session.state import State

    part = t[t["arm"].isin(pair)]
    ss = st.session_state
    ss["exp_strategies"] = sorted(set(part["strategy"].dropna().astype(str)))
    for blob in part["params"].dropna().unique():
        try:
            params = json.loads(blob) if isinstance(blob, str) else {}
        except ValueError:
            params = {}
        for name, value in (params or {}).items():
            if isinstance(value, int | float):
                ss[f"exp_param_{name}"] = int(value)
    lengths = sorted(int(x) for x in pd.to_numeric(part["length"], errors="coerce").dropna().unique())
    positions = sorted(float(x) for x in pd.to_numeric(part["position"], errors="coerce").dropna().unique())
    if lengths:
        ss["exp_lengths"] = lengths
    if positions:
        ss["exp_positions"] = positions
    ss["exp_n_tasks"] = int(tasks)
    owner = State().sweep_owner
    if owner:  # these values win over the ones Experiments kept for a refresh
        ss["_restored_experiments"] = owner
    st.switch_page("experiments/page.py")
