"""Gemini's Batch API on the loopback server (a mixin of tests/support/llm_server.LLMServer), in the wire
format google-genai's `client.aio.batches` speaks (https://ai.google.dev/api/batch-mode):

- POST /v1beta/models/{model}:batchGenerateContent {"batch": {"displayName", "inputConfig": {"requests":
  {"requests": [{"request": GenerateContentRequest, "metadata": {...}}]}}}} -> an Operation named
  batches/{id} whose metadata is the GenerateContentBatch (model, displayName, state, createTime);
- GET /v1beta/batches/{id} -> the Operation; once ended, metadata.output.inlinedResponses.inlinedResponses
  holds one item per request, in order: {"response": GenerateContentResponse, "metadata"} or {"error":
  {"code", "message"}, "metadata"}; GET /v1beta/batches -> {"operations": [...]}; POST
  /v1beta/batches/{id}:cancel -> {}.
States BATCH_STATE_RUNNING -> SUCCEEDED (or CANCELLED). The key is checked as generateContent's is
(x-goog-api-key). The batch modes of batch_routes.py apply (batch_delay, batch_fail_match, batch_max);
counts: batches, gemini_batches, batch_requests, batch_polls, batch_cancels.
"""

from __future__ import annotations

import json
import re

from tests.support.batch_routes import _iso
from tests.support.cloud_routes import LOOP_GEMINI_KEY, gemini_error

GEMINI_BATCH = re.compile(
    r"^/v1(?:beta|alpha)?/(?:models/(?P<model>[^/:]+):batchGenerateContent"
    r"|batches(?:/(?P<id>[^/:]+))?(?::(?P<verb>cancel))?)$"
)
STATE = {"running": "BATCH_STATE_RUNNING", "cancelling": "BATCH_STATE_RUNNING"}


def gemini_batch_path(path: str) -> bool:
    return GEMINI_BATCH.match(path.split("?")[0].rstrip("/")) is not None


def gemini_prompt(request: dict) -> str:
    return "\n".join(
        str(p.get("text", ""))
        for c in (request.get("contents") or [])
        for p in (c.get("parts") or [])
        if isinstance(p, dict)
    )


class GeminiBatchRoutes:
    """Mixed into LLMServer (with BatchRoutes): the batch life of batch_routes.py, Gemini's wire format."""

    def _gemini_batch_route(self, method: str, path: str, raw: bytes, headers: dict) -> bytes:
        from tests.support.llm_server import _response

        if headers.get("x-goog-api-key") != LOOP_GEMINI_KEY:
            return gemini_error(400, "API key not valid. Please pass a valid API key.", "INVALID_ARGUMENT")
        found = GEMINI_BATCH.match(path.split("?")[0].rstrip("/"))
        assert found is not None
        model, bid, verb = found.group("model"), found.group("id"), found.group("verb")
        if model and method == "POST":
            return self._gemini_create(model, json.loads(raw or b"{}"))
        if bid is None and method == "GET":
            with self.lock:
                ops = [self._gemini_operation(b) for b in self.batches.values() if b["kind"] == "gemini"]
            return _response(200, {"operations": ops[::-1]})
        b = self.batches.get(bid or "")
        if b is None or b["kind"] != "gemini":
            return gemini_error(404, f"batch batches/{bid} not found", "NOT_FOUND")
        if verb == "cancel" and method == "POST":
            self._cancel(b)
            return _response(200, {})
        if verb is None and method == "GET":
            self.counts["batch_polls"] += 1
            return _response(200, self._gemini_operation(b))
        return gemini_error(404, f"no route {method} {path}", "NOT_FOUND")

    def _gemini_create(self, model: str, body: dict) -> bytes:
        from tests.support.llm_server import _response

        if (refused := self._over_limit()) is not None:
            return refused
        batch = body.get("batch") if isinstance(body.get("batch"), dict) else {}
        items = (((batch.get("inputConfig") or {}).get("requests") or {}).get("requests")) or []
        if not isinstance(items, list) or not items:
            return gemini_error(
                400, "batch.inputConfig.requests: a non-empty list is required", "INVALID_ARGUMENT"
            )
        if not all(isinstance(i, dict) and isinstance(i.get("request"), dict) for i in items):
            return gemini_error(400, "every inlined request needs a request object", "INVALID_ARGUMENT")
        if len(json.dumps(body)) > 20 * 1024 * 1024:
            return gemini_error(400, "inline requests must total under 20 MB", "INVALID_ARGUMENT")
        b = self._new_batch(
            "gemini",
            [(json.dumps(i.get("metadata") or {}), i["request"]) for i in items],
            model=f"models/{model}",
            display=str(batch.get("displayName") or ""),
        )
        return _response(200, self._gemini_operation(b))

    def _gemini_answer(self, request: dict, n: int) -> tuple[int, dict]:
        """(status, GenerateContentResponse or error) of one request inside a batch."""
        from components.providers.fake import approx_tokens, plausible_answer

        prompt = gemini_prompt(request)
        match = self.mode.get("batch_fail_match")
        if match and match in prompt:
            return 500, {"code": 500, "message": "simulated 500 in batch"}
        text = plausible_answer(prompt, self.mode.get("middle_loss") or 0.0)
        tin, tout = approx_tokens(prompt), approx_tokens(text)
        return 200, {
            "candidates": [{"content": {"parts": [{"text": text}], "role": "model"}, "finishReason": "STOP"}],
            "usageMetadata": {
                "promptTokenCount": tin,
                "candidatesTokenCount": tout,
                "totalTokenCount": tin + tout,
            },
            "modelVersion": "gemini-loopback",
            "responseId": f"batch-{n}",
        }

    def _gemini_operation(self, b: dict) -> dict:
        phase, _ = self._progress(b)
        ended = phase == "ended"
        state = STATE.get(phase, "BATCH_STATE_CANCELLED" if b["cancelled_at"] else "BATCH_STATE_SUCCEEDED")
        meta: dict = {
            "@type": "type.googleapis.com/google.ai.generativelanguage.v1beta.GenerateContentBatch",
            "name": f"batches/{b['id']}",
            "model": b["model"],
            "displayName": b["display"],
            "createTime": _iso(b["created"]),
            "updateTime": _iso(b["created"]),
            "state": state,
        }
        if ended:
            items = []
            for cid, outcome, _status, answer in self._run(b):
                metadata = json.loads(cid)
                if outcome == "succeeded":
                    items.append({"response": answer, "metadata": metadata})
                elif outcome == "errored":
                    items.append({"error": answer, "metadata": metadata})
            meta["output"] = {"inlinedResponses": {"inlinedResponses": items}}
            meta["endTime"] = _iso(b["cancelled_at"] or b["created"] + b["delay"])
        return {"name": f"batches/{b['id']}", "metadata": meta, "done": ended}
