"""The sidebar: provider, model, API key, base URL. The key lives in this browser session only.

`choice()` returns what live runs use; `None` means no model can be called (prompts only).
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from functools import lru_cache

import streamlit as st

from components.providers.base import ModelSpec
from webapp.session.state import State

NONE = "none"  # no model available: prompts only
LABELS = {
    NONE: "none (prompts only)",
    "local": "local (bundled model, no key)",
    "openai": "OpenAI",
    "anthropic": "Anthropic",
    "openai-compatible": "OpenAI-compatible server",
}
DEFAULT_MODELS = {
    "local": "qwen2.5-coder-0.5b-instruct",
    "openai": "gpt-4o-mini",
    "anthropic": "claude-3-5-haiku-latest",
    "openai-compatible": "default",
    NONE: "",
}
KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}


@dataclass(frozen=True)
class Choice:
    spec: ModelSpec
    api_key: str | None  # None: the provider needs none, or the server environment has it


@lru_cache(maxsize=1)
def local_status() -> tuple[bool, str]:
    """(available, message): the local provider imports, llama-cpp-python and the model are installed."""
    try:
        if importlib.util.find_spec("llama_cpp") is None:
            return False, "llama-cpp-python is not installed"
        from components.providers import local  # noqa: F401
        from components.providers.localmodel import find_model

        found = find_model("")
        title = getattr(found, "title", str(found))
        return True, (f"{title}: a small model running on this machine's CPU, no key, cost 0. Expect about "
                      f"10-20 s for a 2k-token prompt and low accuracy: it shows how the strategies work; "
                      f"use a large model for measurements.")
    except Exception as e:  # noqa: BLE001 - any failure means "not available"
        return False, str(e).splitlines()[0][:160] if str(e) else type(e).__name__


def providers() -> list[str]:
    first = "local" if local_status()[0] else NONE
    return [first, "openai", "anthropic", "openai-compatible"]


def default_provider() -> str:
    return providers()[0]


def _on_provider_change() -> None:
    state = State()
    state.model = DEFAULT_MODELS.get(state.provider, "")


def _known_models(provider: str) -> list[str]:
    from components.providers.pricing import PRICES

    return sorted(PRICES.get(provider, {}))


def current_spec() -> ModelSpec | None:
    """The model the sidebar names, whether or not it can be called yet (no key): for prices."""
    state = State()
    if state.provider in ("", NONE) or not state.model.strip():
        return None
    base_url = state.base_url.strip() or None if state.provider == "openai-compatible" else None
    return ModelSpec(state.provider, state.model.strip() or "default", base_url=base_url)


def render() -> Choice | None:
    """Draw the sidebar; return the model choice, or None when no model can be called."""
    state = State()
    options = providers()
    if state.provider not in options:
        state.provider = options[0]
        state.model = DEFAULT_MODELS[options[0]]
    sb = st.sidebar
    sb.subheader("Model")
    sb.selectbox("Provider", options, key=State.provider.key, format_func=LABELS.get,
                 on_change=_on_provider_change)
    provider = state.provider
    if provider == NONE:
        sb.info(f"No model available: prompts only. ({local_status()[1]}) Choose OpenAI, Anthropic or "
                "an OpenAI-compatible server and enter its key to run live.", icon=":material/info:")
        return None
    if provider == "local":
        sb.text_input("Model", key=State.model.key, help="a bundled model name or a path to a .gguf file")
        sb.caption(local_status()[1])
        return Choice(ModelSpec("local", state.model.strip() or "default"), None)
    known = _known_models(provider)
    sb.text_input("Model", key=State.model.key,
                  help=("priced models: " + ", ".join(known)) if known else None)
    if provider == "openai-compatible":
        sb.text_input("Base URL", key=State.base_url.key,
                      help="vLLM, Ollama, llama.cpp server, LM Studio… e.g. http://127.0.0.1:8000/v1")
    sb.text_input("API key", key=State.api_key.key, type="password",
                  help="kept only in this browser session: never saved, logged or shared")
    model = state.model.strip()
    if not model:
        sb.warning("Enter a model name.", icon=":material/warning:")
        return None
    base_url = state.base_url.strip() if provider == "openai-compatible" else None
    if provider == "openai-compatible" and not base_url:
        sb.warning("Enter the server's base URL.", icon=":material/warning:")
        return None
    key = state.api_key.strip()
    env = KEY_ENV.get(provider)
    if key:
        sb.success("Key set for this session.", icon=":material/key:")
    elif env and os.environ.get(env):
        sb.success(f"Using {env} from the server environment.", icon=":material/key:")
    elif provider == "openai-compatible":
        sb.caption("No key: fine for most local servers.")
    else:
        sb.info("No API key set: you can explore samples, prompt maps, published curves and the "
                "cached runs. Enter a key to run live.", icon=":material/key_off:")
        return None
    return Choice(ModelSpec(provider, model, base_url=base_url), key or None)
