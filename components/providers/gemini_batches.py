"""Gemini's Batch API through google-genai (`client.aio.batches`): inline requests, half the list price.

https://ai.google.dev/gemini-api/docs/batch-api (read 2026-12-02): a batch of inline GenerateContentRequests
is created with POST /v1beta/models/{model}:batchGenerateContent and answered within 24 hours at 50 % of
the standard price; inline requests suit batches whose whole request is under 20 MB (larger ones go
through an uploaded file, which this interface does not use: `split` keeps each batch under 20 MB). A
batch is an Operation named `batches/{id}` whose metadata carries its state (BATCH_STATE_PENDING,
RUNNING, SUCCEEDED, FAILED, CANCELLED, EXPIRED) and, once it has ended, its inlined responses, in the order
of the requests, each with the metadata it was sent with, a GenerateContentResponse or an error.

A request is built from the same contents and generation settings as a live call (gemini_provider's
`contents` and `GeminiProvider.config_kw`) and carries the call's cache key in its metadata (`key`), so a
result is stored as the very call a live sweep would have made. The batch's display name carries the
submission's token (`litm-<token>`), which `find` looks for after a process was killed between creating
a batch and saving its name. Each answer is checked as a live one is (`gemini_completion`): no text, a
content filter or an unreadable answer is that request's error, never an answer.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from components.providers.base import BadResponse, ProviderError, Settings, scrub
from components.providers.batches import BatchResult, BatchStatus
from components.providers.gemini_provider import contents, gemini_completion, map_gemini_error

PREFIX = "litm-"  # display name of a batch of ours: PREFIX + the submission's token
# the SDK's JobState (JOB_STATE_*) -> the words run/batch.py reads (failed, cancelled mark a batch's end)
STATES = {
    "JOB_STATE_QUEUED": "pending",
    "JOB_STATE_PENDING": "pending",
    "JOB_STATE_RUNNING": "running",
    "JOB_STATE_UPDATING": "running",
    "JOB_STATE_PAUSED": "running",
    "JOB_STATE_CANCELLING": "cancelling",
    "JOB_STATE_SUCCEEDED": "completed",
    "JOB_STATE_PARTIALLY_SUCCEEDED": "completed",
    "JOB_STATE_FAILED": "failed",
    "JOB_STATE_CANCELLED": "cancelled",
    "JOB_STATE_EXPIRED": "expired",
}
ENDED = ("completed", "failed", "cancelled", "expired")


def _state(job) -> str:
    state = getattr(job, "state", None)
    name = str(getattr(state, "value", state) or "")
    return STATES.get(name, name.lower().removeprefix("job_state_") or "pending")


class GeminiBatches:
    """POST models/{model}:batchGenerateContent; GET batches/{id}; its inlined responses."""

    max_requests, max_bytes = 100_000, 20 * 1024 * 1024  # inline requests: the whole request under 20 MB

    def __init__(self, provider):
        self.provider = provider
        self.spec = provider.spec
        self.client = provider.client
        self._errors = provider._errors
        self._secrets = (getattr(provider, "_key", None), getattr(provider, "_url_secret", None))
        self._sizes: dict[str, int] = {}  # batch name -> requests submitted (the SDK reports no counts)

    def _fail(self, exc) -> ProviderError:
        if isinstance(exc, self._errors.APIError):
            return map_gemini_error(exc, self.spec.label, *self._secrets)
        detail = scrub(str(exc).splitlines()[0] if str(exc) else "", *self._secrets)[:200]
        return ProviderError(f"{self.spec.label}: batch request failed ({exc.__class__.__name__}: {detail})")

    def request(self, key: str, messages: list[dict], settings: Settings) -> dict:
        parts, system = contents(messages)
        return {
            "contents": parts,
            "config": self.provider.config_kw(system, settings),
            "metadata": {"key": key},
        }

    async def submit(self, requests: list[dict], token: str) -> tuple[str, None]:
        try:
            job = await self.client.aio.batches.create(
                model=self.spec.model, src=requests, config={"display_name": PREFIX + token}
            )
        except Exception as exc:  # the SDK's APIError, or httpx's under it
            raise self._fail(exc) from None
        self._sizes[job.name] = len(requests)
        return job.name, None

    async def find(
        self, token: str, created: float, keys: set[str], known: set[str]
    ) -> tuple[str | None, bool]:
        """(name, False) of the batch whose display name carries this token (only our submission has it);
        (None, False) when there is none."""
        try:
            pager = await self.client.aio.batches.list(config={"page_size": 100})
            jobs = list(pager.page)
        except Exception:
            return None, False
        for job in jobs:
            if job.display_name == PREFIX + token and job.name not in known:
                return job.name, False
        return None, False

    async def _get(self, name: str):
        try:
            return await self.client.aio.batches.get(name=name)
        except Exception as exc:
            raise self._fail(exc) from None

    async def status(self, batch_id: str) -> BatchStatus:
        job = await self._get(batch_id)
        state = _state(job)
        answers = list(getattr(getattr(job, "dest", None), "inlined_responses", None) or [])
        failed = sum(1 for a in answers if a.response is None)
        total = max(self._sizes.get(batch_id, 0), len(answers))
        done = len(answers) - failed
        return BatchStatus(batch_id, state, state in ENDED, total, done, failed, max(0, total - len(answers)))

    async def cancel(self, batch_id: str) -> None:
        try:
            await self.client.aio.batches.cancel(name=batch_id)
        except Exception as exc:
            raise self._fail(exc) from None

    async def results(self, batch_id: str) -> AsyncIterator[BatchResult]:
        """Every request's outcome, from the ended batch's inlined responses."""
        job = await self._get(batch_id)
        where = f"{self.spec.label}: batch {batch_id}: inlined responses"
        for n, answer in enumerate(getattr(getattr(job, "dest", None), "inlined_responses", None) or [], 1):
            yield self._result(n, answer, where)

    def _result(self, n: int, answer, where: str) -> BatchResult:
        where = f"{where} item {n}"
        meta = answer.metadata if isinstance(answer.metadata, dict) else {}
        key = meta.get("key")
        if not isinstance(key, str) or not key:
            return BatchResult("", "bad", error=f"{where}: no key in its metadata")
        if answer.response is None:
            err = answer.error
            message = scrub(str(getattr(err, "message", None) or "no answer"), *self._secrets)[:300]
            code = getattr(err, "code", None)
            shown = f" ({code})" if isinstance(code, int) else ""
            return BatchResult(
                key, "errored", error=f"{self.spec.label}: batch request failed{shown}: {message}"
            )
        body = answer.response.model_dump(mode="json", by_alias=True, exclude_none=True)
        try:
            return BatchResult(key, "succeeded", gemini_completion(body, self.spec.model))
        except BadResponse as exc:
            return BatchResult(key, "bad", error=f"{where}: {exc}")
        except ProviderError as exc:  # a content filter stopped it: refused, never an answer
            return BatchResult(key, "errored", error=f"{self.spec.label}: {exc}")

    async def batch_errors(self, batch_id: str) -> str:
        job = await self._get(batch_id)
        err = getattr(job, "error", None)
        return scrub(str(getattr(err, "message", None) or f"batch {_state(job)}"), *self._secrets)[:300]
