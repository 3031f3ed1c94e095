"""OpenAI chat completions, and every OpenAI-compatible server (vLLM, Ollama, llama.cpp, LM Studio).

One AsyncOpenAI client per provider object (so one connection pool, sized above any concurrency we
use). The SDK does the retrying (max_retries, honouring Retry-After up to its own 60 s) and the timeout;
what is left after that is mapped to our errors, with messages that never contain the key.

Every HTTP request the SDK sends, its own retries included, is counted by an httpx event hook on the
SDK's client (`http_requests`): the progress line and the summary show what the server really saw.
A 200 answer that is not a completion (truncated JSON, an HTML page, no choices, null content) is a
BadResponse error, never an (empty) answer, so it is not cached and `--retry-errors` asks again.
"""

from __future__ import annotations

import time

from components.core.completion import Completion
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
)
from components.providers.guard import check_fits

POOL = 256  # connections per client; at least any concurrency a sweep asks for
_REASONING = ("o1", "o3", "o4", "gpt-5")  # take max_completion_tokens and no temperature


class RequestCounter:
    """An httpx request hook: counts every request the client sends (the SDK's retries too)."""

    def __init__(self) -> None:
        self.n = 0

    async def __call__(self, request) -> None:
        self.n += 1


def http_client(module, counter: RequestCounter | None = None):
    """The SDK's own default async HTTP client, with a pool large enough for our concurrency and a
    hook counting the requests it sends."""
    import httpx2

    limits = httpx2.Limits(max_connections=POOL, max_keepalive_connections=POOL)
    hooks = {"request": [counter]} if counter is not None else {}
    return module.DefaultAsyncHttpxClient(limits=limits, event_hooks=hooks)


def sdk_kwargs(spec: ModelSpec) -> dict:
    kw: dict = {}
    if spec.timeout is not None:
        kw["timeout"] = spec.timeout
    if spec.max_retries is not None:
        kw["max_retries"] = spec.max_retries
    return kw


def retry_after(exc) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None) or {}
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is not None:
            try:
                return max(0.0, float(value) / divisor)
            except ValueError:
                continue
    return None


def map_error(exc: Exception, label: str, key: str | None) -> ProviderError:
    """An SDK exception (OpenAI's or Anthropic's: same shapes) -> RateLimited / Transient / ProviderError."""
    status = getattr(exc, "status_code", None)
    body = getattr(exc, "body", None)
    detail = ""
    if isinstance(body, dict):
        err = body.get("error", body)
        detail = str(err.get("message", "") if isinstance(err, dict) else err)
    detail = scrub(detail or exc.__class__.__name__, key)[:300]
    name = exc.__class__.__name__
    if status is not None and status < 400 or "ResponseValidation" in name:
        return BadResponse(f"{label}: the server's answer is not a completion ({status or 'no status'}, "
                           f"{name}): {detail}")
    if status == 429:
        return RateLimited(f"{label}: rate limited (429): {detail}", retry_after(exc))
    if status is not None and (status >= 500 or status in (408, 409)):
        return Transient(f"{label}: server error ({status}): {detail}")
    if status in (401, 403):
        return AuthError(f"{label}: the API key was refused ({status}): {detail}")
    if status == 404:
        return NotFound(f"{label}: not found (404): is the model name or base URL right? {detail}")
    if status in (400, 413, 422):
        return BadRequest(f"{label}: bad request ({status}): {detail}")
    if status is not None:
        return ProviderError(f"{label}: request refused ({status}): {detail}")
    if "Timeout" in name:
        return Transient(f"{label}: the request timed out")
    if "Connection" in name:
        return Unreachable(f"{label}: could not connect to the server (is the base URL right, is it running?)")
    return ProviderError(f"{label}: {name}: {scrub(str(exc), key)[:300]}")


def bad_body(label: str, exc: Exception, key: str | None) -> BadResponse:
    detail = scrub(str(exc).splitlines()[0] if str(exc) else "", key)[:200]
    return BadResponse(f"{label}: the server's answer could not be read ({exc.__class__.__name__}"
                       + (f": {detail}" if detail else "") + ")")


def _count(x) -> int:
    """A token count from the JSON usage block: 0 when missing or not a number."""
    try:
        return max(0, int(x or 0))
    except (TypeError, ValueError):
        return 0


class OpenAIProvider:
    """`openai` and `openai-compatible` (same wire format; the latter with a base URL)."""

    def __init__(self, spec: ModelSpec, api_key: str):
        import openai

        self.spec = spec
        self._key = api_key
        self._sdk = openai
        self.counter = RequestCounter()
        self.client = openai.AsyncOpenAI(api_key=api_key, base_url=spec.base_url,
                                         http_client=http_client(openai, self.counter), **sdk_kwargs(spec))

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
        t0 = time.perf_counter()
        try:
            # client.post is the SDK's documented way to call an endpoint directly: same retries,
            # timeout and errors as chat.completions.create, without its per-call parameter transform.
            # cast_to=object: the decoded JSON as it came (a str when the body is not JSON), read below;
            # building the SDK's pydantic ChatCompletion cost 0.3 ms a call (bench/bench_runner.py profile)
            r = await self.client.post("/chat/completions", body=self.request(messages, settings), cast_to=object)
        except self._sdk.OpenAIError as exc:
            raise map_error(exc, self.spec.label, self._key) from None
        except (ValueError, TypeError, KeyError, AttributeError) as exc:  # a body the SDK could not read
            raise bad_body(self.spec.label, exc, self._key) from None
        latency = time.perf_counter() - t0
        choices = r.get("choices") if isinstance(r, dict) else None
        if not isinstance(choices, list):  # e.g. an HTML page answered with status 200
            raise BadResponse(f"{self.spec.label}: the server's answer is not a chat completion "
                              f"({type(r).__name__}, not JSON with choices)")
        if not choices:
            raise BadResponse(f"{self.spec.label}: the server answered with no choices")
        choice = choices[0] if isinstance(choices[0], dict) else {}
        message = choice.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, str):
            raise BadResponse(f"{self.spec.label}: the answer has no content "
                              f"(finish_reason {choice.get('finish_reason')!r})")
        usage = r.get("usage") if isinstance(r.get("usage"), dict) else {}
        return Completion(
            text=content,
            input_tokens=_count(usage.get("prompt_tokens")),
            output_tokens=_count(usage.get("completion_tokens")),
            latency_s=latency,
            model=r.get("model") if isinstance(r.get("model"), str) and r.get("model") else self.spec.model,
            finish_reason=choice.get("finish_reason") if isinstance(choice.get("finish_reason"), str) else "",
        )

    async def score(self, messages: list[dict], answer: str):
        """The answer's likelihood after the prompt (providers/likelihood.py), from a server whose legacy
        /completions takes echo with logprobs (the llama.cpp server, vLLM): the prompt is the server's own
        chat template (POST /apply-template at the server's root) with the answer appended; the answer's
        tokens are those whose text offset is at or past the template's end."""
        from components.providers.likelihood import CannotScore, Scored

        if self.spec.provider != "openai-compatible":
            raise CannotScore(f"{self.spec.label} cannot score an answer's likelihood (no log-probabilities of "
                              "a given text); use an OpenAI-compatible server or a local model")
        root = str(self.client.base_url).rstrip("/").removesuffix("/v1")
        t0 = time.perf_counter()
        try:
            templ = await self.client.post(root + "/apply-template", body={"messages": messages}, cast_to=object)
            prefix = templ.get("prompt") if isinstance(templ, dict) else None
            if not isinstance(prefix, str):
                raise BadResponse(f"{self.spec.label}: /apply-template gave no prompt: the server cannot show "
                                  "its chat template, so its likelihood cannot be scored")
            r = await self.client.post("/completions", cast_to=object, body={
                "model": self.spec.model, "prompt": prefix + answer, "max_tokens": 1, "temperature": 0,
                "echo": True, "logprobs": 1})
        except self._sdk.OpenAIError as exc:
            raise map_error(exc, self.spec.label, self._key) from None
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            raise bad_body(self.spec.label, exc, self._key) from None
        latency = time.perf_counter() - t0
        try:
            block = r["choices"][0]["logprobs"]
            rows = list(zip(block["text_offset"], block["token_logprobs"], strict=True))
        except (TypeError, KeyError, IndexError, ValueError):
            raise BadResponse(f"{self.spec.label}: /completions gave no echoed logprobs (does the server "
                              "take echo with logprobs?)") from None
        end = len(prefix) + len(answer)
        picked = [lp for off, lp in rows if len(prefix) <= off < end]
        if not picked or any(not isinstance(x, int | float) for x in picked):
            raise BadResponse(f"{self.spec.label}: the echoed logprobs do not cover the answer")
        before = sum(1 for off, _ in rows if off < len(prefix))
        return Scored(tuple(float(x) for x in picked), before, before + len(picked), latency, self.spec.model)

    async def aclose(self) -> None:
        await self.client.close()
