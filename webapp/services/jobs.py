"""Sweeps running in background threads owned by the server process, not by a browser session.

A job outlives the Streamlit script run (and the browser tab) that started it: its thread writes
trials to the run store, and this registry holds its live progress and its cancel event. Jobs are
kept per *owner* (a random token the Experiments page keeps in the session and in the page's URL,
so a refreshed tab finds its jobs again); one owner never sees another owner's jobs. Whoever holds the
URL may watch; only the browser that started a job (its `controller` key, services/sharing.py) may
cancel it. API keys are passed to the runner in memory and never stored here.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from webapp.services.stores import user_db

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
    requests: int = 0  # HTTP requests the server saw (SDK retries included)
    note: str = ""  # why the sweep waits right now (a rate limit), "" when it does not
    batch: str = ""  # batch mode: the provider batches' own counts
    local: bool = False  # a model of the sweep runs in the local worker (its calls may wait in its queue)
    sweep_id: Any = None
    started: float = field(default_factory=time.time)
    finished: float | None = None
    failure: str | None = None  # a one-line message if the sweep stopped on an exception
    summary: Any = None
    controller: str = ""  # the browser key that may cancel (services/sharing.browser_key)
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

    def update(self, progress) -> None:
        """The runner's progress callback (components.run.runner.Progress)."""
        self.done, self.total, self.errors = progress.done, progress.total, progress.errors
        self.usd, self.sent, self.cached = progress.spend_usd, progress.sent, progress.cached
        self.requests, self.note = getattr(progress, "requests", 0), getattr(progress, "note", "")
        self.batch = getattr(progress, "batch", "")


def new_owner() -> str:
    return uuid.uuid4().hex[:16]


def start(
    owner: str, label: str, store_path: str, work: Callable[[Job], Any], total: int = 0, controller: str = ""
) -> Job:
    """Run `work(job)` in a daemon thread; `work` calls the runner with job.update and job.cancel."""
    job = Job(
        id=uuid.uuid4().hex[:12],
        owner=owner,
        label=label,
        store_path=str(store_path),
        total=total,
        controller=controller,
    )

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


def every_job() -> list[Job]:
    """Every owner's jobs in this server (to find a browser's latest workspace)."""
    with _LOCK:
        return [j for owned in _JOBS.values() for j in owned.values()]


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


def cancel(owner: str, job_id: str, controller: str = "") -> bool:
    """Cancel a job, if `controller` is the key of the browser that started it (a link holder's is not)."""
    job = get(owner, job_id)
    if job is None or job.controller != controller:
        return False
    job.cancel.set()
    return True


def forget(owner: str, job_id: str) -> None:
    """Drop a finished job from the list (a running one stays)."""
    with _LOCK:
        job = _JOBS.get(owner, {}).get(job_id)
        if job is not None and not job.running:
            del _JOBS[owner][job_id]


def stop_all(timeout: float = 10.0) -> None:
    """Cancel every job and wait for it (tests and shutdown)."""
    for job in every_job():
        job.cancel.set()
        wait(job, timeout)


def wait(job: Job, timeout: float = 30.0) -> bool:
    """Wait for a job's thread (tests and shutdown)."""
    if job.thread is not None:
        job.thread.join(timeout)
    return not job.running


def check_name(db: Path, name: str, tag: str) -> None:
    """A sweep name someone else has is refused (running would add trials to theirs and replace its
    stored config): another browser's, and the command line's (no owner: e.g. a teacher's shared run).
    The same browser's own sweep, from any workspace, is resumed."""
    from components.run.store import RunStore

    if not db.exists():
        return
    with RunStore(db, readonly=True) as store:  # reading never writes
        found = store.find_sweep(name)
    if found is None:
        return
    owner = found["owner"]
    browser = tag.partition(".")[2]
    if not owner or (owner != tag and not (browser and str(owner).partition(".")[2] == browser)):
        whose = "the command line's" if not owner else "someone else's"
        raise ValueError(f"a sweep named {name!r} exists and is {whose}: choose another name")


def start_sweep(
    owner: str, config, tasks: list, api_key: str | None, retry_errors: bool = False, controller: str = ""
) -> Job:
    """Run a sweep (components.run.config.SweepConfig) in the background for this owner, stored with
    owner "<owner>.<controller>". The key, if any, is passed to the runner in memory only."""
    from components.run.plan import plan

    api_keys = {m.provider: api_key for m in config.models} if api_key else {}
    db = user_db()
    tag = f"{owner}.{controller}" if controller else owner
    check_name(db, config.name, tag)
    specs = plan(
        config, tasks[: config.n_tasks] if config.n_tasks else tasks
    )  # planned once: counted and run

    def work(job: Job):
        from components.run.batch import run_sweep_any
        from components.run.store import RunStore

        store = RunStore(db)
        try:
            summary = run_sweep_any(
                config,
                store,
                progress=job.update,
                cancel=job.cancel,
                api_keys=api_keys,
                retry_errors=retry_errors,
                owner=tag,
                specs=specs,
            )
            job.done, job.total, job.errors = summary.done, summary.total, summary.errors
            job.usd, job.sweep_id = summary.spend_usd, summary.sweep_id
            return summary
        finally:
            store.close()

    job = start(owner, config.name, str(db), work, total=len(specs), controller=controller)
    job.local = any(m.provider == "local" for m in config.models)
    return job


def local_waiting() -> int:
    """Calls waiting for or running on the local model right now, every session's and sweep's (one
    worker answers them one at a time): what a local sweep's sent calls may be queued behind."""
    from components.providers.localworker import queue_length

    return queue_length()
