"""Where the model looks. For the Playground: each page's share of the bundled local model's attention
(components/providers/attention.py), measured live and cached in the user's run store like every call;
for other providers, the one line saying why not. For Results: the stored attention trials' curves by
position, the gold document's and the positional bias's (components/report/attention.py)."""

from __future__ import annotations

from components.providers.attention import ATTENTION_PROVIDERS, refusal, regions_of
from components.report.attention import (
    BIAS_MEANING,
    MEANING,
    has_attention,
    position_curves,
    position_figure,
    strip_figure,
)
from webapp.services import views
from webapp.services.stores import user_db

# the bootstrap of each shape costs seconds: once per store version and selection, kept per server and in
# the cache folder for the next server process (services/views); the figure once per server
position_curves = views.kept(position_curves, disk=True)
position_figure = views.kept(position_figure)

__all__ = [
    "BIAS_MEANING",
    "MEANING",
    "can_attend",
    "has_attention",
    "measure",
    "position_curves",
    "position_figure",
    "strip_figure",
    "why_not",
]


def can_attend(spec) -> bool:
    return spec is not None and spec.provider in ATTENTION_PROVIDERS


def why_not(spec) -> str:
    return refusal(spec.provider) + "; choose the bundled local model in the sidebar to see it."


def measure(prompt, choice) -> dict:
    """{"model", "masses": {page: share}, "other", "cached", "seconds"} for one prompt (blocking)."""
    import asyncio

    from components.providers.factory import make_provider
    from components.run.caller import Caller
    from components.run.store import RunStore

    with RunStore(user_db()) as store:
        caller = Caller(make_provider(choice.spec), store, concurrency=1)
        found, _ = asyncio.run(caller.attention(prompt.messages, regions_of(prompt)))
    return {
        "model": found.model,
        "masses": dict(zip(found.pages, found.masses, strict=True)),
        "other": found.other_mass,
        "cached": found.cached,
        "seconds": found.latency_s,
    }
