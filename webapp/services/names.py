"""How the app names a model and the source of a number, the same on every series, legend, hover,
bound line and export: "Qwen2.5 Coder 0.5B · this app · n=150 per point" against
"GPT-3.5-Turbo · LITM Table 6 (2023)". A curve that does not say whose it is reads as the paper's.

The names of strategies, models, metrics, arms and sweeps come from one place,
components.report.sweeps (their registries' labels); re-exported here for the pages."""

from __future__ import annotations

from components.core.words import count
from components.report.sweeps import (
    arm_label,
    metric_label,
    model_title,
    params_text,
    setting_label,
    strategy_label,
    sweep_label,
)

__all__ = [
    "PAPERS",
    "THIS_APP",
    "arm_label",
    "count",
    "metric_label",
    "model_title",
    "models_of",
    "ours",
    "params_text",
    "published",
    "setting_label",
    "strategy_label",
    "sweep_label",
]

THIS_APP = "this app"


PAPERS = {
    "liu2023": ("LITM", 2023),
    "rr2024": ("R&R", 2024),
    "alr2_2024": ("ALR2", 2024),
    "hsieh2024": ("Found in the Middle", 2024),
    "pos2distill2025": ("Pos2Distill", 2025),
}


def models_of(values) -> str:
    """The distinct models of a column, named, in order: 'Qwen2.5 Coder 0.5B, gpt-4o-mini'."""
    return ", ".join(dict.fromkeys(t for t in (model_title(v) for v in values) if t))


def ours(what: str, model) -> str:
    """'Qwen2.5 Coder 0.5B · LITM QA · 20 documents · this app': a series this app measured."""
    return " · ".join(x for x in (model_title(model), what, THIS_APP) if x)


def published(model: str, source: str, table: str, extra: str = "") -> str:
    """'GPT-3.5-Turbo · LITM Table 6 (2023)': a series as a paper printed it."""
    paper, year = PAPERS.get(source, (source, None))
    where = f"{paper} {table}" + (f" ({year})" if year else "")
    return " · ".join(x for x in (model, extra, where) if x)
