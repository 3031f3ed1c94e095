"""How the app names a model and the source of a number, the same on every series, legend, hover,
bound line and export: "Qwen2.5 Coder 0.5B · this app · n=50 per point" against
"GPT-3.5-Turbo · LITM Table 6 (2023)". A curve that does not say whose it is reads as the paper's."""

from __future__ import annotations

import math

from components.providers.localmodel import ALIASES, MODELS

THIS_APP = "this app"
PAPERS = {
    "liu2023": ("LITM", 2023),
    "rr2024": ("R&R", 2024),
    "alr2_2024": ("ALR2", 2024),
    "hsieh2024": ("Found in the Middle", 2024),
    "pos2distill2025": ("Pos2Distill", 2025),
}


def model_title(model) -> str:
    """'Qwen2.5 Coder 0.5B' for the bundled 'local:qwen2.5-coder-0.5b-instruct'; 'gpt-4o-mini' for
    'openai:gpt-4o-mini' (a trial's model is provider:model); '' for none."""
    if model is None or (isinstance(model, float) and math.isnan(model)):
        return ""
    text = str(model)
    provider, _, name = text.partition(":")
    if not name:
        name, provider = provider, ""
    weights = MODELS.get(ALIASES.get(name, name)) if provider in ("local", "") else None
    if weights is not None:
        return weights.title.split(" Instruct")[0].split(",")[0].strip()
    return name


def models_of(values) -> str:
    """The distinct models of a column, named, in order: 'Qwen2.5 Coder 0.5B, gpt-4o-mini'."""
    return ", ".join(dict.fromkeys(t for t in (model_title(v) for v in values) if t))


def ours(what: str, model) -> str:
    """'Qwen2.5 Coder 0.5B · litm · 20 documents · this app': a series this app measured."""
    return " · ".join(x for x in (model_title(model), what, THIS_APP) if x)


def published(model: str, source: str, table: str, extra: str = "") -> str:
    """'GPT-3.5-Turbo · LITM Table 6 (2023)': a series as a paper printed it."""
    paper, year = PAPERS.get(source, (source, None))
    where = f"{paper} {table}" + (f" ({year})" if year else "")
    return " · ".join(x for x in (model, extra, where) if x)
