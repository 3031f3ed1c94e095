"""Sweeps running in background threads owned by the server process, not by a browser session.

A job outlives the Streamlit script run (and the browser tab) that started it: its thread writes
trials to the run store, and this registry holds its live progress and its cancel event. Jobs are
kept per *owner* (a random token the Experiments page keeps in the session and in the page's URL,
so a refreshed tab finds its jobs again); one owner never sees another owner's jobs. API keys are
passed to the runner in memory and never stored here.
"""

from __future__ import annotations

import os
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

_LOCK = threading.Lock()
_JOBS: dict[str, dict[str, Job]] = {}  # owner -> job id -> job


@dataclass
class Job:
    id: str
    owner: str
    label: str
    store_path: str
    total: int = 0
    done: int = 0
    errors: int = 0
    usd: float = 0.0
    sent: int = 0  # requests sent in this run
    cached: int = 0  # calls answered from the store in this run
    sweep_id: Any = None
    started: float = field(default_factory=time.time)
    finished: float | None = None
    failure: str | None = None  # a one-line message if the sweep stopped on an exception
    summary: Any = None
    cancel: threading.Event = field(default_factory=threading.Event, repr=False)
    thread: threading.Thread | None = field(default=None, repr=False)

    @property
    def running(self) -> bool:
        return self.thread is not None and self.thread.is_alive()

    @property
    def state(self) -> str:
        if self.running:
            return "cancelling" if self.cancel.is_set() else "running"
        if self.failure:
            return "failed"
        return "cancelled" if self.cancel.is_set() else "finished"

    def update(self, *args, **kwargs) -> None:
        """Progress callback for the runner: accepts an object with done/total/errors/usd
        attributes, a dict, keyword arguments, or positional (done, total)."""
        info: dict = {}
        if args and len(args) == 1 and not isinstance(args[0], int | float):
            obj = args[0]
            info = dict(obj) if isinstance(obj, dict) else {k: getattr(obj, k) for k in dir(obj)
                                                             if not k.startswith("_")}
        elif args:
            info = dict(zip(("done", "total", "errors", "usd"), args, strict=False))
        info.update(kwargs)
        for name, aliases in (("done", ("done", "completed", "finished")), ("total", ("total",)),
                              ("errors", ("errors", "failed", "n_errors")),
                              ("usd", ("usd", "spend_usd", "cost_usd", "spend", "spent_usd")),
                              ("sent", ("sent",)), ("cached", ("cached",)),
                              ("sweep_id", ("sweep_id",))):
            for alias in aliases:
                value = info.get(alias)
                if value is not None and not callable(value):
                    setattr(self, name, value)
                    break


def user_db() -> Path:
    """The user's run store: $LITM_DB, else runs/litm.sqlite in the project."""
    return Path(os.environ.get("LITM_DB") or ROOT / "runs" / "litm.sqlite")


def shipped_dbs() -> list[Path]:
    """Run stores that ship with the app (made with a real model): sample_docs/runs/*.sqlite."""
    folder = Path(os.environ.get("LITM_SHIPPED_RUNS") or ROOT / "sample_docs" / "runs")
    return sorted(folder.glob("*.sqlite")) if folder.is_dir() else []


def new_owner() -> str:
    return uuid.uuid4().hex[:16]


def start(owner: str, label: str, store_path: str, work: Callable[[Job], Any], total: int = 0) -> Job:
    """Run `work(job)` in a daemon thread; `work` calls the runner with job.update and job.cancel."""
    job = Job(id=uuid.uuid4().hex[:12], owner=owner, label=label, store_path=str(store_path), total=total)

    def target() -> None:
        try:
            job.summary = work(job)
        except Exception as exc:  # shown to the user as one line; never a traceback
            job.failure = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
        finally:
            job.finished = time.time()

    job.thread = threading.Thread(target=target, name=f"sweep-{job.id}", daemon=True)
    with _LOCK:
        _JOBS.setdefault(owner, {})[job.id] = job
    job.thread.start()
    return job


def jobs_for(owner: str) -> list[Job]:
    with _LOCK:
        return sorted(_JOBS.get(owner, {}).values(), key=lambda j: j.started, reverse=True)


def running_for(owner: str) -> list[Job]:
    return [j for j in jobs_for(owner) if j.running]


def get(owner: str, job_id: str) -> Job | None:
    with _LOCK:
        return _JOBS.get(owner, {}).get(job_id)


def running_names(store_path: str) -> set[str]:
    """Names of the sweeps running on this store for any owner (to keep them out of other lists)."""
    with _LOCK:
        every = [j for owned in _JOBS.values() for j in owned.values()]
    return {j.label for j in every if j.running and j.store_path == str(store_path)}


def cancel(owner: str, job_id: str) -> bool:
    job = get(owner, job_id)
    if job is None:
        return False
    job.cancel.set()
    return True


def forget(owner: str, job_id: str) -> None:
    """Drop a finished job from the list (a running one stays)."""
    with _LOCK:
        job = _JOBS.get(owner, {}).get(job_id)
        if job is not None and not job.running:
            del _JOBS[owner][job_id]


def wait(job: Job, timeout: float = 30.0) -> bool:
    """Wait for a job's thread (tests and shutdown)."""
    if job.thread is not None:
        job.thread.join(timeout)
    return not job.running
