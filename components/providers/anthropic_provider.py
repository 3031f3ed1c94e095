"""Anthropic messages API through AsyncAnthropic (one client per provider object)."""

from __future__ import annotations

import time

from components.core.completion import Completion
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
        self.client = anthropic.AsyncAnthropic(api_key=api_key, http_client=http_client(anthropic, self.counter),
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
            r = await self.client.messages.create(**self.request(messages, settings))
        except self._sdk.AnthropicError as exc:
            raise map_error(exc, self.spec.label, self._key) from None
        except (ValueError, TypeError, KeyError, AttributeError) as exc:  # a body the SDK could not read
            raise bad_body(self.spec.label, exc, self._key) from None
        latency = time.perf_counter() - t0
        blocks = getattr(r, "content", None)
        if not isinstance(blocks, list):  # e.g. an HTML page answered with status 200
            raise BadResponse(f"{self.spec.label}: the server's answer is not a message ({type(r).__name__})")
        texts = [b.text for b in blocks if getattr(b, "type", "") == "text" and getattr(b, "text", None) is not None]
        if not texts:
            raise BadResponse(f"{self.spec.label}: the answer has no text content "
                              f"(stop_reason {getattr(r, 'stop_reason', None)!r})")
        text = "".join(texts)
        usage = r.usage
        return Completion(
            text=text,
            input_tokens=int(getattr(usage, "input_tokens", 0) or 0),
            output_tokens=int(getattr(usage, "output_tokens", 0) or 0),
            latency_s=latency,
            model=r.model or self.spec.model,
            finish_reason=str(r.stop_reason or ""),
        )

    async def aclose(self) -> None:
        await self.client.close()
