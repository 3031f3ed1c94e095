"""Anthropic messages API through AsyncAnthropic (one client per provider object). The answer's JSON is
read as it came (the SDK's raw response) and checked by providers/answers.py, as a batch result is."""

from __future__ import annotations

import time

from components.core.completion import Completion
from components.providers.answers import BAD_BODY_ERRORS, loads, message_completion
from components.providers.base import BadResponse, ModelSpec, Settings
from components.providers.guard import check_fits
from components.providers.openai_provider import RequestCounter, bad_body, http_client, map_error, sdk_kwargs


class AnthropicProvider:
    def __init__(self, spec: ModelSpec, api_key: str):
        import anthropic

        self.spec = spec
        self._key = api_key
        self._sdk = anthropic
        kw = {"base_url": spec.base_url} if spec.base_url else {}
        self.counter = RequestCounter()
        self.client = anthropic.AsyncAnthropic(api_key=api_key, http_client=http_client(anthropic, self.counter, spec),
                                               **kw, **sdk_kwargs(spec))

    @property
    def http_requests(self) -> int:
        """HTTP requests sent so far, the SDK's retries included."""
        return self.counter.n

    def __repr__(self) -> str:  # never show the key
        return f"AnthropicProvider({self.spec.label})"

    def request(self, messages: list[dict], settings: Settings) -> dict:
        system = "\n\n".join(str(m["content"]) for m in messages if m.get("role") == "system")
        rest = [{"role": m["role"], "content": m["content"]} for m in messages if m.get("role") != "system"]
        kw: dict = {"model": self.spec.model, "messages": rest, "max_tokens": settings.max_tokens}
        if self.spec.model.startswith("claude-3"):
            # this SDK's messages.create no longer takes temperature (newer models refuse it); the
            # claude-3 family still honours it, and greedy decoding makes runs repeatable
            kw["extra_body"] = {"temperature": settings.temperature}
        if system:
            kw["system"] = system
        return kw

    async def complete(self, messages: list[dict], settings: Settings) -> Completion:
        check_fits(self.spec, messages, settings)
        t0 = time.perf_counter()
        try:
            raw = await self.client.messages.with_raw_response.create(**self.request(messages, settings))
            body = loads(raw.http_response.content)
            return message_completion(body, self.spec.model, time.perf_counter() - t0)
        except self._sdk.AnthropicError as exc:
            raise map_error(exc, self.spec.label, self._key) from None
        except BadResponse as exc:
            raise BadResponse(f"{self.spec.label}: {exc}") from None
        except BAD_BODY_ERRORS as exc:  # a body the SDK could not read
            raise bad_body(self.spec.label, exc, self._key) from None

    async def aclose(self) -> None:
        await self.client.close()
