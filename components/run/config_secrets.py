"""What a key looks like, so that one pasted into a config (a model's api_key_env or base_url) is refused with
one line that never echoes it."""

from __future__ import annotations

import re

from components.run.config_read import fail

ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")


# what an API key looks like, so that one pasted where a name or an address goes is refused, never echoed:
# a provider's key prefix, or a long string with digits that is not upper-case words (an environment
# variable's name is short, or upper-case words: OPENAI_API_KEY; an api-version is 2024-02-15-preview)
KEY_PREFIX = re.compile(r"(sk|pk|rk|gsk|hf|ghp|gho|ghs|glpat|xai|sess)[-_]|AIza|github_pat_", re.IGNORECASE)
KEY_QUERY = re.compile(r"key|token|secret|passw|auth|sig|credential", re.IGNORECASE)


def key_shaped(text: str) -> bool:
    """True for a string shaped like an API key rather than a name (see KEY_PREFIX)."""
    t = text.strip()
    if KEY_PREFIX.match(t):
        return True
    upper_words = re.fullmatch(r"[A-Z0-9_]+", t) and "_" in t
    return len(t) >= 24 and not upper_words and sum(c.isdigit() for c in t) >= 3


def _secret(value) -> str:
    """A value that may be a key, shown by its first 4 characters at most."""
    if not isinstance(value, str):
        return f"a {type(value).__name__}"
    return (
        f"'{value[:4]}…' ({len(value)} characters)" if len(value) > 4 else "a short value"
    )  # as providers.base.shown_name


def check_key_env(where: str, env) -> None:
    """api_key_env: the NAME of an environment variable. A key pasted there is refused showing only its first 4
    characters; any other bad value, which may be a key too, is shown no further."""
    if env is None:
        return
    if isinstance(env, str) and key_shaped(env):
        fail(
            f"{where} holds what looks like an API key itself ({_secret(env)}); put the key in an environment "
            'variable and give its name here (e.g. api_key_env = "OPENAI_API_KEY")'
        )
    if not isinstance(env, str) or not ENV_NAME.fullmatch(env):
        fail(
            f"{where} must be the name of an environment variable holding the key (e.g. OPENAI_API_KEY): "
            f"letters, digits and _, not starting with a digit; got {_secret(env)}"
        )


def check_url_has_no_key(where: str, url: str) -> None:
    """A base URL (checked as an address by providers.base.check_base_url) with no key inside: neither
    user-info (https://user:key@host), a part of its path shaped like a key (providers.base.path_key:
    https://host/v1/sk-.../) nor a query parameter named like a key or holding one; one line each,
    never echoing the secret. The key goes in the environment variable api_key_env names."""
    from urllib.parse import parse_qsl, unquote, urlsplit

    from components.providers.base import path_key

    parts = urlsplit(url)
    if "@" in parts.netloc:
        fail(
            f"{where} holds a user name or key before '@'; never put a key in a config: remove it and name the "
            "environment variable that holds it with api_key_env"
        )
    for segment in parts.path.split("/"):
        if path_key(unquote(segment)):
            fail(
                f"{where} holds what looks like a key in its path ({_secret(unquote(segment))}); never put a key "
                "in a config: remove it and name the environment variable that holds it with api_key_env"
            )
    for name, value in parse_qsl(parts.query, keep_blank_values=True):
        if KEY_QUERY.search(name) or key_shaped(value):
            fail(
                f"{where} holds a key in its query (parameter {name[:20]!r}); never put a key in a config: remove it "
                "and name the environment variable that holds it with api_key_env"
            )
