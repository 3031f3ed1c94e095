"""Anthropic messages API through AsyncAnthropic (one client per provider object). The answer's JSON is
read as it came (the SDK's raw response) and checked by providers/answers.py, as a batch result is. A
call sends one request (the SDK's own retries off); providers/retry.py is the one loop that retries it.

Prompt caching: with `cache_prefix` set for the model ([models] in a sweep), the prompt's shared prefix
is marked for Anthropic's prompt cache. The last user message goes as text blocks cut where
Prompt.cache_cuts says (each page before the shared prefix ends, then the end of that prefix), the
block that ends the prefix carrying `cache_control: {"type": "ephemeral"}`: Anthropic writes the prefix
up to that block to its cache, and finds an earlier prompt's prefix at any block boundary up to 20
blocks before it (its prompt-caching page). The blocks joined are the prompt, byte for byte.
Usage: Anthropic's `input_tokens` counts only the tokens after the last cache hit or write; ours
counts every input token (cache reads `cache_read_input_tokens` and writes `cache_creation_input_tokens`
included, kept apart in Completion), so input means the same for every provider.
"""

from __future__ import annotations

import time

from components.core.completion import Completion
from components.providers.answers import BAD_BODY_ERRORS, loads, message_completion
from components.providers.base import BadResponse, ModelSpec, Refused, Settings
from components.providers.guard import check_fits
from components.providers.openai_provider import (
    RequestCounter,
    bad_body,
    http_client,
    map_error,
    sdk_kwargs,
    split_query,
    url_secret,
)


def blocks(text: str, cuts: tuple[int, ...]) -> list[dict]:
    """`text` as text blocks cut at `cuts`, the block ending at the last cut marked for the cache."""
    inner = sorted({c for c in cuts if 0 < c < len(text)})
    if not cuts or cuts[-1] not in inner:
        return [{"type": "text", "text": text}]
    edges = [0, *inner, len(text)]
    out = [{"type": "text", "text": text[a:b]} for a, b in zip(edges, edges[1:], strict=False)]
    out[edges.index(cuts[-1]) - 1]["cache_control"] = {"type": "ephemeral"}
    return out


class AnthropicProvider:
    takes_cache_cuts = True  # complete(..., cuts=Prompt.cache_cuts()) when the model has cache_prefix

    def __init__(self, spec: ModelSpec, api_key: str):
        import anthropic

        self.spec = spec
        self._key, self._url_secret = api_key, url_secret(spec)
        self._sdk = anthropic
        base_url, query = split_query(spec.base_url)  # the SDK too would put a query before its paths
        kw: dict = {"base_url": base_url, "default_query": query or None} if base_url else {}
        self.counter = RequestCounter()
        self.client = anthropic.AsyncAnthropic(
            api_key=api_key, http_client=http_client(anthropic, self.counter, spec), **kw, **sdk_kwargs(spec)
        )
        self.live = self.client.with_options(
            max_retries=0
        )  # one answer: retried by providers/retry.py, not the SDK

    @property
    def http_requests(self) -> int:
        """HTTP requests sent so far, the SDK's retries included."""
        return self.counter.n

    def __repr__(self) -> str:  # never show the key
        return f"AnthropicProvider({self.spec.label})"

    def request(self, messages: list[dict], settings: Settings, cuts: tuple[int, ...] = ()) -> dict:
        system = "\n\n".join(str(m["content"]) for m in messages if m.get("role") == "system")
        rest = [{"role": m["role"], "content": m["content"]} for m in messages if m.get("role") != "system"]
        if self.spec.cache_prefix and cuts and rest and isinstance(rest[-1]["content"], str):
            rest[-1] = {**rest[-1], "content": blocks(rest[-1]["content"], cuts)}
        kw: dict = {"model": self.spec.model, "messages": rest, "max_tokens": settings.max_tokens}
        if self.spec.model.startswith("claude-3"):
            # this SDK's messages.create no longer takes temperature (newer models refuse it); the
            # claude-3 family still honours it, and greedy decoding makes runs repeatable
            kw["extra_body"] = {"temperature": settings.temperature}
        if system:
            kw["system"] = system
        return kw

    async def complete(
        self, messages: list[dict], settings: Settings, cuts: tuple[int, ...] = ()
    ) -> Completion:
        check_fits(self.spec, messages, settings)
        request = self.request(messages, settings, cuts)
        return await self._complete(request)

    async def _complete(self, request: dict) -> Completion:
        t0 = time.perf_counter()
        try:
            raw = await self.live.messages.with_raw_response.create(**request)
            body = loads(raw.http_response.content)
            return message_completion(body, self.spec.model, time.perf_counter() - t0)
        except self._sdk.AnthropicError as exc:
            raise map_error(exc, self.spec.label, self._key, self._url_secret) from None
        except (BadResponse, Refused) as exc:
            raise type(exc)(f"{self.spec.label}: {exc}") from None
        except BAD_BODY_ERRORS as exc:  # a body the SDK could not read
            raise bad_body(self.spec.label, exc, self._key, self._url_secret) from None

    async def aclose(self) -> None:
        await self.client.close()
