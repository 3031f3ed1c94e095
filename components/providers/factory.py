"""make_provider(spec, api_key=None): the one place a ModelSpec becomes a Provider.

The key is the one passed in, else the environment variable spec.api_key_env names (else the
provider's usual variable). A missing key raises MissingKey here, before any request is made; a key
pasted in place of the variable's name is shown by its first 4 characters only (base.shown_name). A
base_url the HTTP client cannot parse is refused here too (base.check_base_url), with one line.
"""

from __future__ import annotations

import os

from components.providers.base import (
    CLOUD_CREDENTIALS,
    PROVIDERS,
    MissingKey,
    ModelSpec,
    Provider,
    ProviderError,
    check_base_url,
    looks_like_key,
    shown_name,
)

DEFAULT_KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY", "gemini": "GEMINI_API_KEY"}
ALSO_KEY_ENV = {"gemini": "GOOGLE_API_KEY"}  # google-genai reads it too, after GEMINI_API_KEY
# each provider's model when none is named (the sidebar's first choice, litm doctor --provider P)
DEFAULT_MODELS = {
    "local": "qwen2.5-coder-0.5b-instruct",
    "openai": "gpt-4o-mini",
    "anthropic": "claude-3-5-haiku-latest",
    "openai-compatible": "default",
    "gemini": "gemini-2.5-flash",
    "bedrock": "us.anthropic.claude-haiku-4-5-20251001-v1:0",
    "vertex": "claude-haiku-4-5@20251001",
}
NO_KEY = "not-needed"  # what local OpenAI-compatible servers get when no key is configured


def resolve_key(spec: ModelSpec, api_key: str | None = None) -> str | None:
    """The key to use, or None when the provider needs none. Raises MissingKey when it needs one."""
    if api_key:
        return api_key
    if spec.provider in ("fake", "local"):
        return None
    if spec.provider in CLOUD_CREDENTIALS:  # the cloud's own credentials: found, never read into a key
        from components.providers.claude_cloud import check_credentials

        check_credentials(spec)
        return None
    env = spec.api_key_env or DEFAULT_KEY_ENV.get(spec.provider)
    value = os.environ.get(env) if env else None
    if not value and not spec.api_key_env and spec.provider in ALSO_KEY_ENV:
        value = os.environ.get(ALSO_KEY_ENV[spec.provider])
    if value:
        return value
    if spec.provider == "openai-compatible" and not spec.api_key_env:
        return NO_KEY
    if env and looks_like_key(env):  # a key pasted where its variable's NAME goes: never echoed back
        raise MissingKey(
            f"{spec.label}: api_key_env {shown_name(env)}: put the key in an environment variable "
            f"and give its name (e.g. {DEFAULT_KEY_ENV.get(spec.provider, 'MY_API_KEY')}); "
            "nothing was sent"
        )
    where = f"the environment variable {env}" if env else "an API key"
    raise MissingKey(f"{spec.label}: no API key: set {where} (or type a key into the app); nothing was sent")


_INSTALLED: dict[str, Provider] = {}


def install(provider: Provider) -> None:
    """Make `make_provider` return this provider for every spec with its label (test doubles enter
    here, below the app, which never knows). `uninstall` undoes it."""
    _INSTALLED[provider.spec.label] = provider


def uninstall(provider: Provider | None = None) -> None:
    if provider is None:
        _INSTALLED.clear()
    else:
        _INSTALLED.pop(provider.spec.label, None)


def make_provider(spec: ModelSpec, api_key: str | None = None) -> Provider:
    if spec.label in _INSTALLED:
        return _INSTALLED[spec.label]
    if spec.provider not in PROVIDERS:
        raise ProviderError(f"unknown provider {spec.provider!r}; choose one of {', '.join(PROVIDERS)}")
    if spec.base_url and spec.provider not in ("fake", "local"):
        check_base_url(spec.base_url)  # one line (BadBaseUrl) for an address the HTTP client cannot parse
    key = resolve_key(spec, api_key)
    if spec.provider == "fake":
        from components.providers.fake import FakeProvider

        return FakeProvider(spec)
    if spec.provider == "anthropic":
        from components.providers.anthropic_provider import AnthropicProvider

        return AnthropicProvider(spec, key or "")
    if spec.provider == "gemini":
        from components.providers.gemini_provider import GeminiProvider

        return GeminiProvider(spec, key or "")
    if spec.provider in CLOUD_CREDENTIALS:
        from components.providers.claude_cloud import BedrockProvider, VertexProvider

        return (BedrockProvider if spec.provider == "bedrock" else VertexProvider)(spec)
    if spec.provider == "local":  # the model runs in the worker process (a crash there ends one call only)
        from components.providers.localworker import WorkerProvider

        return WorkerProvider(spec)
    if spec.provider == "openai-compatible" and not spec.base_url:
        raise ProviderError(
            f"{spec.label}: an openai-compatible model needs base_url (e.g. http://127.0.0.1:8000/v1)"
        )
    from components.providers.openai_provider import OpenAIProvider

    return OpenAIProvider(spec, key or NO_KEY)
