"""Experiments' repeated samples and LLM judge: samples (each model then samples at a temperature, sample i
with the seed plus i, where the provider takes a seed) and `metric = "judge"` with a judge model on the
sidebar's provider and key. Bounds are the config's own (run.config_rules, via services.sweeps); the
estimate below counts every sample's calls and one judge call per trial."""

from __future__ import annotations

import streamlit as st

from webapp.services import sweeps
from webapp.session import State


def options(provider: str, base_url: str | None) -> dict:
    """{samples, temperature, seed, judge}: the grid's keys config_dict reads (judge: a [sweep.judge]
    table or None)."""
    state = State()
    c1, c2, c3 = st.columns(3)
    samples = int(
        c1.number_input(
            "Samples of each trial",
            min_value=int(sweeps.SAMPLES.low or 1),
            max_value=int(sweeps.SAMPLES.high or 100),
            step=1,
            key=State.exp_samples.key,
            help="each question asked this many times in each cell, each a trial with its sample index; "
            "curves, intervals and Compare's paired tests then count questions, each its samples' mean",
        )
    )
    temperature = float(
        c2.number_input(
            "Temperature (samples > 1)",
            min_value=float(sweeps.TEMPERATURE.low or 0.0),
            max_value=float(sweeps.TEMPERATURE.high or 2.0),
            step=0.1,
            key=State.exp_temperature.key,
            disabled=samples <= 1,
            help="samples differ only above 0; one sample keeps each model's greedy default",
        )
    )
    seed = int(
        c3.number_input(
            "Seed (samples > 1)",
            min_value=0,
            step=1,
            key=State.exp_seed.key,
            disabled=samples <= 1,
            help="sample i asks with this seed plus i, where the provider takes a seed (a rerun then "
            "sends nothing: each sample is its own cached call)",
        )
    )
    judge = None
    if st.toggle(
        "Score each answer with an LLM judge",
        key=State.exp_judge.key,
        help="after each trial the judge model is asked once with our judge prompt (CORRECT or "
        "INCORRECT); Results then audits it against best subspan EM and fuzzy match. Runs live.",
    ):
        if not state.exp_judge_model:
            state.exp_judge_model = state.model.strip() or "judge-model"
        model = st.text_input(
            f"Judge model (provider {provider}, key from the sidebar)", key=State.exp_judge_model.key
        ).strip()
        if model:
            judge = {
                k: v for k, v in {"provider": provider, "model": model, "base_url": base_url}.items() if v
            }
        else:
            st.warning("Name the judge model, or turn the judge off.")
    if samples > 1 and temperature <= 0:
        st.warning("Samples at temperature 0 are the same answer: raise the temperature.")
    return {"samples": samples, "temperature": temperature, "seed": seed, "judge": judge}
