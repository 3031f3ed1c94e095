"""OpenAI chat completions, and every OpenAI-compatible server (vLLM, Ollama, llama.cpp, LM Studio).

One AsyncOpenAI client per provider object (so one connection pool, sized above any concurrency we
use). A call sends ONE request, with the SDK's retries turned off: the one retry loop of every provider is
providers/retry.py (run by the Caller), which tries again after the RateLimited and Transient errors
`map_error` gives (429, 408, 409, 5xx, timeouts, dropped or refused connections), within the call's
WaitBudget (the SDKs slept before any cap applied: OpenAI's up to 120 s a retry, Anthropic's for any
Retry-After). Errors are mapped to ours, with messages that never contain the key or a secret of the
base URL. Batch API calls (batches.py) keep the SDK's own retries.

Every HTTP request the SDK sends, its own retries included, is counted by an httpx event hook on the
SDK's client (`http_requests`): the progress line and the summary show what the server really saw.
A 200 answer that is not a completion (truncated JSON, an HTML page, no choices, null content, a JSON
that nests too deep, a mistyped field, an absurd token count: providers/answers.py) is a BadResponse
error, never an (empty) answer, so it is not cached and `--retry-errors` asks again.

Under the SDK's client, providers/transport.py bounds every request: the model's `timeout` is a deadline
for the whole answer (not per read), and an answer over 32 MB unpacked is a BadResponse. An error is
named by its cause (map_error): a connection refused is `unreachable`, one dropped mid-answer
`transient`, a broken gzip body, a redirect to another origin (transport.py) or a redirect loop
`bad_response`.
"""

from __future__ import annotations

import email.utils
import time
from typing import Any

from components.core.completion import Completion
from components.providers.answers import BAD_BODY_ERRORS, MAX_ANSWER_BYTES, chat_completion
from components.providers.base import (
    AuthError,
    BadRequest,
    BadResponse,
    ModelSpec,
    NotFound,
    ProviderError,
    RateLimited,
    Refused,
    Settings,
    Transient,
    Unreachable,
    check_base_url,
    safe_base_url,
    scrub,
    tls_failure,
)
from components.providers.guard import check_fits
from components.providers.transport import BULK_HEADER, MAX_REDIRECTS, bad_answer_error, make_transport

POOL = 256  # connections per client; at least any concurrency a sweep asks for
BULK = {
    BULK_HEADER: "1"
}  # extra headers of a batch upload or results download (transport.py: not one answer)
_REASONING = ("o1", "o3", "o4", "gpt-5")  # take max_completion_tokens and no temperature


class RequestCounter:
    """An httpx request hook: counts every request the client sends (the SDK's retries too), and keeps
    the first chat request the SDK sent (OpenAIProvider sends the next ones on its pattern)."""

    def __init__(self) -> None:
        self.n = 0
        self.chat = None

    async def __call__(self, request) -> None:
        self.n += 1
        if self.chat is None and request.url.path.endswith("/chat/completions"):
            self.chat = request


def http_client(module, counter: RequestCounter | None = None, spec: ModelSpec | None = None):
    """The SDK's own default async HTTP client, with a pool large enough for our concurrency, a hook
    counting the requests it sends, and a transport bounding each request (transport.py: the model's
    timeout for the whole answer, at most MAX_ANSWER_BYTES of it)."""
    import httpx2

    limits = httpx2.Limits(max_connections=POOL, max_keepalive_connections=POOL)
    hooks = {"request": [counter]} if counter is not None else {}
    base = module.OpenAIError if hasattr(module, "OpenAIError") else module.AnthropicError
    transport = make_transport(
        httpx2,
        limits,
        deadline_s=spec.timeout if spec is not None else None,
        max_bytes=MAX_ANSWER_BYTES,
        error=_bad_answer_class(base),
    )
    return module.DefaultAsyncHttpxClient(transport=transport, event_hooks=hooks, max_redirects=MAX_REDIRECTS)


_BAD_ANSWER: dict[type, type] = {}


def _bad_answer_class(base: type) -> type:
    """One BadAnswer class per SDK (transport.bad_answer_error), made once."""
    if base not in _BAD_ANSWER:
        _BAD_ANSWER[base] = bad_answer_error(base)
    return _BAD_ANSWER[base]


def url_secret(spec: ModelSpec) -> str | None:
    """The secret inside the model's base URL (kept out of every message), after checking the URL: an
    address the HTTP client cannot parse is refused here with one line (BadBaseUrl), before any call."""
    if not spec.base_url:
        return None
    check_base_url(spec.base_url)
    return safe_base_url(spec.base_url)[1]


def split_query(url: str | None) -> tuple[str | None, dict[str, str]]:
    """(the base URL without its query, the query's parameters): an Azure-style OpenAI-compatible server
    needs `?api-version=...` on every call, and the SDK appends its paths after the whole base URL (the
    query would end up in front of `chat/completions`), so the query goes as its default_query, sent as the
    user wrote it. What is stored or shown is safe_base_url's (keys such as `?key=` taken out)."""
    if not url or "?" not in url:
        return url, {}
    from urllib.parse import parse_qsl, urlsplit, urlunsplit

    parts = urlsplit(url)
    return urlunsplit(parts._replace(query="")), dict(parse_qsl(parts.query, keep_blank_values=True))


def sdk_kwargs(spec: ModelSpec) -> dict:
    kw: dict = {}
    if spec.timeout is not None:
        kw["timeout"] = spec.timeout
    if spec.max_retries is not None:
        kw["max_retries"] = spec.max_retries
    return kw


def retry_after(exc) -> float | None:
    """Seconds the server asks to wait: Retry-After-Ms, Retry-After in seconds, or Retry-After as an
    HTTP date (RFC 9110 §10.2.3: `Wed, 21 Oct 2026 07:28:00 GMT`); None when it says nothing readable.
    The Caller waits for it only up to max_retry_after (the cap)."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None) or {}
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is not None:
            try:
                return max(0.0, float(value) / divisor)
            except ValueError:
                continue
    value = headers.get("retry-after")
    if value:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
        if when.tzinfo is not None:
            return max(0.0, when.timestamp() - time.time())
    return None


def _causes(exc: BaseException):
    """The exceptions an SDK error was raised from (its __cause__ chain)."""
    seen = exc.__cause__ or exc.__context__
    while seen is not None:
        yield seen
        seen = seen.__cause__ or seen.__context__


def _connection_error(exc: Exception, label: str, *secrets: str | None) -> ProviderError:
    """An SDK connection error, named by what really happened (httpx's exception it was raised from):
    only a connection that could not be made is `unreachable` (a wrong base URL, a server that is down)."""
    import httpx2

    if tls := tls_failure(exc, label):
        return tls
    for cause in _causes(exc):
        what = (
            f"{cause.__class__.__name__}: {scrub(str(cause).splitlines()[0], *secrets)[:160]}"
            if str(cause)
            else cause.__class__.__name__
        )
        if isinstance(cause, httpx2.TooManyRedirects):
            return BadResponse(
                f"{label}: the server redirects the request in a loop (more than {MAX_REDIRECTS} "
                "redirects): is the base URL right?"
            )
        if isinstance(cause, httpx2.UnsupportedProtocol):
            return BadResponse(
                f"{label}: the server sent the request to an address that is not http or https ({what})"
            )
        if isinstance(cause, httpx2.DecodingError):
            return BadResponse(f"{label}: the server's answer could not be decoded ({what})")
        if isinstance(cause, httpx2.ConnectError | httpx2.ConnectTimeout | httpx2.ProxyError):
            break
        if isinstance(
            cause, httpx2.RemoteProtocolError | httpx2.ReadError | httpx2.WriteError | httpx2.NetworkError
        ):
            return Transient(f"{label}: the connection was dropped before the answer was complete ({what})")
    return Unreachable(f"{label}: could not connect to the server (is the base URL right, is it running?)")


def map_error(exc: Exception, label: str, key: str | None, *secrets: str | None) -> ProviderError:
    """An SDK exception (OpenAI's or Anthropic's: same shapes) -> RateLimited / Transient / ProviderError."""
    status = getattr(exc, "status_code", None)
    body = getattr(exc, "body", None)
    detail = ""
    if isinstance(body, dict):
        err = body.get("error", body)
        detail = str(err.get("message", "") if isinstance(err, dict) else err)
    detail = scrub(detail or exc.__class__.__name__, key, *secrets)[:300]
    name = exc.__class__.__name__
    if getattr(exc, "litm_kind", None) == "bad_response":  # transport.py: too large, a broken encoding
        return BadResponse(f"{label}: {scrub(str(exc), key, *secrets)[:300]}")
    if status is not None and status < 400 or "ResponseValidation" in name:
        return BadResponse(
            f"{label}: the server's answer is not a completion ({status or 'no status'}, {name}): {detail}"
        )
    if status == 429:
        return RateLimited(f"{label}: rate limited (429): {detail}", retry_after(exc))
    if status is not None and (status >= 500 or status in (408, 409)):
        err = Transient(f"{label}: server error ({status}): {detail}")
        err.retry_after = retry_after(exc)
        return err
    if status in (401, 403):
        return AuthError(f"{label}: the API key was refused ({status}): {detail}")
    if status == 404:
        return NotFound(f"{label}: not found (404): is the model name or base URL right? {detail}")
    if status in (400, 413, 422):
        return BadRequest(f"{label}: bad request ({status}): {detail}")
    if status is not None:
        return ProviderError(f"{label}: request refused ({status}): {detail}")
    if "Timeout" in name:
        return Transient(f"{label}: the request timed out (no complete answer within its timeout)")
    if "Connection" in name:
        return _connection_error(exc, label, key, *secrets)
    return ProviderError(f"{label}: {name}: {scrub(str(exc), key, *secrets)[:300]}")


def bad_body(label: str, exc: Exception, key: str | None, *secrets: str | None) -> BadResponse:
    detail = scrub(str(exc).splitlines()[0] if str(exc) else "", key, *secrets)[:200]
    return BadResponse(
        f"{label}: the server's answer could not be read ({exc.__class__.__name__}"
        + (f": {detail}" if detail else "")
        + ")"
    )


class OpenAIProvider:
    """`openai` and `openai-compatible` (same wire format; the latter with a base URL)."""

    def __init__(self, spec: ModelSpec, api_key: str):
        import openai

        self.spec = spec
        self._key, self._url_secret = api_key, url_secret(spec)
        self._sdk = openai
        self.counter = RequestCounter()
        base_url, query = split_query(spec.base_url)
        self.client = openai.AsyncOpenAI(
            api_key=api_key,
            base_url=base_url,
            default_query=query or None,
            http_client=http_client(openai, self.counter, spec),
            **sdk_kwargs(spec),
        )
        self.live = self.client.with_options(
            max_retries=0
        )  # one answer: retried by providers/retry.py, not the SDK
        self.pattern: tuple | None = None  # (url, headers, extensions) of the SDK's first chat request

    @property
    def http_requests(self) -> int:
        """HTTP requests sent so far, the SDK's retries included."""
        return self.counter.n

    def __repr__(self) -> str:  # never show the key
        return f"OpenAIProvider({self.spec.label})"

    def request(self, messages: list[dict], settings: Settings) -> dict:
        kw: dict = {"model": self.spec.model, "messages": messages}
        if self.spec.provider == "openai" and self.spec.model.startswith(_REASONING):
            kw["max_completion_tokens"] = settings.max_tokens
        else:
            kw["max_tokens"] = settings.max_tokens
            kw["temperature"] = settings.temperature
        if settings.seed is not None:
            kw["seed"] = settings.seed
        return kw

    async def complete(self, messages: list[dict], settings: Settings) -> Completion:
        check_fits(self.spec, messages, settings)
        return await self._complete(messages, settings)

    async def _complete(self, messages: list[dict], settings: Settings) -> Completion:
        t0 = time.perf_counter()
        try:
            # client.post is the SDK's documented way to call an endpoint directly: same timeout and
            # errors as chat.completions.create, without its per-call parameter transform.
            # cast_to=object: the decoded JSON as it came (a str when the body is not JSON), read below;
            # building the SDK's pydantic ChatCompletion cost 0.3 ms a call (bench/bench_runner.py profile)
            r = await self._post_chat(self.request(messages, settings))
        except self._sdk.OpenAIError as exc:
            raise map_error(exc, self.spec.label, self._key, self._url_secret) from None
        except BAD_BODY_ERRORS as exc:  # a body the SDK could not read (RecursionError: nested too deep)
            raise bad_body(self.spec.label, exc, self._key, self._url_secret) from None
        try:
            return chat_completion(r, self.spec.model, time.perf_counter() - t0)
        except (BadResponse, Refused) as exc:
            raise type(exc)(f"{self.spec.label}: {exc}") from None

    def _plain_auth(self) -> bool:
        """Whether the SDK's client authenticates with its API key alone (what this provider makes): no
        provider runtime, workload identity, key callback or custom auth that would change a request."""
        c = self.live
        return all(
            getattr(c, name, None) is None
            for name in ("_provider_runtime", "_workload_identity_auth", "_api_key_provider", "custom_auth")
        )

    async def _post_chat(self, body: dict):
        """What `self.live.post("/chat/completions", body=body, cast_to=object)` gives (the decoded JSON,
        or the text of a body that is not JSON; the SDK's own errors), sent as the SDK sent its first
        chat request: that request's URL, headers and timeout, this body serialised by the SDK's own
        encoder, through the same httpx client (its hooks, the transport, the redirects). The SDK's
        request building and response wrapping cost about 0.5 ms a call (bench/bench_runner.py profile);
        with max_retries=0 it does nothing else for an API-key client. The first call goes through the
        SDK, and so does every call of a client that authenticates otherwise (_plain_auth)."""
        if self.pattern is None or not self._plain_auth():
            r = await self.live.post("/chat/completions", body=body, cast_to=object)
            first = self.counter.chat
            if self.pattern is None and first is not None:
                headers = [(k, v) for k, v in first.headers.multi_items() if k.lower() != "content-length"]
                self.pattern = (first.url, headers, dict(first.extensions))
            return r
        import httpx2
        from openai._httpx2 import request_exceptions, timeout_exceptions
        from openai._utils._json import openapi_dumps

        url, headers, extensions = self.pattern
        http = self.live._client
        request = httpx2.Request(
            "POST", url, headers=headers, content=openapi_dumps(body), extensions=extensions
        )
        sdk = self._sdk
        try:
            response = await http.send(request)
        except timeout_exceptions() as err:
            raise sdk.APITimeoutError(request=request) from err
        except sdk.OpenAIError:
            raise
        except request_exceptions() as err:
            raise sdk.APIConnectionError(request=request) from err
        if not response.is_success:
            if not response.is_closed:
                await response.aread()
            raise self.live._make_status_error_from_response(response) from None
        content_type = response.headers.get("content-type", "*").split(";")[0]
        if not content_type.endswith("json"):
            if self.live._strict_response_validation:
                raise sdk.APIResponseValidationError(
                    response=response,
                    message=f"Expected Content-Type response header to be `application/json` but received `{content_type}` instead.",
                    body=response.text,
                )
            return response.text
        return response.json()

    async def score(self, messages: list[dict], answer: str):
        """The answer's likelihood after the prompt (providers/likelihood.py), from a server whose legacy
        /completions takes echo with logprobs and that shows its chat template (POST /apply-template at the
        server's root: the llama.cpp server): the prompt is that template with the answer appended; the
        answer's tokens are those whose text offset is at or past the template's end. A server without
        /apply-template (vLLM) is a not_found error saying so."""
        from components.providers.likelihood import CannotScore

        if self.spec.provider != "openai-compatible":
            raise CannotScore(
                f"{self.spec.label} cannot score an answer's likelihood (no log-probabilities of "
                "a given text); use an OpenAI-compatible server or a local model"
            )
        return await self._score(messages, answer)

    async def _score(self, messages: list[dict], answer: str):
        from components.providers.likelihood import Scored

        root = str(self.live.base_url).rstrip("/").removesuffix("/v1")
        t0 = time.perf_counter()
        try:
            try:
                templ = await self.live.post(
                    root + "/apply-template", body={"messages": messages}, cast_to=object
                )
            except self._sdk.NotFoundError:
                raise NotFound(
                    f"{self.spec.label}: the server has no /apply-template (the llama.cpp server's endpoint "
                    "that shows its chat template; vLLM and most other servers lack it), so the answer's "
                    'likelihood cannot be scored: use the llama.cpp server or a local model, or measure = "answer"'
                ) from None
            prefix = templ.get("prompt") if isinstance(templ, dict) else None
            if not isinstance(prefix, str):
                raise BadResponse(
                    f"{self.spec.label}: /apply-template gave no prompt: the server cannot show "
                    "its chat template, so its likelihood cannot be scored"
                )
            r: Any = await self.live.post(
                "/completions",
                cast_to=object,
                body={
                    "model": self.spec.model,
                    "prompt": prefix + answer,
                    "max_tokens": 1,
                    "temperature": 0,
                    "echo": True,
                    "logprobs": 1,
                },
            )
        except self._sdk.OpenAIError as exc:
            raise map_error(exc, self.spec.label, self._key, self._url_secret) from None
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            raise bad_body(self.spec.label, exc, self._key, self._url_secret) from None
        latency = time.perf_counter() - t0
        try:
            block = r["choices"][0]["logprobs"]
            rows = list(zip(block["text_offset"], block["token_logprobs"], strict=True))
        except (TypeError, KeyError, IndexError, ValueError):
            raise BadResponse(
                f"{self.spec.label}: /completions gave no echoed logprobs (does the server "
                "take echo with logprobs?)"
            ) from None
        end = len(prefix) + len(answer)
        picked = [lp for off, lp in rows if len(prefix) <= off < end]
        if not picked or any(not isinstance(x, int | float) for x in picked):
            raise BadResponse(f"{self.spec.label}: the echoed logprobs do not cover the answer")
        before = sum(1 for off, _ in rows if off < len(prefix))
        return Scored(tuple(float(x) for x in picked), before, before + len(picked), latency, self.spec.model)

    async def aclose(self) -> None:
        await self.client.close()
