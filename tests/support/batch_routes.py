"""The batch half of the loopback server (tests/support/llm_server.py): both providers' batch protocols,
in their real wire formats, so the openai and anthropic SDKs drive them unchanged.

OpenAI (Files + Batches; https://platform.openai.com/docs/api-reference/batch):
- POST /v1/files (multipart: file, purpose=batch) -> a File object; GET /v1/files/{id}/content -> bytes;
- POST /v1/batches {input_file_id, endpoint, completion_window, metadata} -> a Batch object;
  GET /v1/batches/{id}; POST /v1/batches/{id}/cancel; GET /v1/batches (list).
  Input lines: {"custom_id", "method": "POST", "url": "/v1/chat/completions", "body"}. Output lines:
  {"id", "custom_id", "response": {"status_code", "request_id", "body"}, "error": null}; lines whose
  request failed go to the error file (error_file_id) with their non-200 status and error body.
  status: validating -> in_progress -> completed (or cancelling -> cancelled); request_counts
  {total, completed, failed}. Limits: 50,000 requests and 200 MB per input file.
Anthropic (Message Batches; https://docs.anthropic.com/en/docs/build-with-claude/batch-processing):
- POST /v1/messages/batches {"requests": [{"custom_id", "params"}]} -> a MessageBatch;
  GET /v1/messages/batches/{id}; GET /v1/messages/batches/{id}/results (JSONL, at results_url once
  ended); POST /v1/messages/batches/{id}/cancel; GET /v1/messages/batches (list, newest first). processing_status in_progress | canceling | ended;
  request_counts {processing, succeeded, errored, canceled, expired}; result lines
  {"custom_id", "result": {"type": "succeeded", "message"} | {"type": "errored", "error": ErrorResponse}
  | {"type": "canceled"} | {"type": "expired"}}. Limits: 100,000 requests or 256 MB per batch.

Modes (LLMServer.set): batch_delay (seconds from creation until the batch has ended; request counts
grow linearly meanwhile), batch_fail_match (requests whose prompt contains it error inside the batch),
batch_bad (a result line that is not a usable answer, one of BAD_LINES) for the requests whose prompt
contains batch_bad_match (every request when it is None); batch_max (refuse to create more batches than
this, so that a client resubmitting in a loop ends: counts["batches_refused"]).
Counts: batches (every batch created), openai_batches, anthropic_batches, batch_requests (lines
submitted), files, batch_polls, batch_cancels, batch_results (result downloads).
"""

from __future__ import annotations

import datetime as dt
import json
import re
import time
import uuid

from components.providers.fake import approx_tokens, plausible_answer

OPENAI_MAX_REQUESTS, OPENAI_MAX_BYTES = 50_000, 200 * 1024 * 1024
ANTHROPIC_MAX_REQUESTS, ANTHROPIC_MAX_BYTES = 100_000, 256 * 1024 * 1024
# result lines a misbehaving provider may write (batch_bad): each must become that request's error
BAD_LINES = (
    "unknown_id",
    "malformed",
    "non_object",
    "choices_zz",
    "huge_usage",
    "inf_usage",
    "null_content",
    "empty_choices",
    "text_int",
    "empty_text",
    "blank_text",
)
_REASONS = {
    200: "OK",
    400: "Bad Request",
    404: "Not Found",
    413: "Payload Too Large",
    500: "Internal Server Error",
}


def _is_batch_path(path: str) -> bool:
    path = path.split("?")[0]
    return (
        path.startswith("/v1/files")
        or path.startswith("/v1/batches")
        or path.startswith("/v1/messages/batches")
    )


def _raw(status: int, data: bytes, content_type: str = "application/json") -> bytes:
    head = [
        f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}",
        f"Content-Type: {content_type}",
        f"Content-Length: {len(data)}",
    ]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + data


def _json(status: int, payload: dict) -> bytes:
    return _raw(status, json.dumps(payload).encode())


def _error(status: int, message: str, kind: str = "invalid_request_error") -> bytes:
    return _json(status, {"type": "error", "error": {"type": kind, "message": message}})


def _multipart(raw: bytes) -> dict[str, bytes]:
    """The fields of a multipart/form-data body (the boundary is its first line)."""
    boundary = raw.split(b"\r\n", 1)[0]
    out: dict[str, bytes] = {}
    for part in raw.split(boundary)[1:]:
        if part.startswith(b"--"):
            break
        head, _, data = part.partition(b"\r\n\r\n")
        name = re.search(rb'name="([^"]*)"', head)
        if name:
            out[name.group(1).decode()] = data[:-2] if data.endswith(b"\r\n") else data
    return out


def _spoil(kind: str, provider: str, line: dict) -> str:
    """One result line (OpenAI output line or Anthropic result line, as a dict) spoiled as `kind`."""
    if kind == "malformed":
        return json.dumps(line)[:40]
    if kind == "non_object":
        return "[1, 2, 3]"
    if kind == "unknown_id":
        return json.dumps({**line, "custom_id": "f" * 64})
    if provider == "openai":
        body = line["response"]["body"]
        choice, usage = body["choices"][0], body["usage"]
    else:
        body = line["result"]["message"]
        choice, usage = None, body["usage"]
    counts = (
        ("prompt_tokens", "completion_tokens") if provider == "openai" else ("input_tokens", "output_tokens")
    )
    if kind == "choices_zz":
        body["choices" if provider == "openai" else "content"] = "zz"
    elif kind == "huge_usage":
        usage[counts[0]] = 10**30
    elif kind == "inf_usage":
        usage[counts[1]] = float("inf")  # json.dumps writes Infinity, which Python's json reads back
    elif kind == "null_content":
        if provider == "openai":
            choice["message"]["content"] = None
        else:
            body["content"] = None
    elif kind == "empty_choices":
        body["choices" if provider == "openai" else "content"] = []
    elif kind == "text_int":
        if provider == "openai":
            choice["message"]["content"] = 5
        else:
            body["content"] = [{"type": "text", "text": 5}]
    elif kind in ("empty_text", "blank_text"):  # an answer with no text: "" or only whitespace
        text = "" if kind == "empty_text" else " \n "
        if provider == "openai":
            choice["message"]["content"] = text
        else:
            body["content"] = [{"type": "text", "text": text}]
    else:
        raise ValueError(f"unknown batch_bad {kind!r}")
    return json.dumps(line)


def _iso(t: float | None) -> str | None:
    return None if t is None else dt.datetime.fromtimestamp(t, dt.UTC).isoformat().replace("+00:00", "Z")


def _prompt(messages: list) -> str:
    def text(content) -> str:
        if isinstance(content, list):
            return "\n".join(str(c.get("text", "")) for c in content if isinstance(c, dict))
        return str(content or "")

    return "\n".join(text(m.get("content")) for m in messages or [])


class BatchRoutes:
    """Mixed into LLMServer: self.lock, self.mode, self.counts, self.files, self.batches, self.url."""

    # routing ------------------------------------------------------------------------------------
    def _batch_route(self, method: str, path: str, raw: bytes) -> bytes:
        path = path.split("?")[0].rstrip("/")
        parts = path.split("/")[2:]  # after /v1
        try:
            if parts[0] == "files":
                if method == "POST" and len(parts) == 1:
                    return self._file_upload(raw)
                if method == "GET" and len(parts) == 3 and parts[2] == "content":
                    return self._file_content(parts[1])
                if method == "GET" and len(parts) == 2:
                    f = self.files.get(parts[1])
                    return _json(200, f["object"]) if f else _error(404, f"no file {parts[1]}")
            elif parts[0] == "batches":
                if method == "POST" and len(parts) == 1:
                    return self._openai_create(json.loads(raw or b"{}"))
                if method == "GET" and len(parts) == 1:
                    with self.lock:
                        data = [
                            self._openai_object(b) for b in self.batches.values() if b["kind"] == "openai"
                        ]
                    return _json(200, {"object": "list", "data": data[::-1], "has_more": False})
                if (
                    len(parts) >= 2
                    and parts[1] in self.batches
                    and self.batches[parts[1]]["kind"] == "openai"
                ):
                    b = self.batches[parts[1]]
                    if method == "POST" and parts[2:] == ["cancel"]:
                        self._cancel(b)
                    elif method != "GET" or len(parts) != 2:
                        return _error(404, f"no route {method} {path}")
                    self.counts["batch_polls"] += method == "GET"
                    return _json(200, self._openai_object(b))
                return _error(404, f"no batch {parts[1] if len(parts) > 1 else ''}")
            elif parts[:2] == ["messages", "batches"]:
                rest = parts[2:]
                if method == "POST" and not rest:
                    return self._anthropic_create(json.loads(raw or b"{}"))
                if method == "GET" and not rest:
                    with self.lock:
                        data = [
                            self._anthropic_object(b)
                            for b in self.batches.values()
                            if b["kind"] == "anthropic"
                        ]
                    data = data[::-1]  # newest first
                    return _json(
                        200,
                        {
                            "data": data,
                            "has_more": False,
                            "first_id": data[0]["id"] if data else None,
                            "last_id": data[-1]["id"] if data else None,
                        },
                    )
                if rest and rest[0] in self.batches and self.batches[rest[0]]["kind"] == "anthropic":
                    b = self.batches[rest[0]]
                    if method == "POST" and rest[1:] == ["cancel"]:
                        self._cancel(b)
                        return _json(200, self._anthropic_object(b))
                    if method == "GET" and len(rest) == 1:
                        self.counts["batch_polls"] += 1
                        return _json(200, self._anthropic_object(b))
                    if method == "GET" and rest[1:] == ["results"]:
                        return self._anthropic_results(b)
                return _error(404, f"no message batch {rest[0] if rest else ''}", "not_found_error")
        except (ValueError, KeyError, TypeError) as exc:
            return _error(400, f"bad request: {exc}")
        return _error(404, f"no route {method} {path}")

    # answering one request ------------------------------------------------------------------------
    def _answer(self, kind: str, body: dict, n: int) -> tuple[int, dict]:
        """(status, response body) of one request inside a batch, like the live routes answer it."""
        if kind == "gemini":  # tests/support/gemini_batch_routes.py
            return self._gemini_answer(body, n)
        prompt = _prompt(body.get("messages"))
        match = self.mode.get("batch_fail_match")
        if match and match in prompt:
            return 500, {"type": "error", "error": {"type": "api_error", "message": "simulated 500 in batch"}}
        text = plausible_answer(prompt, self.mode.get("middle_loss") or 0.0)
        tin, tout = approx_tokens(prompt), approx_tokens(text)
        model = body.get("model", "loopback")
        caching, capacity = self.mode.get("prompt_cache"), self.mode.get("cache_capacity") or 64
        if kind == "openai":
            usage = {"prompt_tokens": tin, "completion_tokens": tout, "total_tokens": tin + tout}
            if caching:  # the live routes' prefix cache (llm_server.py), shared with them
                usage["prompt_tokens_details"] = {"cached_tokens": self._openai_cached(prompt, tin, capacity)}
            return 200, {
                "id": f"chatcmpl-b{n}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
                ],
                "usage": usage,
            }
        usage = {"input_tokens": tin, "output_tokens": tout}
        if caching:
            read, written = self._anthropic_cached(body.get("messages", []), capacity)
            usage = {
                "input_tokens": tin - read - written,
                "output_tokens": tout,
                "cache_read_input_tokens": read,
                "cache_creation_input_tokens": written,
            }
        return 200, {
            "id": f"msg_b{n}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": usage,
        }

    def _line(self, b: dict, i: int, line: dict, answered: bool) -> str:
        """A result line as JSON text: spoiled (batch_bad) when the request's prompt matches batch_bad_match."""
        kind, match = self.mode.get("batch_bad"), self.mode.get("batch_bad_match")
        if not kind or not answered or (match and match not in _prompt(b["requests"][i][1].get("messages"))):
            return json.dumps(line)
        return _spoil(kind, b["kind"], json.loads(json.dumps(line)))  # a copy: the results are kept

    # batch life ------------------------------------------------------------------------------------
    def _new_batch(self, kind: str, requests: list[tuple[str, dict]], **extra) -> dict:
        with self.lock:
            prefix = {"openai": "batch_", "anthropic": "msgbatch_", "gemini": "lb"}[kind]
            bid = f"{prefix}{uuid.uuid4().hex[:24]}"
            b = {
                "id": bid,
                "kind": kind,
                "created": time.time(),
                "delay": float(self.mode.get("batch_delay") or 0),
                "requests": requests,
                "cancelled_at": None,
                "results": None,
                **extra,
            }
            self.batches[bid] = b
            self.counts["batches"] += 1
            self.counts[f"{kind}_batches"] += 1
            self.counts["batch_requests"] += len(requests)
        return b

    def _progress(self, b: dict) -> tuple[str, int]:
        """(phase, requests processed): running | cancelling | ended."""
        total = len(b["requests"])
        now = time.time()
        ends = b["created"] + b["delay"]
        if b["cancelled_at"] is not None and b["cancelled_at"] < ends:
            done_at_cancel = (
                total if not b["delay"] else int(total * (b["cancelled_at"] - b["created"]) / b["delay"])
            )
            if now - b["cancelled_at"] < 0.05:
                return "cancelling", done_at_cancel
            return "ended", done_at_cancel
        if now >= ends:
            return "ended", total
        return "running", int(total * (now - b["created"]) / b["delay"])

    def _run(self, b: dict) -> list[tuple[str, str, int, dict | None]]:
        """Every request's (custom_id, outcome, status, body), computed once when the batch has ended:
        outcome succeeded | errored | canceled."""
        if b["results"] is None:
            _, processed = self._progress(b)
            out = []
            for i, (cid, body) in enumerate(b["requests"]):
                if i >= processed:
                    out.append((cid, "canceled", 0, None))
                    continue
                status, answer = self._answer(b["kind"], body, i)
                out.append((cid, "succeeded" if status == 200 else "errored", status, answer))
            b["results"] = out
        return b["results"]

    def _counts(self, b: dict) -> dict:
        phase, processed = self._progress(b)
        if phase == "ended":
            res = self._run(b)
            return {k: sum(1 for r in res if r[1] == k) for k in ("succeeded", "errored", "canceled")} | {
                "processing": 0
            }
        return {
            "succeeded": processed,
            "errored": 0,
            "canceled": 0,
            "processing": len(b["requests"]) - processed,
        }

    def _cancel(self, b: dict) -> None:
        with self.lock:
            self.counts["batch_cancels"] += 1
            if b["cancelled_at"] is None and self._progress(b)[0] == "running":
                b["cancelled_at"] = time.time()

    # OpenAI -------------------------------------------------------------------------------------------
    def _file_upload(self, raw: bytes) -> bytes:
        fields = _multipart(raw)
        if fields.get("purpose", b"").decode() != "batch" or "file" not in fields:
            return _error(400, "upload a file with purpose=batch")
        data = fields["file"]
        if len(data) > OPENAI_MAX_BYTES:
            return _error(413, "a batch input file can be up to 200 MB")
        f = self._store_file(data, "batch", "batch_input.jsonl")
        self.counts["files"] += 1
        return _json(200, f["object"])

    def _store_file(self, data: bytes, purpose: str, name: str) -> dict:
        fid = f"file-{uuid.uuid4().hex[:24]}"
        obj = {
            "id": fid,
            "object": "file",
            "bytes": len(data),
            "created_at": int(time.time()),
            "filename": name,
            "purpose": purpose,
            "status": "processed",
            "expires_at": None,
            "status_details": None,
        }
        self.files[fid] = {"object": obj, "data": data}
        return self.files[fid]

    def _file_content(self, fid: str) -> bytes:
        f = self.files.get(fid)
        if f is None:
            return _error(404, f"no file {fid}")
        self.counts["batch_results"] += f["object"]["purpose"] == "batch_output"
        return _raw(200, f["data"], "application/octet-stream")

    def _over_limit(self) -> bytes | None:
        """batch_max: a test's guard against a client that submits again and again (refused beyond it)."""
        limit = self.mode.get("batch_max")
        if limit is not None and self.counts["batches"] >= limit:
            self.counts["batches_refused"] += 1
            return _error(400, f"simulated limit: at most {limit} batches")
        return None

    def _openai_create(self, body: dict) -> bytes:
        if (refused := self._over_limit()) is not None:
            return refused
        f = self.files.get(body.get("input_file_id", ""))
        if f is None:
            return _error(400, f"no file {body.get('input_file_id')!r}")
        if body.get("endpoint") != "/v1/chat/completions" or body.get("completion_window") != "24h":
            return _error(400, "endpoint must be /v1/chat/completions and completion_window 24h")
        requests = []
        for i, line in enumerate(f["data"].decode("utf-8").splitlines()):
            if line.strip():
                r = json.loads(line)
                if r.get("method") != "POST" or r.get("url") != body["endpoint"] or "custom_id" not in r:
                    return _error(
                        400, f"line {i + 1}: needs custom_id, method POST and url {body['endpoint']}"
                    )
                requests.append((r["custom_id"], r["body"]))
        if len(requests) > OPENAI_MAX_REQUESTS:
            return _error(400, "a batch can hold up to 50,000 requests")
        if len({c for c, _ in requests}) != len(requests):
            return _error(400, "custom_id values must be unique within a batch")
        b = self._new_batch(
            "openai", requests, input_file_id=f["object"]["id"], metadata=body.get("metadata")
        )
        return _json(200, self._openai_object(b))

    def _openai_object(self, b: dict) -> dict:
        phase, _ = self._progress(b)
        counts = self._counts(b)
        created = int(b["created"])
        out = {
            "id": b["id"],
            "object": "batch",
            "endpoint": "/v1/chat/completions",
            "errors": None,
            "input_file_id": b["input_file_id"],
            "completion_window": "24h",
            "status": "in_progress",
            "output_file_id": None,
            "error_file_id": None,
            "created_at": created,
            "in_progress_at": created,
            "expires_at": created + 86_400,
            "finalizing_at": None,
            "completed_at": None,
            "failed_at": None,
            "expired_at": None,
            "cancelling_at": None,
            "cancelled_at": None,
            "metadata": b.get("metadata"),
            "request_counts": {
                "total": len(b["requests"]),
                "completed": counts["succeeded"],
                "failed": counts["errored"],
            },
        }
        if b["cancelled_at"] is not None:
            out["cancelling_at"] = int(b["cancelled_at"])
        if phase == "cancelling":
            out["status"] = "cancelling"
        elif phase == "ended":
            self._openai_files(b)
            ended = int(b["cancelled_at"] or b["created"] + b["delay"])
            if b["cancelled_at"] is not None:
                out.update(status="cancelled", cancelled_at=ended)
            else:
                out.update(status="completed", finalizing_at=ended, completed_at=ended)
            out.update(output_file_id=b.get("output_file_id"), error_file_id=b.get("error_file_id"))
        return out

    def _openai_files(self, b: dict) -> None:
        """The output file (requests answered 200) and the error file (the others), made once."""
        if "output_file_id" in b:
            return
        ok, bad = [], []
        for i, (cid, outcome, status, body) in enumerate(self._run(b)):
            if outcome == "canceled":
                continue
            line = {
                "id": f"batch_req_{b['id'][6:]}_{i}",
                "custom_id": cid,
                "response": {"status_code": status, "request_id": f"req_{i}", "body": body},
                "error": None,
            }
            (ok if status == 200 else bad).append(self._line(b, i, line, status == 200))
        with self.lock:
            b["output_file_id"] = (
                self._store_file("\n".join(ok).encode() + b"\n", "batch_output", "out.jsonl")["object"]["id"]
                if ok
                else None
            )
            b["error_file_id"] = (
                self._store_file("\n".join(bad).encode() + b"\n", "batch_output", "err.jsonl")["object"]["id"]
                if bad
                else None
            )

    # Anthropic ----------------------------------------------------------------------------------------
    def _anthropic_create(self, body: dict) -> bytes:
        if (refused := self._over_limit()) is not None:
            return refused
        reqs = body.get("requests")
        if not isinstance(reqs, list) or not reqs:
            return _error(400, "requests: a non-empty list is required")
        if len(reqs) > ANTHROPIC_MAX_REQUESTS:
            return _error(400, "a message batch can hold up to 100,000 requests")
        ids = [r.get("custom_id", "") for r in reqs]
        if len(set(ids)) != len(ids) or not all(re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", c) for c in ids):
            return _error(400, "custom_id must be unique, 1-64 characters of a-z A-Z 0-9 _ -")
        if not all(isinstance(r.get("params"), dict) and r["params"].get("max_tokens") for r in reqs):
            return _error(400, "every request needs params with max_tokens")
        b = self._new_batch("anthropic", [(r["custom_id"], r["params"]) for r in reqs])
        return _json(200, self._anthropic_object(b))

    def _anthropic_object(self, b: dict) -> dict:
        phase, _ = self._progress(b)
        counts = self._counts(b)
        ended = phase == "ended"
        end_t = b["cancelled_at"] or b["created"] + b["delay"]
        return {
            "id": b["id"],
            "type": "message_batch",
            "processing_status": {"running": "in_progress", "cancelling": "canceling"}.get(phase, "ended"),
            "request_counts": {**counts, "expired": 0},
            "created_at": _iso(b["created"]),
            "expires_at": _iso(b["created"] + 86_400),
            "ended_at": _iso(end_t) if ended else None,
            "archived_at": None,
            "cancel_initiated_at": _iso(b["cancelled_at"]),
            "results_url": f"{self.url}/v1/messages/batches/{b['id']}/results" if ended else None,
        }

    def _anthropic_results(self, b: dict) -> bytes:
        if self._progress(b)[0] != "ended":
            return _error(400, f"message batch {b['id']} has not ended yet")
        self.counts["batch_results"] += 1
        lines = []
        for i, (cid, outcome, _status, body) in enumerate(self._run(b)):
            if outcome == "succeeded":
                result = {"type": "succeeded", "message": body}
            elif outcome == "errored":
                result = {"type": "errored", "error": body}
            else:
                result = {"type": "canceled"}
            lines.append(self._line(b, i, {"custom_id": cid, "result": result}, outcome == "succeeded"))
        return _raw(200, ("\n".join(lines) + "\n").encode(), "application/binary")
