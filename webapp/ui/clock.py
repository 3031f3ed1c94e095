"""The wait for a blocking model call, the same on every page: the elapsed time against the estimate from
the local model's speed on this machine (measured, or timed by a warm-up), where a local call waits (the
calls ahead of it, the model loading), each call's progress line (Clock runs the call in a worker thread
that never touches Streamlit), and a Cancel that stops a local call in the worker; the model's display
name."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from typing import TypeVar

from webapp.services import models, sharing
from webapp.services.live import LocalRun, call_line
from webapp.services.names import model_title

T = TypeVar("T")  # what the blocking call returns (a RunView, the attention by page)
__all__ = ["Clock", "Expected", "expected_seconds", "local_speed", "model_name"]


def model_name(choice) -> str:
    return model_title(choice.spec.label) or choice.spec.label


def local_speed(choice) -> models.Speed | None:
    """The local model's speed on this machine (components.run.speed's order), None for another provider or
    when only another machine's runs measured it."""
    if choice is None or choice.spec.provider != "local":
        return None
    try:
        trials = sharing.load_runs(in_url=False)[0]
    except Exception:  # no measurement, no estimate
        return None
    speed = models.speed(choice.spec.model, trials)
    return speed if speed is not None and speed.here else None  # never another machine's


def expected_seconds(choice, input_tokens: int, calls: int = 1) -> float | None:
    """How long `input_tokens` of prompts in `calls` calls take the local model here, else None."""
    speed = local_speed(choice) if input_tokens else None
    return None if speed is None else speed.seconds(input_tokens, calls)


Expected = float | None | Callable[[], float | None]


class Clock:
    """Runs a blocking call in a worker thread while the page shows the elapsed time against the
    estimate, where a local call waits (the calls ahead of it, the model loading), and each call's progress
    line (the worker never touches Streamlit). `expected`: seconds, or a function asked again each second
    until it knows (the first run: the worker times the model as it loads it). With `local`, the calls are
    made under that LocalRun: a page that stops running (Cancel, or the page left) cancels them in the
    worker."""

    def __init__(self, status, expected: Expected, local: LocalRun | None = None):
        self.status, self.local = status, local
        self.estimate = expected if callable(expected) else (lambda: expected)
        self.expected: float | None = None
        self.started = time.monotonic()
        self.timer = models.Timer()
        self.lines: queue.Queue[str] = queue.Queue()
        self.slot = status.empty()
        self.cancelled = False

    def on_call(self, prompt, completion, ahead: int | None = None) -> None:
        self.lines.put(call_line(prompt, completion, ahead or 0))

    def elapsed_text(self) -> str:
        return models.duration(time.monotonic() - self.started)

    def tick(self) -> None:
        while not self.lines.empty():
            self.status.write(self.lines.get())
        if self.expected is None:
            self.expected = self.estimate()
        where = self.local.where() if self.local is not None else None
        text = self.timer.line(
            self.expected,
            loading=bool(where and where.get("loading")),
            ahead=int(where["ahead"]) if where else 0,
        )
        if self.expected:
            text += " (the model's speed on this machine)"
        self.slot.markdown(f"**{text}**")

    def run(self, fn: Callable[[], T]) -> T:
        out: dict = {}
        local = self.local

        def work() -> None:
            try:
                if local is None:
                    out["value"] = fn()
                else:
                    with local.active():
                        out["value"] = fn()
            except BaseException as e:  # raised again in the page's thread
                out["error"] = e

        thread = threading.Thread(target=work, name="litm-playground-run", daemon=True)
        thread.start()
        try:
            while thread.is_alive():
                self.tick()
                thread.join(0.5)
        finally:
            if thread.is_alive() and local is not None:  # Cancel (or the page left): stopped in the worker
                self.cancelled = True
                local.cancel()
        self.tick()
        if "error" in out:
            raise out["error"]
        return out["value"]
