"""A real loopback HTTP server speaking the OpenAI chat-completions and Anthropic messages formats.

    server = LLMServer().start()      # in-process, on a free port
    server.openai_url                 # http://127.0.0.1:P/v1   (AsyncOpenAI base_url)
    server.anthropic_url              # http://127.0.0.1:P      (AsyncAnthropic base_url)
    server.set(delay=0.2)             # or status=429, retry_after=1, fail_times=1, hang=True, ...
    server.counts["chat"], server.counts["messages"], server.bodies

or as a process: `python -m tests.support.llm_server --port P [--delay 0.1]`, driven by
POST /admin/mode (JSON of the same settings), GET /admin/counts, POST /admin/reset.

Answers come from components.providers.fake.plausible_answer: deterministic and meaningful.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from components.providers.fake import approx_tokens, plausible_answer

DEFAULTS = {
    "delay": 0.0,  # seconds before answering
    "status": None,  # answer every request with this error status (429, 500, 400...)
    "retry_after": None,  # Retry-After header (seconds) on error answers
    "fail_times": None,  # only the first N requests get `status`; then answers again
    "fail_match": None,  # requests whose prompt contains this text get status 500
    "hang": False,  # never answer (until the client gives up)
    "middle_loss": 0.0,  # see plausible_answer: simulate lost-in-the-middle misses
}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: one connection serves many calls

    def log_message(self, *args):  # quiet
        pass

    def _send(self, status: int, payload: dict, headers: dict | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path.startswith("/admin/counts"):
            return self._send(200, {"counts": dict(self.server.owner.counts),
                                    "bodies": len(self.server.owner.bodies),
                                    "distinct": len(set(self.server.owner.bodies))})
        return self._send(404, {"error": {"message": "not found"}})

    def do_POST(self):
        owner: LLMServer = self.server.owner
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path.startswith("/admin/"):
            if self.path.startswith("/admin/reset"):
                owner.reset()
            elif self.path.startswith("/admin/mode"):
                owner.set(**json.loads(raw or b"{}"))
            return self._send(200, {"ok": True})
        route = "chat" if self.path.endswith("/chat/completions") else \
            "messages" if self.path.endswith("/messages") else None
        if route is None:
            return self._send(404, {"error": {"message": f"no route {self.path}"}})
        body = json.loads(raw or b"{}")
        with owner.lock:
            owner.counts[route] += 1
            owner.counts["total"] += 1
            n = owner.counts["total"]
            owner.bodies.append(hashlib.sha256(raw).hexdigest())
            mode = dict(owner.mode)
        prompt = "\n".join(_content_text(m.get("content")) for m in body.get("messages", []))
        if mode["hang"]:
            owner.stop_event.wait(300)
            return None
        if mode["delay"]:
            time.sleep(mode["delay"])
        status = mode["status"]
        if status and mode["fail_times"] is not None and n > mode["fail_times"]:
            status = None
        if mode["fail_match"] and mode["fail_match"] in prompt:
            status = 500
        if status:
            headers = {"Retry-After": str(mode["retry_after"])} if mode["retry_after"] is not None else {}
            kind = "rate_limit_error" if status == 429 else "api_error"
            return self._send(status, {"type": "error", "error": {"type": kind, "message": f"simulated {status}"}},
                              headers)
        text = plausible_answer(prompt, mode["middle_loss"])
        tin, tout = approx_tokens(prompt), approx_tokens(text)
        model = body.get("model", "loopback")
        if route == "chat":
            return self._send(200, {
                "id": f"chatcmpl-{n}", "object": "chat.completion", "created": int(time.time()), "model": model,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": tin, "completion_tokens": tout, "total_tokens": tin + tout}})
        return self._send(200, {
            "id": f"msg_{n}", "type": "message", "role": "assistant", "model": model,
            "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": tin, "output_tokens": tout}})


def _content_text(content) -> str:
    if isinstance(content, list):
        return "\n".join(str(c.get("text", "")) for c in content if isinstance(c, dict))
    return str(content or "")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256


class LLMServer:
    def __init__(self, host: str = "127.0.0.1", port: int = 0, **mode):
        self.lock = threading.Lock()
        self.stop_event = threading.Event()
        self.reset()
        self.set(**mode)
        self.httpd = _Server((host, port), Handler)
        self.httpd.owner = self
        self.port = self.httpd.server_address[1]
        self.thread: threading.Thread | None = None

    def reset(self) -> None:
        with self.lock:
            self.counts: Counter = Counter()
            self.bodies: list[str] = []
            self.mode = dict(DEFAULTS)

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

    anthropic_url = url

    def start(self) -> LLMServer:
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()
        return self

    def stop(self) -> None:
        self.stop_event.set()
        self.httpd.shutdown()
        self.httpd.server_close()

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
    print(f"listening on {server.url} (OpenAI base_url {server.openai_url}, Anthropic base_url {server.url})",
          flush=True)
    try:
        server.httpd.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
