"""The providers' batch interfaces: OpenAI's Batch API (Files + Batches) and Anthropic's Message Batches.

Both take many requests at once, answer within 24 hours at half the list price and have no per-request
rate limit. A request is built by the SAME `provider.request(messages, settings)` as a live call, and
its custom_id is the call's cache key (64 hex characters: both providers allow up to 64), so a result
is stored as the very call a live sweep would have made.

Limits (per batch; checked by `split`): OpenAI 50,000 requests and 200 MB per input file; Anthropic
100,000 requests or 256 MB per batch (https://platform.openai.com/docs/api-reference/batch/create,
https://docs.anthropic.com/en/docs/build-with-claude/batch-processing#batch-limitations).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from components.core.completion import Completion
from components.providers.base import ProviderError, Settings, scrub
from components.providers.openai_provider import map_error

FIND_WINDOW = 300.0  # seconds after its store row within which a lost Anthropic batch was created
ENVELOPE = 64  # bytes a request adds to a batch beyond its own JSON (separators, a line break)


class BatchRequestError(ProviderError):
    """One request of a batch failed (its own error, as the provider reported it)."""

    kind = "batch"


@dataclass(frozen=True)
class BatchStatus:
    batch_id: str
    status: str  # the provider's own word (in_progress, completed, ended, cancelling, ...)
    ended: bool  # every request has an outcome: results can be downloaded
    total: int
    succeeded: int
    errored: int
    processing: int


@dataclass(frozen=True)
class BatchResult:
    key: str  # the custom_id: the call's cache key
    outcome: str  # succeeded | errored | canceled | expired
    completion: Completion | None = None
    error: str = ""


def split(sizes: list[int], max_requests: int, max_bytes: int) -> list[list[int]]:
    """Indices of requests (sizes in bytes) grouped into batches within both limits, in order. A request
    larger than max_bytes on its own is left out (the caller records it as an error)."""
    groups: list[list[int]] = []
    current: list[int] = []
    used = 0
    for i, size in enumerate(sizes):
        size += ENVELOPE
        if size > max_bytes:
            continue
        if current and (len(current) >= max_requests or used + size > max_bytes):
            groups.append(current)
            current, used = [], 0
        current.append(i)
        used += size
    if current:
        groups.append(current)
    return groups


def _usage(usage: dict, a: str, b: str) -> tuple[int, int]:
    return int(usage.get(a) or 0), int(usage.get(b) or 0)


class OpenAIBatches:
    """POST /v1/files (purpose batch) + POST /v1/batches; GET /v1/batches/{id}; output and error files."""

    max_requests, max_bytes = 50_000, 200 * 1024 * 1024
    endpoint = "/v1/chat/completions"

    def __init__(self, provider):
        self.provider = provider
        self.spec = provider.spec
        self.client = provider.client
        self._sdk = provider._sdk

    def _fail(self, exc) -> ProviderError:
        return map_error(exc, self.spec.label, getattr(self.provider, "_key", None))

    def request(self, key: str, messages: list[dict], settings: Settings) -> dict:
        return {"custom_id": key, "method": "POST", "url": self.endpoint,
                "body": self.provider.request(messages, settings)}

    async def submit(self, requests: list[dict], token: str) -> tuple[str, str]:
        """(batch id, input file id). `token` goes into the batch's metadata (find() looks for it)."""
        data = b"".join(json.dumps(r, ensure_ascii=False).encode() + b"\n" for r in requests)
        try:
            f = await self.client.files.create(file=("litm-batch.jsonl", data, "application/jsonl"), purpose="batch")
            b = await self.client.batches.create(input_file_id=f.id, endpoint=self.endpoint, completion_window="24h",
                                                 metadata={"litm_token": token})
        except self._sdk.OpenAIError as exc:
            raise self._fail(exc) from None
        return b.id, f.id

    async def find(self, token: str, created: float, requests: int, known: set[str]) -> str | None:
        """The id of a batch made with this token (a process killed between create and saving its id)."""
        try:
            page = await self.client.batches.list(limit=100)
        except self._sdk.OpenAIError:
            return None
        for b in page.data:
            if (b.metadata or {}).get("litm_token") == token:
                return b.id
        return None

    async def _retrieve(self, batch_id: str):
        try:
            return await self.client.batches.retrieve(batch_id)
        except self._sdk.OpenAIError as exc:
            raise self._fail(exc) from None

    async def status(self, batch_id: str) -> BatchStatus:
        b = await self._retrieve(batch_id)
        c = b.request_counts
        total, done, failed = (c.total, c.completed, c.failed) if c is not None else (0, 0, 0)
        return BatchStatus(b.id, b.status, b.status in ("completed", "failed", "expired", "cancelled"),
                           total, done, failed, max(0, total - done - failed))

    async def cancel(self, batch_id: str) -> None:
        try:
            await self.client.batches.cancel(batch_id)
        except self._sdk.OpenAIError as exc:
            raise self._fail(exc) from None

    async def _file(self, file_id: str | None) -> list[dict]:
        if not file_id:
            return []
        try:
            content = await self.client.files.content(file_id)
        except self._sdk.OpenAIError as exc:
            raise self._fail(exc) from None
        return [json.loads(line) for line in content.text.splitlines() if line.strip()]

    async def results(self, batch_id: str) -> list[BatchResult]:
        """Every request's outcome: lines of the output file and of the error file. A batch that failed
        as a whole (validation) has no lines: the caller records its errors on every request."""
        b = await self._retrieve(batch_id)
        out = []
        for line in await self._file(b.output_file_id) + await self._file(b.error_file_id):
            key = line.get("custom_id", "")
            response = line.get("response") or {}
            body = response.get("body") or {}
            if response.get("status_code") == 200 and isinstance(body, dict) and body.get("choices") is not None:
                choice = (body.get("choices") or [{}])[0]
                tin, tout = _usage(body.get("usage") or {}, "prompt_tokens", "completion_tokens")
                details = (body.get("usage") or {}).get("prompt_tokens_details") or {}
                text = ((choice.get("message") or {}).get("content")) or ""
                out.append(BatchResult(key, "succeeded", Completion(
                    text, tin, tout, 0.0, body.get("model") or self.spec.model, False,
                    choice.get("finish_reason") or "", cached_input_tokens=int(details.get("cached_tokens") or 0))))
                continue
            err = line.get("error") or (body.get("error") if isinstance(body, dict) else None) or {}
            code = str(err.get("code") or "")
            status = response.get("status_code")
            message = scrub(str(err.get("message") or "no answer"), getattr(self.provider, "_key", None))[:300]
            where = f" ({status})" if status else ""
            out.append(BatchResult(key, "expired" if code == "batch_expired" else "errored",
                                   error=f"{self.spec.label}: batch request failed{where}: {message}"))
        return out

    async def batch_errors(self, batch_id: str) -> str:
        """Why a batch failed as a whole (OpenAI's `errors` list), one line."""
        b = await self._retrieve(batch_id)
        data = getattr(getattr(b, "errors", None), "data", None) or []
        return "; ".join(str(getattr(e, "message", e)) for e in data)[:300] or f"batch {b.status}"


class AnthropicBatches:
    """POST /v1/messages/batches; GET /v1/messages/batches/{id}; its results_url (JSONL)."""

    max_requests, max_bytes = 100_000, 256 * 1024 * 1024

    def __init__(self, provider):
        self.provider = provider
        self.spec = provider.spec
        self.client = provider.client
        self._sdk = provider._sdk

    def _fail(self, exc) -> ProviderError:
        return map_error(exc, self.spec.label, getattr(self.provider, "_key", None))

    def request(self, key: str, messages: list[dict], settings: Settings) -> dict:
        params = dict(self.provider.request(messages, settings))
        params.update(params.pop("extra_body", None) or {})  # a live call's extra body is a batch param
        return {"custom_id": key, "params": params}

    async def submit(self, requests: list[dict], token: str) -> tuple[str, None]:
        try:
            b = await self.client.messages.batches.create(requests=requests)
        except self._sdk.AnthropicError as exc:
            raise self._fail(exc) from None
        return b.id, None

    async def find(self, token: str, created: float, requests: int, known: set[str]) -> str | None:
        """A message batch carries no metadata: a lost submission is the one batch created within
        FIND_WINDOW seconds after the store's row, with the same number of requests, that no row knows."""
        try:
            page = await self.client.messages.batches.list(limit=100)
        except self._sdk.AnthropicError:
            return None
        hits = []
        for b in page.data:
            c = b.request_counts
            total = c.processing + c.succeeded + c.errored + c.canceled + c.expired
            at = b.created_at.timestamp() if b.created_at is not None else 0.0
            if b.id not in known and total == requests and created - 2 <= at <= created + FIND_WINDOW:
                hits.append(b.id)
        return hits[0] if len(hits) == 1 else None

    async def status(self, batch_id: str) -> BatchStatus:
        try:
            b = await self.client.messages.batches.retrieve(batch_id)
        except self._sdk.AnthropicError as exc:
            raise self._fail(exc) from None
        c = b.request_counts
        total = c.processing + c.succeeded + c.errored + c.canceled + c.expired
        return BatchStatus(b.id, b.processing_status, b.processing_status == "ended", total, c.succeeded,
                           c.errored + c.expired, c.processing)

    async def cancel(self, batch_id: str) -> None:
        try:
            await self.client.messages.batches.cancel(batch_id)
        except self._sdk.AnthropicError as exc:
            raise self._fail(exc) from None

    async def results(self, batch_id: str) -> list[BatchResult]:
        out = []
        try:
            async for item in await self.client.messages.batches.results(batch_id):
                r = item.result
                if r.type == "succeeded":
                    m = r.message
                    text = "".join(getattr(b, "text", "") for b in (m.content or []) if getattr(b, "type", "") == "text")
                    read = int(getattr(m.usage, "cache_read_input_tokens", 0) or 0)
                    written = int(getattr(m.usage, "cache_creation_input_tokens", 0) or 0)
                    out.append(BatchResult(item.custom_id, "succeeded", Completion(  # input: every input token
                        text, int(m.usage.input_tokens or 0) + read + written, int(m.usage.output_tokens or 0), 0.0,
                        m.model or self.spec.model, False, str(m.stop_reason or ""), read, written)))
                elif r.type == "errored":
                    err = getattr(r.error, "error", None)
                    message = scrub(str(getattr(err, "message", "") or getattr(err, "type", "") or "error"),
                                    getattr(self.provider, "_key", None))[:300]
                    out.append(BatchResult(item.custom_id, "errored",
                                           error=f"{self.spec.label}: batch request failed: {message}"))
                else:  # canceled | expired
                    out.append(BatchResult(item.custom_id, r.type,
                                           error=f"{self.spec.label}: batch request {r.type}"))
        except self._sdk.AnthropicError as exc:
            raise self._fail(exc) from None
        return out

    async def batch_errors(self, batch_id: str) -> str:
        return "the message batch ended without results"


def batch_api(provider) -> OpenAIBatches | AnthropicBatches:
    """The batch interface of a provider object; ProviderError for one that has none (local, fake)."""
    kind = provider.spec.provider
    if kind == "anthropic" and hasattr(provider, "client"):
        return AnthropicBatches(provider)
    if kind in ("openai", "openai-compatible") and hasattr(provider, "client"):
        return OpenAIBatches(provider)
    raise ProviderError(f"{provider.spec.label}: batch mode needs an openai, openai-compatible or anthropic "
                        "model (this one has no batch interface); use mode = \"live\"")
