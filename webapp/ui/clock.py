"""The wait for a blocking model call, the same on every page: the elapsed time against the estimate from
the local model's measured speed on this machine, and each call's progress line (Clock runs the call in a
worker thread that never touches Streamlit); the model's display name."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from typing import TypeVar

from webapp.services import models, sharing
from webapp.services.live import call_line
from webapp.services.names import model_title

T = TypeVar("T")  # what the blocking call returns (a RunView, the attention by page)
__all__ = ["Clock", "expected_seconds", "model_name"]


def model_name(choice) -> str:
    return model_title(choice.spec.label) or choice.spec.label


def expected_seconds(choice, input_tokens: int) -> float | None:
    """How long `input_tokens` of prompts take the local model here (its measured speed), else None."""
    if choice is None or choice.spec.provider != "local" or not input_tokens:
        return None
    try:
        trials = sharing.load_runs(in_url=False)[0]
    except Exception:  # no measurement, no estimate
        return None
    speed = models.speed(choice.spec.model, trials)
    return None if speed is None or not speed.here else speed.seconds(input_tokens)  # never another machine's


class Clock:
    """Runs a blocking call in a worker thread while the page shows the elapsed time against the
    estimate, and each call's progress line (the worker never touches Streamlit)."""

    def __init__(self, status, expected: float | None):
        self.status, self.expected = status, expected
        self.started = time.monotonic()
        self.lines: queue.Queue[str] = queue.Queue()
        self.slot = status.empty()

    def on_call(self, prompt, completion, ahead: int | None = None) -> None:
        self.lines.put(call_line(prompt, completion, ahead or 0))

    def elapsed_text(self) -> str:
        return models.duration(time.monotonic() - self.started)

    def tick(self) -> None:
        while not self.lines.empty():
            self.status.write(self.lines.get())
        text = f"Elapsed {self.elapsed_text()}"
        if self.expected:
            text += f" of about {models.duration(self.expected)} (the model's measured speed on this machine)"
        self.slot.markdown(f"**{text}**")

    def run(self, fn: Callable[[], T]) -> T:
        out: dict = {}

        def work() -> None:
            try:
                out["value"] = fn()
            except BaseException as e:  # raised again in the page's thread
                out["error"] = e

        thread = threading.Thread(target=work, name="litm-playground-run", daemon=True)
        thread.start()
        while thread.is_alive():
            self.tick()
            thread.join(0.5)
        self.tick()
        if "error" in out:
            raise out["error"]
        return out["value"]
