"""The providers' batch interfaces: OpenAI's Batch API (Files + Batches) and Anthropic's Message Batches.

Both take many requests at once, answer within 24 hours at half the list price and have no per-request
rate limit. A request is built by the SAME `provider.request(messages, settings)` as a live call, and
its custom_id is the call's cache key (64 hex characters: both providers allow up to 64), so a result
is stored as the very call a live sweep would have made.

Limits (per batch; checked by `split`): OpenAI 50,000 requests and 200 MB per input file; Anthropic
100,000 requests or 256 MB per batch (https://platform.openai.com/docs/api-reference/batch/create,
https://docs.anthropic.com/en/docs/build-with-claude/batch-processing#batch-limitations).

Results are read as they download, line by line (never the whole file at once), and each line is
checked like a live answer (components/providers/answers.py): a line that is not JSON, not an object,
has no custom_id, or holds no usable completion is a BatchResult with outcome "bad" (kind bad_response),
never an answer.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from components.core.completion import Completion
from components.providers.answers import MAX_ANSWER_BYTES, chat_completion, loads, message_completion
from components.providers.base import BadResponse, ProviderError, Refused, Settings, scrub
from components.providers.openai_provider import BULK, map_error

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
    key: str  # the custom_id: the call's cache key ("" when the line has none that can be read)
    outcome: str  # succeeded | errored | canceled | expired | bad (no usable answer: kind bad_response)
    completion: Completion | None = None
    error: str = ""


async def lines(
    chunks: AsyncIterator[bytes], cap: int = MAX_ANSWER_BYTES
) -> AsyncIterator[tuple[int, bytes | None]]:
    """(line number, line) of a JSON-lines download as it arrives; a line longer than `cap` bytes is
    (number, None), skipped to its end without being held. Blank lines are counted, not given."""
    buf, n, skipping = bytearray(), 0, False
    async for chunk in chunks:
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            piece = chunk[start:] if end < 0 else chunk[start:end]
            if not skipping:
                buf += piece
                if len(buf) > cap:
                    skipping = True
                    buf.clear()
            if end < 0:
                break
            n += 1
            if skipping:
                yield n, None
            elif buf.strip():
                yield n, bytes(buf)
            buf.clear()
            skipping = False
            start = end + 1
    if skipping:
        yield n + 1, None
    elif buf.strip():
        yield n + 1, bytes(buf)


def _bad(key: str, where: str, why: str) -> BatchResult:
    return BatchResult(key, "bad", error=f"{where}: {why}")


def _object(n: int, raw: bytes | None, where: str) -> dict | BatchResult:
    """One result line as a JSON object with a custom_id, else a "bad" BatchResult saying why."""
    where = f"{where} line {n}"
    if raw is None:
        return _bad("", where, f"longer than {MAX_ANSWER_BYTES // 2**20} MB")
    try:
        line = loads(raw)
    except BadResponse as exc:
        return _bad("", where, str(exc))
    if not isinstance(line, dict):
        return _bad("", where, f"not a JSON object ({type(line).__name__})")
    key = line.get("custom_id")
    if not isinstance(key, str) or not key:
        return _bad("", where, "no custom_id")
    return line


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
        return {
            "custom_id": key,
            "method": "POST",
            "url": self.endpoint,
            "body": self.provider.request(messages, settings),
        }

    async def submit(self, requests: list[dict], token: str) -> tuple[str, str]:
        """(batch id, input file id). `token` goes into the batch's metadata (find() looks for it)."""
        data = b"".join(json.dumps(r, ensure_ascii=False).encode() + b"\n" for r in requests)
        try:
            f = await self.client.files.create(
                file=("litm-batch.jsonl", data, "application/jsonl"), purpose="batch", extra_headers=BULK
            )
            b = await self.client.batches.create(
                input_file_id=f.id,
                endpoint=self.endpoint,
                completion_window="24h",
                metadata={"litm_token": token},
            )
        except self._sdk.OpenAIError as exc:
            raise self._fail(exc) from None
        return b.id, f.id

    async def find(
        self, token: str, created: float, keys: set[str], known: set[str]
    ) -> tuple[str | None, bool]:
        """(id, False) of the batch made with this token, which only our submission carries in its
        metadata (a process killed between create and saving its id); (None, False) when there is none."""
        try:
            page = await self.client.batches.list(limit=100)
        except self._sdk.OpenAIError:
            return None, False
        for b in page.data:
            meta = b.metadata if isinstance(b.metadata, dict) else {}
            if meta.get("litm_token") == token and b.id not in known:
                return b.id, False
        return None, False

    async def _retrieve(self, batch_id: str):
        try:
            return await self.client.batches.retrieve(batch_id)
        except self._sdk.OpenAIError as exc:
            raise self._fail(exc) from None

    async def status(self, batch_id: str) -> BatchStatus:
        b = await self._retrieve(batch_id)
        c = b.request_counts
        total, done, failed = (c.total, c.completed, c.failed) if c is not None else (0, 0, 0)
        return BatchStatus(
            b.id,
            b.status,
            b.status in ("completed", "failed", "expired", "cancelled"),
            total,
            done,
            failed,
            max(0, total - done - failed),
        )

    async def cancel(self, batch_id: str) -> None:
        try:
            await self.client.batches.cancel(batch_id)
        except self._sdk.OpenAIError as exc:
            raise self._fail(exc) from None

    async def _lines(self, file_id: str | None) -> AsyncIterator[tuple[int, bytes | None]]:
        if not file_id:
            return
        try:
            async with self.client.files.with_streaming_response.content(file_id, extra_headers=BULK) as r:
                async for item in lines(r.iter_bytes()):
                    yield item
        except self._sdk.OpenAIError as exc:
            raise self._fail(exc) from None

    async def results(self, batch_id: str) -> AsyncIterator[BatchResult]:
        """Every request's outcome, as the lines of the output file and of the error file arrive. A batch
        that failed as a whole (validation) has no lines: the caller records its errors on every request."""
        b = await self._retrieve(batch_id)
        for file_id, name in ((b.output_file_id, "output"), (b.error_file_id, "error")):
            async for n, raw in self._lines(file_id):
                yield self._result(n, raw, f"{self.spec.label}: batch {batch_id}: {name} file")

    def _result(self, n: int, raw: bytes | None, where: str) -> BatchResult:
        line = _object(n, raw, where)
        if isinstance(line, BatchResult):
            return line
        key, where = line["custom_id"], f"{where} line {n}"
        response = line.get("response")
        response = response if isinstance(response, dict) else {}
        body = response.get("body")
        status = response.get("status_code")
        if status == 200:
            try:
                return BatchResult(key, "succeeded", chat_completion(body, self.spec.model))
            except (BadResponse, Refused) as exc:  # a refusal in a batch: a bad answer, never scored
                return _bad(key, where, str(exc))
        err = line.get("error")
        if not isinstance(err, dict):
            err = body.get("error") if isinstance(body, dict) else None
        if not isinstance(err, dict) and status is None:
            return _bad(key, where, "neither an answer nor an error")
        err = err if isinstance(err, dict) else {}
        message = scrub(str(err.get("message") or "no answer"), getattr(self.provider, "_key", None))[:300]
        shown = f" ({status})" if isinstance(status, int) else ""
        return BatchResult(
            key,
            "expired" if err.get("code") == "batch_expired" else "errored",
            error=f"{self.spec.label}: batch request failed{shown}: {message}",
        )

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
        self._checked: dict[str, bool] = {}  # batch id -> whether its results answer a lost row's requests

    def _fail(self, exc) -> ProviderError:
        return map_error(exc, self.spec.label, getattr(self.provider, "_key", None))

    def request(self, key: str, messages: list[dict], settings: Settings) -> dict:
        params = dict(self.provider.request(messages, settings))
        params.update(params.pop("extra_body", None) or {})  # a live call's extra body is a batch param
        return {"custom_id": key, "params": params}

    async def submit(self, requests: list[dict], token: str) -> tuple[str, None]:
        try:
            b = await self.client.messages.batches.create(requests=requests, extra_headers=BULK)
        except self._sdk.AnthropicError as exc:
            raise self._fail(exc) from None
        return b.id, None

    async def find(
        self, token: str, created: float, keys: set[str], known: set[str]
    ) -> tuple[str | None, bool]:
        """A message batch carries no metadata, so a lost submission is recognised by its requests: a batch
        no row knows, created within FIND_WINDOW seconds after the store's row, with as many requests,
        is ours only if the custom_ids of its results are our requests' (their cache keys, hashes of our
        prompts). Results exist once a batch has ended: (id, False) for one that is ours, (None, True)
        while a candidate is still running (never taken, nor cancelled, on its size alone), (None, False)
        when there is none."""
        try:
            page = await self.client.messages.batches.list(limit=100)
        except self._sdk.AnthropicError:
            return None, False
        pending = False
        for b in page.data:
            try:
                c = b.request_counts
                total = c.processing + c.succeeded + c.errored + c.canceled + c.expired
                at = b.created_at.timestamp() if b.created_at is not None else 0.0
                ended = b.processing_status == "ended"
            except (AttributeError, TypeError, ValueError):
                continue
            if b.id in known or total != len(keys) or not created - 2 <= at <= created + FIND_WINDOW:
                continue
            if not ended:
                pending = True
            elif await self._holds(b.id, keys):
                return b.id, False
        return None, pending

    async def _holds(self, batch_id: str, keys: set[str]) -> bool:
        """Whether an ended batch's results answer our requests and nothing else (checked once)."""
        if batch_id not in self._checked:
            ids = set()
            try:
                async for r in self.results(batch_id):
                    if r.key:
                        ids.add(r.key)
            except ProviderError:
                return False  # not now: looked at again at the next poll
            self._checked[batch_id] = bool(ids) and ids <= keys
        return self._checked[batch_id]

    async def status(self, batch_id: str) -> BatchStatus:
        try:
            b = await self.client.messages.batches.retrieve(batch_id)
        except self._sdk.AnthropicError as exc:
            raise self._fail(exc) from None
        c = b.request_counts
        total = c.processing + c.succeeded + c.errored + c.canceled + c.expired
        return BatchStatus(
            b.id,
            b.processing_status,
            b.processing_status == "ended",
            total,
            c.succeeded,
            c.errored + c.expired,
            c.processing,
        )

    async def cancel(self, batch_id: str) -> None:
        try:
            await self.client.messages.batches.cancel(batch_id)
        except self._sdk.AnthropicError as exc:
            raise self._fail(exc) from None

    async def results(self, batch_id: str) -> AsyncIterator[BatchResult]:
        """Every request's outcome, as the lines of the batch's results arrive."""
        where = f"{self.spec.label}: batch {batch_id}: results"
        try:
            async with self.client.messages.batches.with_streaming_response.results(
                batch_id, extra_headers=BULK
            ) as r:
                async for n, raw in lines(r.iter_bytes()):
                    yield self._result(n, raw, where)
        except self._sdk.AnthropicError as exc:
            raise self._fail(exc) from None

    def _result(self, n: int, raw: bytes | None, where: str) -> BatchResult:
        line = _object(n, raw, where)
        if isinstance(line, BatchResult):
            return line
        key, where = line["custom_id"], f"{where} line {n}"
        result: Any = line.get("result")
        kind = result.get("type") if isinstance(result, dict) else None
        if kind == "succeeded":
            try:
                return BatchResult(
                    key, "succeeded", message_completion(result.get("message"), self.spec.model)
                )
            except (BadResponse, Refused) as exc:
                return _bad(key, where, str(exc))
        if kind == "errored":
            err = result.get("error")
            err = err.get("error", err) if isinstance(err, dict) else {}
            err = err if isinstance(err, dict) else {}
            message = scrub(
                str(err.get("message") or err.get("type") or "error"), getattr(self.provider, "_key", None)
            )[:300]
            return BatchResult(key, "errored", error=f"{self.spec.label}: batch request failed: {message}")
        if kind in ("canceled", "expired"):
            return BatchResult(key, kind, error=f"{self.spec.label}: batch request {kind}")
        return _bad(key, where, f"an unknown result type ({str(kind)[:40]!r})")

    async def batch_errors(self, batch_id: str) -> str:
        return "the message batch ended without results"


def batch_api(provider):
    """The batch interface of a provider object (OpenAIBatches, AnthropicBatches or gemini_batches'
    GeminiBatches); ProviderError for one that has none (local, fake)."""
    kind = provider.spec.provider
    if kind == "anthropic" and hasattr(provider, "client"):
        return AnthropicBatches(provider)
    if kind in ("openai", "openai-compatible") and hasattr(provider, "client"):
        return OpenAIBatches(provider)
    if kind == "gemini" and hasattr(provider, "client"):
        from components.providers.gemini_batches import GeminiBatches

        return GeminiBatches(provider)
    raise ProviderError(
        f"{provider.spec.label}: batch mode needs an openai, openai-compatible, anthropic or gemini "
        'model (this one has no batch interface); use mode = "live"'
    )
