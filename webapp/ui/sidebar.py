"""The sidebar, on every page: provider, model, API key, base URL (the key lives in this browser session
only), how fast the local model reads on this machine, and this browser's own sweeps, with where they
live.

`render()` returns what live runs use; `None` means no model can be called (prompts only).
"""

from __future__ import annotations

import streamlit as st

from webapp.services import models, sharing, stores
from webapp.services.models import NONE, Choice, ModelSpec
from webapp.session import State
from webapp.ui.render import md

RESULTS, COMPARE = "results/page.py", "compare/page.py"


def _on_provider_change() -> None:
    state = State()
    state.model = models.DEFAULT_MODELS.get(state.provider, "")


def current_spec() -> ModelSpec | None:
    """The model the sidebar names, whether or not it can be called yet (no key): for prices."""
    state = State()
    if state.provider in ("", NONE) or not state.model.strip():
        return None
    base_url = state.base_url.strip() or None if state.provider == "openai-compatible" else None
    return ModelSpec(state.provider, state.model.strip() or "default", base_url=base_url)


def local_speed(model: str) -> models.Speed | None:
    try:
        trials, _, _ = sharing.load_runs(in_url=False)
    except Exception:  # no measurement then
        return None
    return models.speed(model, trials)


def local_caption(model: str) -> str:
    title = models.local_status()[1]
    speed = local_speed(model)
    if speed is None:
        timing = "Its speed on this machine is not measured yet: the first run shows it."
    elif not speed.here:
        timing = (
            f"Its speed on this machine is not measured yet: the first run measures it (the shipped runs "
            f"read about {speed.rate:,.0f} prompt tokens/s on the machine that made them)."
        )
    else:
        timing = (
            f"On this machine it reads {speed.text()}: a 2,000-token question takes about "
            f"{models.duration(speed.seconds(2000))}."
        )
    return (
        f"{title}: a small model on this machine's CPU, no key, cost 0. {timing} Low accuracy: it "
        "shows how the strategies work; use a large model for measurements."
    )


def model_section() -> Choice | None:
    state = State()
    options = models.providers()
    if state.provider not in options:
        state.provider = options[0]
        state.model = models.DEFAULT_MODELS[options[0]]
    sb = st.sidebar
    sb.subheader("Model")
    sb.selectbox(
        "Provider",
        options,
        key=State.provider.key,
        format_func=models.LABELS.get,
        on_change=_on_provider_change,
    )
    provider = state.provider
    if provider == NONE:
        sb.info(
            f"No model available: prompts only. ({models.local_status()[1]}) Choose OpenAI, Anthropic or "
            "an OpenAI-compatible server and enter its key to run live.",
            icon=":material/info:",
        )
        return None
    if provider == "local":
        sb.text_input("Model", key=State.model.key, help="a bundled model name or a path to a .gguf file")
        sb.caption(md(local_caption(state.model.strip() or "default")))
        return Choice(ModelSpec("local", state.model.strip() or "default"), None)
    known = models.known_models(provider)
    sb.text_input(
        "Model", key=State.model.key, help=("priced models: " + ", ".join(known)) if known else None
    )
    if provider == "openai-compatible":
        sb.text_input(
            "Base URL",
            key=State.base_url.key,
            help="vLLM, Ollama, llama.cpp server, LM Studio… e.g. http://127.0.0.1:8000/v1",
        )
    sb.text_input(
        "API key",
        key=State.api_key.key,
        type="password",
        help="kept only in this browser session: never saved, logged or shared",
    )
    model = state.model.strip()
    if not model:
        sb.warning("Enter a model name.", icon=":material/warning:")
        return None
    base_url = state.base_url.strip() if provider == "openai-compatible" else None
    if provider == "openai-compatible" and not base_url:
        sb.warning("Enter the server's base URL.", icon=":material/warning:")
        return None
    key = state.api_key.strip()
    env = models.key_in_environment(provider)
    if key:
        sb.success("Key set for this session.", icon=":material/key:")
    elif env:
        sb.success(f"Using {env} from the server environment.", icon=":material/key:")
    elif provider == "openai-compatible":
        sb.caption("No key: fine for most local servers.")
    else:
        sb.info(
            "No API key set: you can explore samples, prompt maps, published curves and the "
            "cached runs. Enter a key to run live.",
            icon=":material/key_off:",
        )
        return None
    return Choice(ModelSpec(provider, model, base_url=base_url), key or None)


def sweeps_section() -> None:
    """This browser's sweeps, findable from every page: each opens on Results and Compare."""
    mine = sharing.my_sweeps()
    sb = st.sidebar
    sb.subheader("Your sweeps")
    if mine.empty:
        sb.caption("None yet: a sweep you start on Experiments is listed here, on every page.")
        return
    for r in mine.head(5).itertuples():
        query = {"sweep": stores.sweep_key(r.id)}
        try:
            c1, c2 = sb.columns([3, 2])
            c1.page_link(RESULTS, label=md(r.name), icon=":material/monitoring:", query_params=query)
            c2.page_link(COMPARE, label="compare", icon=":material/compare_arrows:", query_params=query)
        except Exception:  # outside the app's navigation (a page run on its own)
            sb.caption(md(r.name))
    sb.caption(
        f"They live in this server's run store ({md(stores.user_db())}), with the runs made by "
        "`litm` there. This browser sees its own; anyone you give a Results link with its "
        "?run= token sees them too, and only this browser can cancel or resume them."
    )


def render() -> Choice | None:
    """Draw the sidebar; return the model choice, or None when no model can be called."""
    choice = model_section()
    sweeps_section()
    return choice
