"""Garbage collection paced for sweeps: fewer young-generation collections while trials run.

A sweep keeps every document it has built (a cell's document serves each strategy and model) and
allocates thousands of small objects per trial (pages, prompt spans, request and response dicts).
With CPython's default thresholds (700, 10, 10) the collector runs several times per trial and walks
what is kept again and again: on the 1,000-token runner bench (bench/bench_runner.py) collection took
about a tenth of the runner's time. While any sweep runs in this process, the thresholds are raised to
SWEEP_THRESHOLDS; when the last one ends, whatever was set before is put back. The collector still
runs (reference cycles are still freed), only less often.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

SWEEP_THRESHOLDS = (50_000, 20, 20)

_lock = threading.Lock()
_running = 0
_before: tuple[int, ...] = ()


@contextmanager
def paced() -> Iterator[None]:
    """Raise the collection thresholds for the duration (nested and concurrent sweeps share them)."""
    global _running, _before
    with _lock:
        if _running == 0:
            _before = gc.get_threshold()
            gc.set_threshold(*SWEEP_THRESHOLDS)
        _running += 1
    try:
        yield
    finally:
        with _lock:
            _running -= 1
            if _running == 0:
                gc.set_threshold(*_before)
