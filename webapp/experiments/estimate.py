"""Experiments' models and estimate: the models to run (the sidebar's, by default), and the sweep's trials,
calls, tokens, dollars and, for a local model, time before it runs."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from webapp.services import sharing
from webapp.services.models import duration, speed
from webapp.session import State
from webapp.ui.render import thousands, usd

ESTIMATE_ONLY = ("openai", "gpt-4o-mini")  # what a sweep is priced as before a model is chosen


def models_box(choice) -> list[dict]:
    state = State()
    if choice is not None:
        provider, base_url = choice.spec.provider, choice.spec.base_url
        chosen = [choice.spec.provider, choice.spec.model]
        if state.exp_models_for != chosen or not state.exp_models:
            state.exp_models = choice.spec.model  # the sidebar's model, again whenever the sidebar changes
            state.exp_models_for = chosen
    else:
        usable = state.provider in ("openai", "anthropic") and state.model.strip()
        provider = state.provider if usable else ESTIMATE_ONLY[0]
        base_url = None
        if not state.exp_models:
            state.exp_models = state.model.strip() if usable else ESTIMATE_ONLY[1]
        st.info(
            f"Choose a provider and model in the sidebar (and enter a key) to run a sweep. Until then the "
            f"estimate prices the sweep as {provider} models.",
            icon=":material/key_off:",
        )
    text = st.text_area(
        f"Models (one per line; provider {provider}"
        + (f" at {base_url}" if base_url else "")
        + ", key from the sidebar)",
        key=State.exp_models.key,
        height=80,
    )
    out = []
    for line in dict.fromkeys(x.strip() for x in text.splitlines()):
        if line:
            out.append(
                {k: v for k, v in {"provider": provider, "model": line, "base_url": base_url}.items() if v}
            )
    return out


def local_time(est: dict, models: list[dict]) -> str:
    """'about 2 h 10 min' for the local models' share of the sweep, from the model's measured speed here."""
    local = [m for m in models if m.get("provider") == "local"]
    if not local or not models:
        return ""
    try:
        measured = speed(local[0]["model"], sharing.load_runs(in_url=False)[0])
    except Exception:  # no measurement
        measured = None
    if measured is None:
        return (
            "The local model runs one call at a time; its speed on this machine is not measured yet (a run in "
            "the Playground measures it). Calls already cached cost no time."
        )
    share = len(local) / len(models)
    seconds = measured.seconds(int(est["input_tokens"] * share), int(est.get("calls", 0) * share))
    if not measured.here:
        return (
            f"The local model runs one call at a time. Its speed on this machine is not measured yet (a run in "
            f"the Playground measures it); at the speed of the machine that made the shipped runs, "
            f"{measured.text()}, this sweep would take about {duration(seconds)}."
        )
    return (
        f"The local model runs one call at a time at {measured.text()}: about {duration(seconds)} for this "
        "sweep, less for calls already cached."
    )


def show_estimate(est: dict, max_usd: float = 0.0, models: Sequence[dict] = ()) -> None:
    cols = st.columns(5)
    cols[0].metric("Trials", thousands(est["trials"]))
    cols[1].metric("LLM calls", thousands(est["calls"]))
    cols[2].metric("Input tokens", thousands(est["input_tokens"]))
    cols[3].metric("Output tokens", thousands(est["output_tokens"]))
    cols[4].metric(
        "Batch cost (est.)" if est.get("batch") else "Estimated cost",
        "unknown" if est["usd"] is None else usd(est["usd"]),
        help="at the providers' batch prices: half the list price" if est.get("batch") else None,
    )
    note = est["note"]
    if est.get("samples", 1) > 1:
        note += f"; {est['samples']} samples of each trial, each its own call"
    if est.get("judge_calls"):
        note += f"; {thousands(est['judge_calls'])} of the calls are the judge's, one per trial"
    if est["unpriced"]:
        note += f"; no price for {', '.join(est['unpriced'])}"
    st.caption(f"Before running: {note}. Calls already in the run store's cache cost nothing.")
    slow = local_time(est, list(models))
    if slow:
        st.info(slow, icon=":material/timer:")
    if max_usd > 0 and est["usd"] and est["usd"] > max_usd:
        st.warning(
            f"The budget ({usd(max_usd)}) is below the estimate ({usd(est['usd'])}): the sweep will stop "
            f"after about {max_usd / est['usd']:.0%} of its trials. Raise the budget, or set it to 0 "
            "for none.",
            icon=":material/savings:",
        )
