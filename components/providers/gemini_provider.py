"""Google's Gemini through its own SDK, `google-genai`: generateContent (the Gemini API's REST format).

The key is GEMINI_API_KEY (or GOOGLE_API_KEY, as the SDK reads them; a model's `api_key_env` names
another), never stored. A model's `base_url` replaces the API's address (a proxy, or the loopback server
of the tests). The SDK's client sends through an httpx client of ours (`types.HttpOptions.httpx_async_client`)
with the same transport as the OpenAI and Anthropic providers (transport.py: the model's timeout for the
whole answer, at most MAX_ANSWER_BYTES, no redirect to another origin) and a hook counting every request.

The answer is read from the raw JSON (GenerateContentConfig.should_return_http_response) and checked as
every provider's is (`gemini_completion`, with answers.py's checks): its text parts joined (thought parts
left out), usageMetadata's promptTokenCount as input, candidatesTokenCount plus thoughtsTokenCount as output
(Google bills thinking as output), cachedContentTokenCount as cached input. A candidate stopped by a content
filter (finishReason SAFETY, RECITATION, BLOCKLIST, PROHIBITED_CONTENT, SPII) with no text, or a prompt
blocked (promptFeedback.blockReason), is `refused`: the model would not answer, which is no wrong answer.

Errors are Google's (google.genai.errors.APIError: an HTTP status, a status name, details): 429 is
rate_limited with the server's Retry-After or its RetryInfo.retryDelay; 5xx, 408 and 409 transient; 401, 403
and a 400 whose reason is API_KEY_INVALID auth; 404 not_found; other 400s bad_request. `complete` sends one
request: the one retry loop of every provider (providers/retry.py, run by the Caller) tries a RateLimited or
a Transient again; the SDK's own retries are off (it has none unless HttpOptions.retry_options asks).

Gemini 2.5 Flash models think before answering unless told not to, and their thoughts count against
max_output_tokens: they are sent thinking_budget = 0, so an answer of a few tokens is not cut off by thinking.
"""

from __future__ import annotations

import re
import time
from typing import Any

from components.core.completion import Completion
from components.providers.answers import BAD_BODY_ERRORS, MAX_ANSWER_BYTES, count, loads, no_text
from components.providers.base import (
    AuthError,
    BadRequest,
    BadResponse,
    ModelSpec,
    NotFound,
    ProviderError,
    RateLimited,
    Settings,
    Transient,
    Unreachable,
    scrub,
    tls_failure,
)
from components.providers.guard import check_fits
from components.providers.openai_provider import POOL, RequestCounter, retry_after, url_secret
from components.providers.transport import MAX_REDIRECTS, bad_answer_error, make_transport

KEY_ENVS = ("GEMINI_API_KEY", "GOOGLE_API_KEY")  # what google-genai reads, in its order
INSTALL = "pip install google-genai"
FILTERED = ("SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY", "LANGUAGE")
NO_THINKING = ("gemini-2.5-flash",)  # models that take thinking_budget = 0 (2.5 Pro cannot turn it off)


class TransportError(Exception):
    """What transport.py raises under this SDK for an answer too large or badly encoded (litm_kind)."""


BadAnswer = bad_answer_error(TransportError)


def refused(message: str) -> ProviderError:
    """The model would not answer (a content filter): the `refused` kind where the base defines it, else a
    bad_response (never cached, so --retry-errors asks again)."""
    from components.providers import base

    cls = getattr(base, "Refused", None)
    if cls is None:
        err = BadResponse(message)
        err.kind = "refused"
        return err
    return cls(message)


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def gemini_completion(body, default_model: str, latency_s: float = 0.0) -> Completion:
    """A generateContent answer (a dict) -> Completion; BadResponse when it is none, `refused` when a
    filter stopped it."""
    if not isinstance(body, dict):
        raise BadResponse(f"the server's answer is not a generateContent answer ({type(body).__name__})")
    feedback: dict = body["promptFeedback"] if isinstance(body.get("promptFeedback"), dict) else {}
    candidates = body.get("candidates")
    if feedback.get("blockReason") and not candidates:
        raise refused(f"the prompt was blocked (blockReason {_short(feedback['blockReason'])}): no answer")
    if not isinstance(candidates, list):
        raise BadResponse(f"the answer's candidates are not a list ({_short(candidates)})")
    if not candidates or not isinstance(candidates[0], dict):
        raise BadResponse("the server answered with no candidates")
    candidate = candidates[0]
    finish = candidate.get("finishReason")
    content: dict = candidate["content"] if isinstance(candidate.get("content"), dict) else {}
    parts = content.get("parts") or []
    if not isinstance(parts, list):
        raise BadResponse(f"the answer's parts are not a list ({_short(parts)})")
    texts = []
    for part in parts:
        if not isinstance(part, dict) or part.get("thought") or "text" not in part:
            continue
        if not isinstance(part["text"], str):
            raise BadResponse(f"a part's text is not text ({_short(part['text'])})")
        texts.append(part["text"])
    text = "".join(texts)
    if not text.strip() and finish in FILTERED:
        raise refused(f"the model did not answer: a content filter stopped it (finishReason {finish})")
    no_text(text, "length" if finish == "MAX_TOKENS" else finish)
    usage: dict = body["usageMetadata"] if isinstance(body.get("usageMetadata"), dict) else {}
    model = body.get("modelVersion")
    return Completion(
        text=text,
        input_tokens=count(usage.get("promptTokenCount"), "promptTokenCount"),
        output_tokens=count(usage.get("candidatesTokenCount"), "candidatesTokenCount")
        + count(usage.get("thoughtsTokenCount"), "thoughtsTokenCount"),
        latency_s=latency_s,
        model=model if isinstance(model, str) and model else default_model,
        finish_reason={"STOP": "stop", "MAX_TOKENS": "length"}.get(str(finish), str(finish or "").lower()),
        cached_input_tokens=count(usage.get("cachedContentTokenCount"), "cachedContentTokenCount"),
    )


def retry_delay(exc) -> float | None:
    """The wait a Google error asks for: the Retry-After header, else its RetryInfo's retryDelay ('12s')."""
    asked = retry_after(exc)
    if asked is not None:
        return asked
    details = getattr(exc, "details", None)
    error = details.get("error", details) if isinstance(details, dict) else {}
    for item in (error.get("details") or []) if isinstance(error, dict) else []:
        if isinstance(item, dict) and str(item.get("@type", "")).endswith("RetryInfo"):
            found = re.fullmatch(r"\s*([0-9.]+)s\s*", str(item.get("retryDelay", "")))
            if found:
                return float(found.group(1))
    return None


def map_gemini_error(exc, label: str, *secrets: str | None) -> ProviderError:
    """google.genai.errors.APIError -> our kinds (see the module docstring)."""
    status = getattr(exc, "code", None)
    name = str(getattr(exc, "status", "") or "")
    detail = scrub(str(getattr(exc, "message", "") or exc.__class__.__name__), *secrets)[:300]
    if status == 429:
        return RateLimited(f"{label}: rate limited (429 {name}): {detail}", retry_delay(exc))
    if status is not None and (status >= 500 or status in (408, 409)):
        err = Transient(f"{label}: server error ({status} {name}): {detail}")
        err.retry_after = retry_delay(exc)
        return err
    if status in (401, 403) or (status == 400 and "API_KEY_INVALID" in str(getattr(exc, "details", ""))):
        return AuthError(f"{label}: the API key was refused ({status} {name}): {detail}")
    if status == 400 and "api key not valid" in detail.lower():
        return AuthError(f"{label}: the API key was refused ({status} {name}): {detail}")
    if status == 404:
        return NotFound(f"{label}: not found (404): is the model name or base URL right? {detail}")
    if status in (400, 413, 422):
        return BadRequest(f"{label}: bad request ({status} {name}): {detail}")
    return ProviderError(f"{label}: request refused ({status} {name}): {detail}")


def map_transport_error(exc: Exception, label: str, *secrets: str | None) -> ProviderError:
    """An error of the HTTP client under the SDK (the SDK lets httpx's own through)."""
    import httpx2

    what = f"{exc.__class__.__name__}: {scrub(str(exc).splitlines()[0] if str(exc) else '', *secrets)[:160]}"
    if getattr(exc, "litm_kind", None) == "bad_response":
        return BadResponse(f"{label}: {scrub(str(exc), *secrets)[:300]}")
    if isinstance(exc, httpx2.TimeoutException) and not isinstance(exc, httpx2.ConnectTimeout):
        return Transient(f"{label}: the request timed out (no complete answer within its timeout)")
    if isinstance(exc, httpx2.TooManyRedirects):
        return BadResponse(f"{label}: the server redirects the request in a loop: is the base URL right?")
    if isinstance(exc, httpx2.DecodingError):
        return BadResponse(f"{label}: the server's answer could not be decoded ({what})")
    if isinstance(exc, httpx2.ConnectError | httpx2.ConnectTimeout | httpx2.ProxyError):
        return tls_failure(exc, label) or Unreachable(
            f"{label}: could not connect to the server (is the base URL right, is it running?)"
        )
    return Transient(f"{label}: the connection was dropped before the answer was complete ({what})")


def contents(messages: list[dict]) -> tuple[list[dict], str]:
    """(Gemini contents, the system instruction): user -> user, assistant -> model, system apart."""
    system = "\n\n".join(str(m["content"]) for m in messages if m.get("role") == "system")
    out = [
        {"role": "model" if m.get("role") == "assistant" else "user", "parts": [{"text": str(m["content"])}]}
        for m in messages
        if m.get("role") != "system"
    ]
    return out, system


class GeminiProvider:
    """`provider = "gemini"`: generateContent through google-genai's async client."""

    def __init__(self, spec: ModelSpec, api_key: str):
        try:
            from google import genai
            from google.genai import errors, types
        except ImportError:
            raise ProviderError(f"{spec.label}: the gemini provider needs google-genai: {INSTALL}") from None
        import httpx2

        self.spec = spec
        self._key, self._url_secret = api_key, url_secret(spec)
        self._errors, self._types = errors, types
        self.counter = RequestCounter()
        limits = httpx2.Limits(max_connections=POOL, max_keepalive_connections=POOL)
        transport = make_transport(
            httpx2, limits, deadline_s=spec.timeout, max_bytes=MAX_ANSWER_BYTES, error=BadAnswer
        )
        self.http = httpx2.AsyncClient(
            transport=transport,
            event_hooks={"request": [self.counter]},
            max_redirects=MAX_REDIRECTS,
            timeout=spec.timeout if spec.timeout is not None else 600.0,
        )
        options = types.HttpOptions(base_url=spec.base_url or None, httpx_async_client=self.http)
        self.client = genai.Client(api_key=api_key, http_options=options)

    @property
    def http_requests(self) -> int:
        return self.counter.n

    def __repr__(self) -> str:  # never show the key
        return f"GeminiProvider({self.spec.label})"

    def config_kw(self, system: str, settings: Settings) -> dict:
        """The generation settings of a request, as plain data (a live call's config and a batch
        request's, gemini_batches.py)."""
        kw: dict = {"max_output_tokens": settings.max_tokens, "temperature": settings.temperature}
        if settings.seed is not None:
            kw["seed"] = settings.seed
        if system:
            kw["system_instruction"] = system
        if self.spec.model.split("/")[-1].startswith(NO_THINKING):
            kw["thinking_config"] = {"thinking_budget": 0}
        return kw

    def config(self, system: str, settings: Settings):
        return self._types.GenerateContentConfig(
            **self.config_kw(system, settings), should_return_http_response=True
        )

    async def complete(self, messages: list[dict], settings: Settings) -> Completion:
        check_fits(self.spec, messages, settings)
        parts, system = contents(messages)
        config = self.config(system, settings)
        return await self._complete(parts, config)  # one request: providers/retry.py tries again

    async def _complete(self, parts: Any, config) -> Completion:
        import httpx2

        t0 = time.perf_counter()
        label, secrets = self.spec.label, (self._key, self._url_secret)
        try:
            r = await self.client.aio.models.generate_content(
                model=self.spec.model, contents=parts, config=config
            )
            raw = r.sdk_http_response.body if r.sdk_http_response is not None else None
        except self._errors.APIError as exc:
            raise map_gemini_error(exc, label, *secrets) from None
        except (httpx2.HTTPError, TransportError) as exc:
            raise map_transport_error(exc, label, *secrets) from None
        except BAD_BODY_ERRORS as exc:  # a body the SDK could not read
            detail = scrub(str(exc).splitlines()[0] if str(exc) else "", *secrets)[:200]
            raise BadResponse(
                f"{label}: the server's answer could not be read ({exc.__class__.__name__}: {detail})"
            ) from None
        try:
            return gemini_completion(loads(raw or ""), self.spec.model, time.perf_counter() - t0)
        except BadResponse as exc:
            err = BadResponse(f"{label}: {exc}")
            err.kind = exc.kind
            raise err from None
        except ProviderError as exc:
            raise type(exc)(f"{label}: {exc}") from None

    async def aclose(self) -> None:
        await self.http.aclose()
