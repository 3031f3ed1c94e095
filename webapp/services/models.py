"""The models the app can call (the sidebar's choice), the bundled local model's status, list prices,
and how long a local call takes on this machine, measured from the runs it made.

`Choice` is what live runs use: a ModelSpec and the key typed in this session (None when the provider
needs none or the server's environment has it). The key lives in the session only.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from dataclasses import dataclass
from functools import lru_cache

import pandas as pd
import streamlit as st

from components.providers import factory
from components.providers.base import ModelSpec, ProviderError
from components.providers.localmodel import canonical
from components.providers.pricing import BATCH, MAX_PRICE, PRICES, PRICES_DATE, cost_usd, price_rows
from components.run import speed as speed_rules
from components.run.speed import HERE, SHIPPED, Speed, Timer, duration, wait_line
from webapp.services import views
from webapp.services.names import model_title
from webapp.services.stores import user_db

__all__ = [
    "BATCH",
    "DEFAULT_MODELS",
    "KEY_ENV",
    "LABELS",
    "MAX_PRICE",
    "NONE",
    "PRICES",
    "PRICES_DATE",
    "CREDENTIALS",
    "Choice",
    "ModelSpec",
    "ProviderError",
    "Speed",
    "cloud_credentials",
    "cost_usd",
    "default_provider",
    "duration",
    "known_models",
    "local_building",
    "local_status",
    "model_title",
    "price_rows",
    "providers",
    "speed",
    "Timer",
    "wait_line",
    "warm",
]

NONE = "none"  # no model available: prompts only
LABELS = {
    NONE: "none (prompts only)",
    "local": "local (bundled model, no key)",
    "openai": "OpenAI",
    "anthropic": "Anthropic",
    "openai-compatible": "OpenAI-compatible server",
    "gemini": "Google Gemini",
    "bedrock": "Claude on AWS Bedrock",
    "vertex": "Claude on Google Vertex AI",
}
DEFAULT_MODELS = {**factory.DEFAULT_MODELS, NONE: ""}
KEY_ENV = dict(factory.DEFAULT_KEY_ENV)
# where the cloud providers' credentials come from (their own tools' places; the app never asks for them)
CREDENTIALS = {
    "bedrock": "AWS credentials from the server's environment (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, "
    "AWS_PROFILE or ~/.aws/credentials) and its AWS_REGION",
    "vertex": "Google Cloud credentials from the server's environment (GOOGLE_APPLICATION_CREDENTIALS, or gcloud "
    "auth application-default login), its CLOUD_ML_REGION and ANTHROPIC_VERTEX_PROJECT_ID",
}


@dataclass(frozen=True)
class Choice:
    spec: ModelSpec
    api_key: str | None  # None: the provider needs none, or the server environment has it


def local_status() -> tuple[bool, str]:
    """(available, title or the reason it is not): llama-cpp-python and the bundled model installed. While
    `make app` builds the runtime in the background: (False, "... being built, about N min left ...")."""
    building = local_building()
    return (False, building) if building else installed_status()


def local_building() -> str:
    """The line to show while the local runtime is built in the background (or its build failed), else ''."""
    from components.providers.runtime import pending

    line = pending()
    return line[0].upper() + line[1:] + "." if line else ""


@lru_cache(maxsize=1)
def installed_status() -> tuple[bool, str]:
    """local_status once no background build is pending: what is installed does not change while the
    server runs."""
    try:
        if importlib.util.find_spec("llama_cpp") is None:
            return False, "llama-cpp-python is not installed"
        from components.providers import local  # noqa: F401
        from components.providers.localmodel import find_model

        found = find_model("")
        return True, str(getattr(found, "title", found))
    except Exception as e:  # any failure means "not available"
        return False, str(e).splitlines()[0][:160] if str(e) else type(e).__name__


def providers() -> list[str]:
    first = "local" if local_status()[0] or local_building() else NONE
    return [first, "openai", "anthropic", "gemini", "bedrock", "vertex", "openai-compatible"]


def default_provider() -> str:
    return providers()[0]


def known_models(provider: str) -> list[str]:
    return sorted(PRICES.get(provider, {}))


def key_in_environment(provider: str) -> str:
    """The environment variable holding the provider's key on the server, or ''."""
    for env in (KEY_ENV.get(provider), factory.ALSO_KEY_ENV.get(provider)):
        if env and os.environ.get(env):
            return env
    return ""


def cloud_credentials(provider: str) -> tuple[bool, str]:
    """(found, what the sidebar says) for a provider whose credentials are its cloud's own (bedrock,
    vertex): found where the cloud's tools look (nothing is sent), or the one line saying what is missing."""
    try:
        factory.resolve_key(ModelSpec(provider, DEFAULT_MODELS[provider]))
    except ProviderError as exc:
        return False, str(exc).split(": ", 1)[-1]
    return True, f"Using {CREDENTIALS[provider]}."


# --- how long a local call takes here ----------------------------------------------------------------


MIN_TOKENS = speed_rules.MIN_TOKENS


def measure(trials: pd.DataFrame) -> float | None:
    """Prompt tokens per second of model time: all input tokens over all seconds, prompts of at least
    MIN_TOKENS tokens (a call answered from the cache keeps the time it took when it was made)."""
    tokens = pd.to_numeric(trials["input_tokens"], errors="coerce")
    seconds = pd.to_numeric(trials["latency_s"], errors="coerce")
    ok = (tokens >= MIN_TOKENS) & (seconds > 0)
    if ok.sum() < 3:
        return None
    return float(tokens[ok].sum() / seconds[ok].sum())


def speed(model: str, trials: pd.DataFrame) -> Speed | None:
    """How fast the local `model` reads prompts, in THE order of components.run.speed (choose): every local
    call in this user's run store first (the Playground's, the Lesson's and the sweeps': this machine,
    `Speed.here`), so that one run is enough for the next to say "of about N s", or this user's stored
    trials; else the worker's calibration, timed on its first warm-up here (also `here`); else
    the shipped runs, made on another machine (callers say so: a guess here)."""
    try:
        name = canonical(model)
    except Exception:  # a path or an unknown name: nothing measured
        return None
    stored = trials_speed(model, trials)
    mine = stored if stored is not None and stored.here else None
    elsewhere = stored if stored is not None and not stored.here else None
    return speed_rules.choose(calls_speed(name) or mine, speed_rules.calibrated(name), elsewhere)


_WARMING: set[str] = set()  # the models this server process has asked the worker to load and time


def warm(spec: ModelSpec) -> bool:
    """Ask the worker, in the background, to load the local model and time it (its calibration: a few
    seconds) when nothing measured its speed here yet, once per model and server process, so the first run
    already says "of about N s". True when a warm-up was started now. Not under the test suite (LITM_TESTING),
    whose pages never load a model they do not run."""
    if spec.provider != "local" or os.environ.get("LITM_TESTING") or spec.model in _WARMING:
        return False
    _WARMING.add(spec.model)

    def go() -> None:
        try:
            factory.make_provider(spec).warm()  # type: ignore[attr-defined]
        except Exception:  # no model, a crash: the first run says so itself
            pass

    threading.Thread(target=go, name="litm-warm-up", daemon=True).start()
    return True


def calls_speed(name: str) -> Speed | None:
    """The speed of the local model `name` (canonical) over the calls of the user's run store."""
    from components.run.reader import store_version

    path = user_db()
    if not path.is_file():
        return None
    try:
        timings = _timings(str(path), store_version(path))
    except Exception:  # a store that cannot be read measures nothing
        return None
    return speed_rules.from_calls(timings, name)


@st.cache_data(show_spinner=False, max_entries=4)
def _timings(path: str, version: tuple) -> list[tuple[str, int, int, float]]:
    """The local calls' timings, read once per version of the store (a run's calls change it)."""
    from components.run.store import RunStore

    with RunStore.for_reading(path) as store:
        return store.call_timings("local", MIN_TOKENS, speed_rules.RECENT_CALLS)


@views.kept  # the sidebar asks on every rerun of every page: read once per store version
def trials_speed(model: str, trials: pd.DataFrame) -> Speed | None:
    """How fast the local `model` has read prompts, from the stored trials: this user's runs (this
    machine) first, else the shipped runs, made on another machine."""
    if trials is None or trials.empty or "model" not in trials:
        return None
    try:
        name = f"local:{canonical(model)}"
    except Exception:  # a path or an unknown name: nothing measured
        return None
    same = trials[trials["model"].astype(str) == name]
    shipped = same["shipped"].astype(bool) if "shipped" in same else pd.Series(False, index=same.index)
    for part, where in ((same[~shipped], HERE), (same[shipped], SHIPPED)):
        rate = measure(part)
        if rate is not None:
            return Speed(rate, len(part), where)
    return None
