"""The provider protocol: complete(messages, settings) -> Completion.

Every provider (OpenAI, Anthropic, OpenAI-compatible, local llama.cpp, the scripted fake) implements
`complete`. Errors are ProviderError subclasses with messages safe to show a user: they never
contain an API key.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass
from typing import Protocol

from components.core.completion import Completion

PROVIDERS = ("openai", "anthropic", "openai-compatible", "gemini", "bedrock", "vertex", "local", "fake")
# the providers whose credentials are their cloud's own (AWS's chain, Google's default credentials), never a key
CLOUD_CREDENTIALS = ("bedrock", "vertex")


@dataclass(frozen=True)
class Settings:
    """Output-affecting settings (part of the cache key). Retries and timeouts are not."""

    max_tokens: int = 256
    temperature: float = 0.0
    seed: int | None = 0


@dataclass(frozen=True)
class ModelSpec:
    """Which model to call and how to reach it. `api_key_env` is a variable NAME, never a key."""

    provider: str
    model: str
    base_url: str | None = None
    api_key_env: str | None = None
    context_window: int | None = None
    timeout: float | None = None  # seconds per request (SDK default when None); not in the cache key
    max_retries: int | None = None  # retries of one call (providers/retry.py); not in the cache key
    # Anthropic prompt caching: mark the prompt's shared prefix with cache_control (anthropic_provider);
    # changes the bill, not the answer, so not in the cache key
    cache_prefix: bool | None = None

    @property
    def label(self) -> str:
        return f"{self.provider}:{self.model}"


class ProviderError(Exception):
    """A call that failed; `retryable` says whether trying again later may succeed."""

    retryable = False
    kind = "error"
    final = False  # True: ended for good, no outer retry loop waits for it again (RetryBudget.refuse)
    retry_after: float | None = None  # seconds the server asked to wait, where it said


class MissingKey(ProviderError):
    kind = "missing_key"


class RateLimited(ProviderError):
    retryable = True
    kind = "rate_limited"

    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


class Transient(ProviderError):
    """Server errors, timeouts, dropped connections."""

    retryable = True
    kind = "transient"


class Unreachable(Transient):
    """No connection at all (refused, no such host): a wrong base URL, or a server that is down."""

    kind = "unreachable"


def tls_failure(exc: BaseException, label: str) -> Unreachable | None:
    """A connection whose TLS handshake failed (an https base URL for a server that speaks plain http, a
    certificate not accepted), named as such; None when `exc` was not raised from one."""
    import ssl

    seen: BaseException | None = exc
    for _ in range(20):  # the chain of causes, bounded
        if seen is None:
            return None
        if isinstance(seen, ssl.SSLCertVerificationError):
            why = seen.verify_message or seen.reason or "certificate verify failed"
            return Unreachable(
                f"{label}: the server's TLS certificate was not accepted ({why}): is the base URL's host right?"
            )
        if isinstance(seen, ssl.SSLError):
            why = seen.reason or seen.__class__.__name__
            return Unreachable(
                f"{label}: the https handshake failed ({why}): does the server speak https? A server that "
                "speaks plain http (a local one) needs a base URL starting http://"
            )
        seen = seen.__cause__ or seen.__context__
    return None


class Refused(ProviderError):
    """The provider stopped its own answer: OpenAI's content filter (finish_reason "content_filter"),
    Anthropic's refusal (stop_reason "refusal"). Never scored (a refusal is not a wrong answer) nor cached;
    not tried again within the call, but `--retry-errors` sends it again."""

    kind = "refused"


class PromptTooLong(ProviderError):
    kind = "too_long"


class AuthError(ProviderError):
    """401/403: the key is wrong or lacks access. Every later call would fail the same way."""

    kind = "auth"


class NotFound(ProviderError):
    """404: no such model or endpoint (a typo in the model name or base URL)."""

    kind = "not_found"


class BadRequest(ProviderError):
    """400/422: the server refuses the request as it is (a parameter the model does not take)."""

    kind = "bad_request"


class BadResponse(ProviderError):
    """A 200 answer that is not a usable completion: not JSON, HTML, no choices, no content. It is
    never cached, so `--retry-errors` (or a resume with retry) asks again."""

    retryable = True
    kind = "bad_response"


class LocalCrash(ProviderError):
    """The local model's process stopped during this call: a crash (a signal: a llama.cpp build that does
    not run on this CPU), no answer within the call's timeout (a hang), or out of memory. That call fails
    with one line saying what to do; the model's process restarts for the next call."""

    kind = "local_crash"


class Interrupted(ProviderError):
    """The process stopped (the app got SIGTERM) while this call waited on the local model: it has no
    answer, and `--retry-errors` (or resuming the sweep) sends it again."""

    kind = "interrupted"


class CallCancelled(ProviderError):
    """The user cancelled this call to the local model (the Playground's Cancel): the worker stopped it, it
    has no answer and nothing of it is stored."""

    kind = "cancelled"


# kinds that fail every call of a sweep alike: a sweep whose first trials all fail so stops early
# (local_crash: a llama.cpp build that crashes on this CPU crashes on every call)
FATAL_KINDS = ("auth", "not_found", "bad_request", "missing_key", "unreachable", "local_crash")


def scrub(text: str, *secrets: str | None) -> str:
    """Remove every given secret, anything shaped like an API key, and the secrets of a URL (its user-info
    password, a query value named like a credential) from a message."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    text = _KEY_SHAPE.sub("***", text)
    text = _USERINFO.sub(r"\1***@", text)
    return _QUERY_SECRET.sub(r"\1***", text)


# sk- sk-ant- sk-proj- sk_live_ (OpenAI, Anthropic, others), rk_, gsk_ (Groq), xai- (xAI), hf_ (Hugging Face),
# AIza (Google): the prefix and more key characters
_KEY_SHAPE = re.compile(
    r"\b(?:sk|sk-ant|sk-proj)-[A-Za-z0-9_\-]{6,}"
    r"|\b(?:sk|rk|gsk|xai|hf)[-_][A-Za-z0-9_\-]{16,}|\bAIza[A-Za-z0-9_\-]{16,}"
)
_KEY_START = re.compile(r"(?:sk|rk|gsk|xai|hf)[-_]|AIza", re.IGNORECASE)
# a query parameter whose name says it is a credential
_SECRET_NAMES = re.compile(
    r"(?:api[-_]?key|key|(?:access[-_]|id[-_]|auth[-_])?token|secret|client[-_]secret"
    r"|password|passwd|pwd|auth|authorization|sig|signature|credential|session)",
    re.IGNORECASE,
)
_USERINFO = re.compile(r"(\b[A-Za-z][A-Za-z0-9+.\-]*://[^/\s:@]*:)[^/\s@]+@")
_QUERY_SECRET = re.compile(r"([?&;](?:" + _SECRET_NAMES.pattern + r")=)[^&;#\s]+", re.IGNORECASE)
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")  # a plausible environment variable name


def looks_like_key(value) -> bool:
    """Whether a value given as a NAME (api_key_env) may be a secret instead: not a plausible variable name,
    shaped like a key (sk-, sk_, sk-ant-, gsk_, AIza ...), or a long random run (a part of 16+ characters
    mixing letters and digits, or 32+ characters without an underscore)."""
    if not isinstance(value, str) or not value:
        return False
    if not ENV_NAME.fullmatch(value) or _KEY_START.match(value):
        return True
    if len(value) >= 32 and "_" not in value:
        return True
    return any(
        len(part) >= 16 and re.search(r"\d", part) and re.search(r"[A-Za-z]", part)
        for part in value.split("_")
    )


def shown_name(value) -> str:
    """A name (api_key_env, a variable) as a message may show it: as it is when it is a plausible name,
    else only its first 4 characters (`'sk-a…' (not the name ...: is it a key?)`), never more of a key."""
    if isinstance(value, str) and not looks_like_key(value):
        return value
    if not isinstance(value, str):
        text = repr(value)
        return text if len(text) <= 40 else text[:37] + "..."
    return f"'{value[:4]}…' (not the name of an environment variable: is it a key?)"


class BadBaseUrl(ProviderError, ValueError):
    """A base_url that is no http(s) address (unparseable, no host, a bad port): refused before anything
    is sent. A ValueError too, so a config check can let it through as one line."""

    kind = "bad_request"


def path_key(segment: str) -> bool:
    """Whether a part of a URL's path is an API key (`https://host/v1/sk-.../`): at least 20 characters
    starting as providers' keys do (sk-, sk-ant-, rk-, gsk_, xai-, hf_, AIza). A long id without such a
    start (an account or project id in a gateway's path) is a part of the address, and stays."""
    return len(segment) >= 20 and _KEY_START.match(segment) is not None


def safe_base_url(url: str | None) -> tuple[str | None, str | None]:
    """(the URL without its secrets, the first secret taken out or None). A key inside a base URL (user-info
    `http://user:key@host/`, a part of the path shaped like a key (path_key), a query `?api_key=...` or any
    query value shaped like a key) must never be
    stored or shown: the clean URL is what a config, a store or a message keeps. Other query parameters
    (`?api-version=...`) stay. The secret is what a caller may use as the API key."""
    if not url or not isinstance(url, str):
        return url, None
    from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

    try:
        parts = urlsplit(url.strip())
        netloc, host = parts.netloc, parts.netloc.rpartition("@")
    except ValueError:  # unparseable: keep what scrub leaves (check_base_url refuses it anyway)
        return scrub(url), None
    secrets: list[str] = []
    if host[1]:  # user-info present: all of it goes
        user, _, password = host[0].partition(":")
        secrets += [s for s in (password, user) if s]
        netloc = host[2]
    path = parts.path
    segments = path.split("/")
    in_path = [seg for seg in segments if path_key(unquote(seg))]
    if in_path:  # a key as a part of the path (https://host/v1/sk-.../): the part goes
        secrets += [unquote(seg) for seg in in_path]
        path = "/".join(seg for seg in segments if seg not in in_path)
    query = parts.query
    pairs = parse_qsl(query, keep_blank_values=True)
    kept = [
        (n, v) for n, v in pairs if not (_SECRET_NAMES.fullmatch(n) or (len(v) >= 16 and looks_like_key(v)))
    ]
    if len(kept) != len(pairs):
        secrets += [v for pair in pairs if pair not in kept for v in pair[1:]]
        query = urlencode(kept)
    if not secrets:
        return url, None
    clean = urlunsplit((parts.scheme, netloc, path, query, parts.fragment))
    return clean, next((s for s in secrets if s), None)


def _shown_url(url) -> str:
    """An address as a message shows it: quoted, its user-info and query (where keys hide) left out, at most
    60 characters."""
    if isinstance(url, str):
        url = re.sub(r"\?.*", "?...", re.sub(r"//[^/?#]*@", "//...@", url, count=1), flags=re.DOTALL)
    text = repr(url)
    return text if len(text) <= 60 else text[:57] + "..."


def check_base_url(url, where: str = "base_url", *, strip: bool = True) -> str:
    """The base URL, checked: an http:// or https:// address without spaces, with a host and a valid port,
    parsed as the SDKs parse it. Anything else raises BadBaseUrl (a ValueError) with one line naming
    `where`, its secrets never shown. strip: surrounding spaces are dropped first (a config keeps them,
    and is refused for them). A key inside the address is the caller's business (safe_base_url takes it
    out; a sweep config refuses it)."""
    example = "(e.g. http://127.0.0.1:8000/v1)"
    if strip and isinstance(url, str):
        url = url.strip()
    if not isinstance(url, str) or not url.lower().startswith(("http://", "https://")):
        raise BadBaseUrl(f"{where} must be an http:// or https:// address {example}, got {_shown_url(url)}")
    if re.search(r"[\s\x00-\x1f\x7f]", url):
        raise BadBaseUrl(f"{where} must be an address without spaces or control characters {example}")
    from urllib.parse import urlsplit

    import httpx2

    try:
        parts = urlsplit(url)
        port = parts.port  # parsing the port is a check too (out of range: ValueError)
        parsed = httpx2.URL(url)
        if port == 0:
            raise ValueError("port 0")
    except (ValueError, TypeError, httpx2.InvalidURL) as exc:
        why = scrub(str(exc).splitlines()[0])[:80] if str(exc) else "cannot parse it"
        raise BadBaseUrl(
            f"{where} is not a valid address ({why}): {_shown_url(url)}; "
            "e.g. http://127.0.0.1:8000/v1 or http://[::1]:8000/v1"
        ) from None
    if not parts.hostname or not parsed.host:
        raise BadBaseUrl(f"{where} names no host: {_shown_url(url)} {example}")
    return url


# --- waiting between retries: one ceiling for a whole call ----------------------------------------------
DEFAULT_MAX_WAIT = 60.0  # seconds one call may wait between its retries in all (config: max_retry_after)


class WaitBudget:
    """The waiting ONE call may do between its tries, in all (providers/retry.py, the one retry loop; the
    SDKs' retries are turned off: their waits escaped any cap). A Retry-After (or a back-off) that does
    not fit in what is left is not waited for: the call ends at once with its error. `note` is told what
    is being waited for (the progress line), and "" when the wait is over."""

    def __init__(self, limit: float = DEFAULT_MAX_WAIT, note=None):
        self.limit = max(0.0, float(limit))
        self.waited = 0.0
        self.note = note

    @property
    def left(self) -> float:
        return max(0.0, self.limit - self.waited)

    def allows(self, seconds: float) -> bool:
        return seconds <= self.left + 1e-9

    async def wait(self, seconds: float, why: str = "") -> None:
        import asyncio

        self.waited += seconds
        if self.note is not None:
            self.note(why)
        try:
            await asyncio.sleep(seconds)
        finally:
            if self.note is not None:
                self.note("")

    def refuse(self, exc: ProviderError, label: str, asked: float) -> ProviderError:
        """`exc` ended for good: the server asks to wait `asked` s, more than is left. Marked `final`, so no
        outer retry loop waits for it again."""
        cap = f"the {self.limit:.0f} s a call waits in all (max_retry_after)"
        more = (
            f"more than {cap}"
            if not self.waited
            else f"more than the {self.left:.0f} s left of {cap} after {self.waited:.0f} s of waiting"
        )
        if isinstance(exc, RateLimited):
            err: ProviderError = RateLimited(
                f"{label}: rate limited; the server asks to wait {asked:.0f} s, {more}: "
                "rerun later with --retry-errors",
                asked,
            )
        else:
            err = type(exc)(f"{exc} (the server asks to wait {asked:.0f} s, {more})")
        err.final = True
        err.retry_after = asked
        return err


class Provider(Protocol):
    spec: ModelSpec

    async def complete(self, messages: list[dict], settings: Settings) -> Completion: ...


def cache_key(spec: ModelSpec, messages: list[dict], settings: Settings) -> str:
    """Hash of provider, model, base URL, messages and output-affecting settings only."""
    payload = {
        "provider": spec.provider,
        "model": spec.model,
        "base_url": spec.base_url or "",
        "messages": messages,
        "settings": asdict(settings),
    }
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()
