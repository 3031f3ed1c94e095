"""A real loopback HTTP server speaking the OpenAI chat-completions and Anthropic messages formats.

    server = LLMServer().start()      # in-process, on a free port
    server.openai_url                 # http://127.0.0.1:P/v1   (AsyncOpenAI base_url)
    server.anthropic_url              # http://127.0.0.1:P      (AsyncAnthropic base_url)
    server.set(delay=0.2)             # or status=429, retry_after=1, fail_times=1, hang=True, ...
    server.set(malformed="html")      # 200 answers that are no completion (see MALFORMED)
    server.set(misbehave="trickle")   # answers no HTTP client should take as they are (see MISBEHAVE)
    server.counts["chat"], server.counts["messages"], server.bodies
    server.counts["batches"]          # batches created (OpenAI and Anthropic): tests/support/batch_routes.py
    server.counts["peak"]             # the most completion requests it was answering at once

or as a process: `python -m tests.support.llm_server --port P [--delay 0.1]`, driven by
POST /admin/mode (JSON of the same settings), GET /admin/counts, POST /admin/reset.

Answers come from components.providers.fake.plausible_answer: deterministic and meaningful.

Prompt caching (server.set(prompt_cache=True)), reported the way each provider reports it, with tokens
counted as approx_tokens does (4 characters a token):
- OpenAI (chat): automatic, for prompts of 1,024 tokens or more: usage.prompt_tokens_details.cached_tokens
  is the longest prefix of this prompt seen in an earlier one, in steps of 128 tokens from 1,024 on
  (OpenAI's prompt-caching guide); part of prompt_tokens.
- Anthropic (messages): only where the request marks a block with cache_control: the prefix through
  that block is looked up at each block boundary up to 20 blocks before it; the longest found is
  cache_read_input_tokens; the marked prefix, when not yet cached and at least 1,024 tokens long, is
  written (cache_creation_input_tokens, the tokens past what was read); input_tokens is the rest.
A real cache forgets within minutes; this one keeps the prefixes of the last `cache_capacity` prompts
(least recently used out first), so, as in a long sweep, the order of the trials decides what is cached.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import socket
import threading
import time
from collections import Counter, OrderedDict, deque

from components.providers.fake import approx_tokens, plausible_answer
from tests.support.batch_routes import BatchRoutes, _is_batch_path
from tests.support.cloud_routes import CloudRoutes, cloud_route, refusal
from tests.support.gemini_batch_routes import GeminiBatchRoutes, gemini_batch_path

DEFAULTS = {
    "delay": 0.0,  # seconds before answering
    "status": None,  # answer every request with this error status (429, 500, 400...)
    "retry_after": None,  # Retry-After header (seconds) on error answers
    "fail_times": None,  # only the first N requests get `status`; then answers again
    "fail_match": None,  # requests whose prompt contains this text get status 500
    "hang": False,  # never answer (until the client gives up)
    "middle_loss": 0.0,  # see plausible_answer: simulate lost-in-the-middle misses
    "malformed": None,  # a 200 answer that is no completion: MALFORMED
    "misbehave": None,  # an answer broken on the wire or absurd in size: MISBEHAVE (fail_times limits it too)
    "trickle_every": 2.0,  # misbehave = "trickle": seconds between the bytes of its body
    "redirect_to": None,  # misbehave = "redirect_other": the origin (http://host:port) it redirects to
    "no_template": False,  # no POST /apply-template (404), as vLLM and most servers but llama.cpp's
    # batch APIs (OpenAI Files + Batches, Anthropic Message Batches): see the batch section below
    "batch_delay": 0.0,  # seconds from a batch's creation until it has ended
    "batch_fail_match": None,  # requests inside a batch whose prompt contains this text fail (500)
    "batch_bad": None,  # result lines that are no usable answer: batch_routes.BAD_LINES
    "batch_bad_match": None,  # only for the requests whose prompt contains this text (None: every request)
    "batch_max": None,  # refuse to create more batches than this (a guard against resubmitting in a loop)
    # prompt caching, as each provider reports it (see the module docstring)
    "prompt_cache": False,
    "cache_capacity": 64,  # prompts whose prefixes the cache keeps (least recently used out first)
}
CACHE_MIN_TOKENS = 1024  # OpenAI caches prompts from 1,024 tokens; Anthropic's smallest cacheable prefix
CACHE_STEP_TOKENS = 128  # OpenAI's cache hits grow in steps of 128 tokens
ANTHROPIC_LOOKBACK = 20  # block boundaries Anthropic checks before a cache_control breakpoint
CHUNK = 1024 * 1024  # bytes of an answer written at a time
# empty_text / blank_text: a completion whose text is "" / only whitespace; length_empty: "" stopped by
# max_tokens (finish_reason "length", Anthropic stop_reason "max_tokens"); refused: an answer the provider cut
# off itself, part of a reply and finish_reason "content_filter" (Anthropic: stop_reason "refusal")
MALFORMED = (
    "truncated",
    "html",
    "empty_choices",
    "null_content",
    "deep",
    "inf_usage",
    "huge_usage",
    "text_int",
    "choices_zz",
    "empty_text",
    "blank_text",
    "length_empty",
    "refused",
)
# gzip_garbage: Content-Encoding gzip over bytes that are not gzip; reset: the connection reset after 10
# bytes of a 1,000-byte body; redirect_file: a 302 to file:///etc/passwd; trickle: one byte of the body
# every trickle_every seconds; huge: a well-formed completion whose text is 50 MB; bomb: a gzip body that
# unpacks to 1 GB (1 MB on the wire); redirect_other: a 307 to the same path on `redirect_to` (another
# origin); redirect_loop: a 307 to the same path on this server, for ever
MISBEHAVE = (
    "gzip_garbage",
    "reset",
    "redirect_file",
    "trickle",
    "huge",
    "bomb",
    "redirect_other",
    "redirect_loop",
)


REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    429: "Too Many Requests",
    500: "Internal Server Error",
    503: "Service Unavailable",
}


def _response(status: int, payload: dict, headers: dict | None = None) -> bytes:
    data = json.dumps(payload).encode()
    head = [
        f"HTTP/1.1 {status} {REASONS.get(status, 'Error')}",
        "Content-Type: application/json",
        f"Content-Length: {len(data)}",
    ] + [f"{k}: {v}" for k, v in (headers or {}).items()]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + data


def _malformed(kind: str, route: str, model: str) -> bytes:
    """A 200 answer that is not a usable completion (fail_times limits it to the first N requests)."""
    if kind == "deep":  # 200,000 nested arrays: Python's json gives up (RecursionError)
        data = b'{"choices": ' + b"[" * 200_000 + b"]" * 200_000 + b"}"
        return (
            f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n".encode()
            + data
        )
    if kind in ("inf_usage", "huge_usage", "text_int", "choices_zz"):
        return _spoiled(kind, route, model)
    if kind in ("empty_text", "blank_text", "length_empty", "refused"):
        return _textless(kind, route, model)
    if kind == "truncated":
        data = b'{"id": "chatcmpl-x", "object": "chat.completion", "choices": [{"index": 0, "mess'
        return (
            f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n".encode()
            + data
        )
    if kind == "html":
        data = b"<html><body><h1>Welcome to nginx!</h1></body></html>"
        return (
            f"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {len(data)}\r\n\r\n".encode()
            + data
        )
    usage = {"prompt_tokens": 1, "completion_tokens": 0, "total_tokens": 1}
    if route == "messages":
        content = [] if kind == "empty_choices" else [{"type": "text", "text": None}]
        return _response(
            200,
            {
                "id": "msg_x",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": content,
                "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": 1, "output_tokens": 0},
            },
        )
    choices = (
        []
        if kind == "empty_choices"
        else [{"index": 0, "message": {"role": "assistant", "content": None}, "finish_reason": "stop"}]
    )
    return _response(
        200,
        {
            "id": "chatcmpl-x",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": choices,
            "usage": usage,
        },
    )


def _textless(kind: str, route: str, model: str) -> bytes:
    """A well-formed completion whose text is empty or only whitespace, or stopped by the provider."""
    text = {"blank_text": " \n\t ", "refused": "Answer: Quent"}.get(kind, "")
    stops = {"length_empty": ("max_tokens", "length"), "refused": ("refusal", "content_filter")}
    stop, finish = stops.get(kind, ("end_turn", "stop"))
    if route == "messages":
        return _response(
            200,
            {
                "id": "msg_x",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [{"type": "text", "text": text}],
                "stop_sequence": None,
                "stop_reason": stop,
                "usage": {"input_tokens": 3, "output_tokens": 0},
            },
        )
    return _response(
        200,
        {
            "id": "chatcmpl-x",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": finish,
                }
            ],
            "usage": {"prompt_tokens": 3, "completion_tokens": 0, "total_tokens": 3},
        },
    )


def _spoiled(kind: str, route: str, model: str) -> bytes:
    """A completion with one absurd or mistyped field (Infinity is written as JSON's non-standard Infinity,
    which Python's json and many servers' encoders produce)."""
    count = float("inf") if kind == "inf_usage" else 10**30 if kind == "huge_usage" else 3
    if route == "messages":
        body = {
            "id": "msg_x",
            "type": "message",
            "role": "assistant",
            "model": model,
            "stop_reason": "end_turn",
            "content": "zz"
            if kind == "choices_zz"
            else [{"type": "text", "text": 5 if kind == "text_int" else "ok"}],
            "stop_sequence": None,
            "usage": {"input_tokens": 3, "output_tokens": count},
        }
    else:
        message = {"role": "assistant", "content": 5 if kind == "text_int" else "ok"}
        body = {
            "id": "chatcmpl-x",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": "zz"
            if kind == "choices_zz"
            else [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 3, "completion_tokens": count, "total_tokens": 3},
        }
    return _response(200, body)


def _misbehaving(kind: str, route: str, model: str, path: str = "/", redirect_to: str | None = None):
    """The answer of misbehave = kind: bytes, or (bytes to send first, what to do next) for the connection."""
    if kind in ("redirect_other", "redirect_loop"):  # 307: the client sends the same POST (body) again there
        where = (redirect_to or "http://127.0.0.1:9").rstrip("/") + path if kind == "redirect_other" else path
        return f"HTTP/1.1 307 Temporary Redirect\r\nLocation: {where}\r\nContent-Length: 0\r\n\r\n".encode()
    if kind == "gzip_garbage":
        data = b"\x1f\x8b\x08\x00" + bytes(range(256)) * 4  # a gzip header, then garbage
        return (
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\n"
            + f"Content-Length: {len(data)}\r\n\r\n".encode()
            + data
        )
    if kind == "redirect_file":
        return b"HTTP/1.1 302 Found\r\nLocation: file:///etc/passwd\r\nContent-Length: 0\r\n\r\n"
    if kind == "reset":
        return (
            b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"id": "ch',
            "reset",
        )
    if kind == "trickle":
        return (
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n",
            "trickle",
        )
    if kind == "huge":
        if (route, model) not in _HUGE:  # made once: 32 requests at once must not make 32 copies here
            _HUGE.clear()
            _HUGE[(route, model)] = _huge(route, model)
        return _HUGE[(route, model)]
    if kind == "bomb":
        data = _bomb()
        return (
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\n"
            + f"Content-Length: {len(data)}\r\n\r\n".encode()
            + data
        )
    raise ValueError(f"unknown misbehave {kind!r}")


_HUGE: dict[tuple[str, str], bytes] = {}


def _huge(route: str, model: str) -> bytes:
    """A well-formed completion whose text is 50 MB."""
    text = "x" * (50 * 1024 * 1024)
    if route == "messages":
        return _response(
            200,
            {
                "id": "msg_x",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [{"type": "text", "text": text}],
                "stop_reason": "end_turn",
                "usage": {"input_tokens": 3, "output_tokens": 3},
            },
        )
    return _response(
        200,
        {
            "id": "chatcmpl-x",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
            ],
            "usage": {"prompt_tokens": 3},
        },
    )


_BOMB: list[bytes] = []


def _bomb() -> bytes:
    """A gzip body (about 1 MB) that unpacks to a 1 GB completion, made once: one compressed 1 MB block,
    full-flushed (so it stands alone) and repeated, between a gzip header and a trailer computed for it."""
    if not _BOMB:
        import struct
        import zlib

        head, block, tail = b'{"choices": [{"message": {"content": "', b"x" * (1024 * 1024), b'"}}]}'
        z = zlib.compressobj(9, zlib.DEFLATED, -15)
        first = z.compress(head) + z.flush(zlib.Z_FULL_FLUSH)
        seg = z.compress(block) + z.flush(zlib.Z_FULL_FLUSH)
        last = z.compress(tail) + z.flush()
        crc = zlib.crc32(head)
        for _ in range(1024):
            crc = zlib.crc32(block, crc)
        crc = zlib.crc32(tail, crc)
        size = len(head) + 1024 * len(block) + len(tail)
        _BOMB.append(
            b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
            + first
            + seg * 1024
            + last
            + struct.pack("<II", crc, size & 0xFFFFFFFF)
        )
    return _BOMB[0]


def _content_text(content) -> str:
    """A message's text; text blocks joined as they are (a prompt cut into blocks for caching is whole)."""
    if isinstance(content, list):
        return "".join(str(c.get("text", "")) for c in content if isinstance(c, dict))
    return str(content or "")


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()


def _token_chars(tokens: int) -> int:
    return 4 * tokens  # approx_tokens: 4 characters a token


def chatml(messages: list[dict]) -> str:
    """The chat template this server 'applies' (POST /apply-template, as the llama.cpp server has)."""
    return (
        "".join(
            f"<|im_start|>{m.get('role')}\n{_content_text(m.get('content'))}<|im_end|>\n" for m in messages
        )
        + "<|im_start|>assistant\n"
    )


def _tokens(text: str) -> list[str]:
    """This server's tokens: runs of word characters, and every other character alone."""
    import re

    return re.findall(r"\w+|\W", text)


def _echo_logprobs(body: dict, n: int) -> bytes:
    """POST /v1/completions (legacy): with echo and logprobs, every prompt token with a deterministic
    fake log-probability (components.providers.likelihood.fake_logprob), then one generated token."""
    from components.providers.likelihood import fake_logprob

    prompt = body.get("prompt", "")
    prompt = prompt if isinstance(prompt, str) else "".join(map(str, prompt))
    toks = _tokens(prompt) + [" ok"] if body.get("max_tokens", 16) else _tokens(prompt)
    offsets, at, logprobs = [], 0, []
    for i, t in enumerate(toks):
        offsets.append(at)
        logprobs.append(None if i == 0 else fake_logprob(t, "".join(toks[:i])))
        at += len(t)
    if not body.get("echo"):
        offsets, logprobs, toks = offsets[-1:], logprobs[-1:], toks[-1:]
    text = "".join(toks)
    block = (
        {"tokens": toks, "token_logprobs": logprobs, "text_offset": offsets, "top_logprobs": None}
        if body.get("logprobs") is not None
        else None
    )
    return _response(
        200,
        {
            "id": f"cmpl-{n}",
            "object": "text_completion",
            "created": int(time.time()),
            "model": body.get("model", "loopback"),
            "choices": [{"index": 0, "text": text, "logprobs": block, "finish_reason": "length"}],
            "usage": {
                "prompt_tokens": len(_tokens(prompt)),
                "completion_tokens": 1,
                "total_tokens": len(_tokens(prompt)) + 1,
            },
        },
    )


class LLMServer(BatchRoutes, CloudRoutes, GeminiBatchRoutes):
    """An asyncio HTTP/1.1 server (keep-alive) in its own thread: no thread per connection, so it
    keeps up with a client at high concurrency on a small machine."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, **mode):
        self.lock = threading.Lock()
        self.host = host
        self.reset()
        self.set(**mode)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((host, port))
        self.sock.listen(512)
        self.port = self.sock.getsockname()[1]
        self.loop: asyncio.AbstractEventLoop | None = None
        self.thread: threading.Thread | None = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()

    def reset(self) -> None:
        with self.lock:
            self.files: dict[str, dict] = {}  # batch input/output files (OpenAI Files API)
            self.batches: dict[str, dict] = {}  # OpenAI batches and Anthropic message batches
            self.counts: Counter = Counter()
            self.open = 0  # completion requests being answered right now (counts["peak"]: the most)
            self.bodies: list[str] = []  # sha256 of each request body, in arrival order
            self.raw_bodies: list[bytes] = []
            self.cloud_requests: list[dict] = []  # Gemini, Bedrock and Vertex requests (cloud_routes.py)
            self.queries: list[str] = []  # the query string of each completion request ("" for none)
            self.mode = dict(DEFAULTS)
            self._seen: deque = deque()  # OpenAI: the prefix digests of each remembered prompt
            self._seen_count: Counter = Counter()
            self._marked: OrderedDict = OrderedDict()  # Anthropic: digest of a written prefix -> its tokens

    def set(self, **mode) -> LLMServer:
        unknown = set(mode) - set(DEFAULTS)
        if unknown:
            raise ValueError(f"unknown server mode {sorted(unknown)}")
        with self.lock:
            self.mode.update(mode)
        return self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_url(self) -> str:
        return self.url + "/v1"

    @property
    def anthropic_url(self) -> str:
        return self.url

    # serving --------------------------------------------------------------------------------
    async def _serve(self) -> None:
        self._stop = asyncio.Event()
        server = await asyncio.start_server(self._connection, sock=self.sock, backlog=512)
        self._ready.set()
        async with server:
            await self._stop.wait()

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            first = await reader.readexactly(1)
            if first == b"\x16":  # a TLS handshake (an https client): answered as a plain-http server does
                writer.write(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                await writer.drain()
                return
            while True:
                head = first + await reader.readuntil(b"\r\n\r\n")
                first = b""
                lines = head.decode("latin-1").split("\r\n")
                method, path = lines[0].split(" ")[:2]
                headers = {
                    k.strip().lower(): v.strip() for k, _, v in (x.partition(":") for x in lines[1:] if x)
                }
                raw = await reader.readexactly(int(headers.get("content-length") or 0))
                out = await self._handle(method, path, raw, headers)
                if out is None:  # hang: never answer, keep the connection open
                    await self._stop.wait()
                    return
                if isinstance(out, tuple):  # a misbehaving answer: send its start, then break the exchange
                    await self._break(writer, *out)
                    return
                if len(out) <= CHUNK:
                    writer.write(out)
                    await writer.drain()
                else:  # a large answer goes out a piece at a time: never a copy of it per connection
                    view = memoryview(out)
                    for i in range(0, len(out), CHUNK):
                        writer.write(view[i : i + CHUNK])
                        await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError, ValueError):
            pass
        finally:
            writer.close()

    async def _break(self, writer: asyncio.StreamWriter, start: bytes, how: str) -> None:
        writer.write(start)
        await writer.drain()
        if how == "reset":  # an RST, not a clean close: SO_LINGER with a zero timeout
            import struct

            sock = writer.get_extra_info("socket")
            if sock is not None:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()
            return
        while not writer.is_closing():  # trickle: one byte at a time, never the whole body
            await asyncio.sleep(float(self.mode["trickle_every"]))
            writer.write(b" ")
            await writer.drain()

    async def _handle(
        self, method: str, path: str, raw: bytes, headers: dict | None = None
    ) -> bytes | tuple | None:
        if method == "GET" and path.startswith("/admin/counts"):
            with self.lock:
                return _response(
                    200,
                    {
                        "counts": dict(self.counts),
                        "bodies": len(self.bodies),
                        "distinct": len(set(self.bodies)),
                    },
                )
        if path.startswith("/admin/"):
            if path.startswith("/admin/reset"):
                self.reset()
            elif path.startswith("/admin/mode"):
                self.set(**json.loads(raw or b"{}"))
            return _response(200, {"ok": True})
        if gemini_batch_path(path) and "x-goog-api-key" in (headers or {}):  # Google's key: not OpenAI's
            return self._gemini_batch_route(method, path, raw, headers or {})
        if _is_batch_path(path):
            return self._batch_route(method, path, raw)
        if method == "GET" and path.split("?")[0].rstrip("/").endswith("/v1/models"):  # what vLLM lists
            return _response(200, {"object": "list", "data": [{"id": "loopback", "object": "model"}]})
        if method == "POST" and path.endswith("/apply-template") and self.mode["no_template"]:
            return _response(404, {"detail": "Not Found"})
        if method == "POST" and path.endswith("/apply-template"):
            return _response(200, {"prompt": chatml(json.loads(raw or b"{}").get("messages", []))})
        cloud = cloud_route(path)  # Gemini, Bedrock, Vertex: tests/support/cloud_routes.py
        if cloud is not None:
            refused = self._cloud_route(cloud, method, path, raw, headers or {})
            if refused is not None:
                return refused
        where, _, query = path.partition("?")  # a query (?api-version=...) names no other route
        route = (
            cloud
            if cloud is not None
            else "chat"
            if where.endswith("/chat/completions")
            else "messages"
            if where.endswith("/messages")
            else "completions"
            if where.endswith("/completions")
            else None
        )
        if route is None or method != "POST":
            return _response(404, {"error": {"message": f"no route {method} {path}"}})
        body = json.loads(raw or b"{}")
        if cloud is not None:
            body = self._cloud_body(cloud, path, body)
        with self.lock:
            self.queries.append(query)
            self.counts[route] += 1
            self.counts["total"] += 1
            n = self.counts["total"]
            self.bodies.append(hashlib.sha256(raw).hexdigest())
            self.raw_bodies.append(raw)
            mode = dict(self.mode)
            self.open += 1
            self.counts["peak"] = max(self.counts["peak"], self.open)
        try:
            if route == "gemini":
                return await self._gemini(body, mode, n)
            if cloud is not None and mode["malformed"] == "filtered":
                return refusal(body.get("model", "loopback"), n)
            return await self._complete("messages" if cloud else route, body, mode, n, path)
        finally:
            with self.lock:
                self.open -= 1

    async def _complete(
        self, route: str, body: dict, mode: dict, n: int, path: str = "/"
    ) -> bytes | tuple | None:
        prompt = "\n".join(_content_text(m.get("content")) for m in body.get("messages", []))
        if mode["hang"]:
            return None
        if mode["delay"]:
            await asyncio.sleep(mode["delay"])
        status = mode["status"]
        if status and mode["fail_times"] is not None and n > mode["fail_times"]:
            status = None
        if mode["fail_match"] and mode["fail_match"] in prompt:
            status = 500
        if status:
            headers = {"Retry-After": str(mode["retry_after"])} if mode["retry_after"] is not None else {}
            kind = "rate_limit_error" if status == 429 else "api_error"
            return _response(
                status, {"type": "error", "error": {"type": kind, "message": f"simulated {status}"}}, headers
            )
        if mode["malformed"] and (mode["fail_times"] is None or n <= mode["fail_times"]):
            return _malformed(mode["malformed"], route, body.get("model", "loopback"))
        if mode["misbehave"] and (mode["fail_times"] is None or n <= mode["fail_times"]):
            return _misbehaving(
                mode["misbehave"], route, body.get("model", "loopback"), path, mode["redirect_to"]
            )
        if route == "completions":
            return _echo_logprobs(body, n)
        text = plausible_answer(prompt, mode["middle_loss"])
        tin, tout = approx_tokens(prompt), approx_tokens(text)
        model = body.get("model", "loopback")
        if route == "chat":
            usage = {"prompt_tokens": tin, "completion_tokens": tout, "total_tokens": tin + tout}
            if mode["prompt_cache"]:
                usage["prompt_tokens_details"] = {
                    "cached_tokens": self._openai_cached(prompt, tin, mode["cache_capacity"])
                }
            return _response(
                200,
                {
                    "id": f"chatcmpl-{n}",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": model,
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": text},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": usage,
                },
            )
        usage = {"input_tokens": tin, "output_tokens": tout}
        if mode["prompt_cache"]:
            read, written = self._anthropic_cached(body.get("messages", []), mode["cache_capacity"])
            usage = {
                "input_tokens": tin - read - written,
                "output_tokens": tout,
                "cache_read_input_tokens": read,
                "cache_creation_input_tokens": written,
            }
        return _response(
            200,
            {
                "id": f"msg_{n}",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [{"type": "text", "text": text}],
                "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": usage,
            },
        )

    # prompt caching -------------------------------------------------------------------------
    def _openai_cached(self, prompt: str, tokens: int, capacity: int) -> int:
        """Tokens of the longest prefix seen before (>= 1,024, in 128-token steps); this prompt is remembered."""
        if tokens < CACHE_MIN_TOKENS:
            return 0
        steps = range(CACHE_MIN_TOKENS, tokens + 1, CACHE_STEP_TOKENS)
        h = hashlib.sha256()
        digests, done = [], 0
        for b in steps:
            end = _token_chars(b)
            h.update(prompt[done:end].encode("utf-8"))
            done = end
            digests.append((b, h.copy().digest()))
        cached = 0
        with self.lock:
            for b, d in digests:
                if not self._seen_count[d]:
                    break
                cached = b
            self._seen.append([d for _, d in digests])
            self._seen_count.update(d for _, d in digests)
            while len(self._seen) > max(1, int(capacity)):
                self._seen_count.subtract(self._seen.popleft())
        return cached

    def _anthropic_cached(self, messages: list, capacity: int) -> tuple[int, int]:
        """(cache_read, cache_creation) tokens of a request whose blocks may carry cache_control."""
        parts: list[tuple[str, bool]] = []
        for m in messages:
            content = m.get("content")
            if isinstance(content, list):
                parts += [
                    (str(c.get("text", "")), bool(c.get("cache_control")))
                    for c in content
                    if isinstance(c, dict)
                ]
            else:
                parts.append((str(content or ""), False))
            parts.append(("\n", False))  # messages are joined by a newline in the prompt the server reads
        parts.pop()
        marks = [i for i, (_, marked) in enumerate(parts) if marked]
        if not marks:
            return 0, 0
        prefixes, text = [], ""
        for chunk, _ in parts:
            text += chunk
            prefixes.append(text)
        b = marks[-1]
        read = 0
        with self.lock:
            for j in range(b, max(-1, b - ANTHROPIC_LOOKBACK - 1), -1):
                d = _digest(prefixes[j])
                if d in self._marked:
                    read = self._marked[d]
                    self._marked.move_to_end(d)
                    break
            tokens = approx_tokens(prefixes[b])
            d = _digest(prefixes[b])
            written = 0
            if d not in self._marked and tokens >= CACHE_MIN_TOKENS:
                written = tokens - read
                self._marked[d] = tokens
                while len(self._marked) > max(1, int(capacity)):
                    self._marked.popitem(last=False)
        return read, written

    def serve_forever(self) -> None:
        self.loop = asyncio.new_event_loop()
        try:
            self.loop.run_until_complete(self._serve())
        finally:
            self.loop.close()

    def start(self) -> LLMServer:
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)
        self.thread.start()
        self._ready.wait(10)
        return self

    def stop(self) -> None:
        if self.loop is not None and self._stop is not None and not self.loop.is_closed():
            self.loop.call_soon_threadsafe(self._stop.set)
        if self.thread is not None:
            self.thread.join(5)

    def __enter__(self) -> LLMServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="loopback OpenAI/Anthropic-format test server")
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument("--delay", type=float, default=0.0)
    ap.add_argument("--middle-loss", type=float, default=0.0)
    args = ap.parse_args(argv)
    server = LLMServer(port=args.port, delay=args.delay, middle_loss=args.middle_loss)
    print(
        f"listening on {server.url} (OpenAI base_url {server.openai_url}, Anthropic base_url {server.url})",
        flush=True,
    )
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
