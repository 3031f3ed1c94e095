"""The local model's runtime as `make app` builds it: in the background, while the app already runs.

`make app` installs what the app needs, starts a background job that compiles llama-cpp-python for this
CPU (the Makefile's wheelhouse: minutes, once per machine) and installs it with the model's weights, and
starts the app at once: Home, Results, Compare and the Lesson read the shipped runs and need no model.
The job records where it is in a small JSON file in the virtual environment (`state_path()`), written
through this module (`python -m components.providers.runtime mark building|ready|failed --log LOG`), and
read here by everything that would run the local model: the worker provider (a sweep or a Playground run
gets one line), the sidebar, and `litm doctor`. While it builds, they say "being built, about N min left",
N from the compiler's own progress in the job's log (ninja's `[done/total]` lines: the time so far scaled
by what is left). No state file means no background build was ever started for this environment (`make
install`, `make test`, a wheel install): the runtime is then installed or not, as before.

This module uses the standard library only: the Makefile runs it before anything else is certain.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

STATE_NAME = "litm-local-runtime.json"
ENV_STATE = "LITM_RUNTIME_STATE"  # another state file (tests)
EXPECTED_S = 6 * 60  # a build's length before the compiler says how far it is (4 min idle, more when busy)
PROGRESS = re.compile(rb"^\s*\[(\d+)/(\d+)\] ", re.M)  # ninja: "[12/150] Building C object ..."
TAIL = 256_000  # bytes of the log read for the last progress line
STATES = ("building", "ready", "failed")


def state_path() -> Path:
    """The state file of this environment's background build: `<venv>/litm-local-runtime.json`."""
    return Path(os.environ.get(ENV_STATE) or Path(sys.prefix) / STATE_NAME)


@dataclass(frozen=True)
class Build:
    """What the background build of the local runtime is doing: `state` building | ready | failed."""

    state: str
    started: float
    log: str
    pid: int = 0
    done: int = 0  # the compiler's steps done, of `total` (0, 0 before it says)
    total: int = 0
    reason: str = ""
    compile_log: str = ""  # the compiler's own output, where its progress is read

    def minutes_left(self, now: float | None = None) -> int:
        """Whole minutes left, at least 1: the time so far scaled by the compiler's steps left, or the
        usual length of a build before the compiler says how far it is."""
        elapsed = max(0.0, (now or time.time()) - self.started)
        if self.total and self.done:
            left = elapsed * (self.total - self.done) / self.done
        else:
            left = EXPECTED_S - elapsed
        return max(1, math.ceil(left / 60))

    def line(self, now: float | None = None) -> str:
        """The one line a user reads about the local model while this build is not ready."""
        if self.state == "building":
            steps = f" ({self.done:,} of {self.total:,} compile steps done)" if self.total else ""
            return (
                f"the local model's runtime (llama-cpp-python for this CPU) is being built, about "
                f"{self.minutes_left(now)} min left{steps}; the shipped runs and the other providers work "
                f"meanwhile; log: {self.log}"
            )
        if self.state == "failed":
            why = f" ({self.reason})" if self.reason else ""
            return (
                f"the local model's runtime did not build{why}; the log: {self.log}; run make app again "
                "to build it"
            )
        return "the local model's runtime is built"


def progress(log: str | Path) -> tuple[int, int]:
    """(done, total) of the compiler's last progress line in the log, or (0, 0)."""
    try:
        with open(log, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            f.seek(max(0, size - TAIL))
            data = f.read()
    except OSError:
        return 0, 0
    found = PROGRESS.findall(data)
    if not found:
        return 0, 0
    done, total = found[-1]
    return int(done), int(total)


def alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def read(path: Path | None = None) -> Build | None:
    """The background build's state, or None when there is none (or its file cannot be read). A build
    whose job is gone without saying so (killed, the machine restarted) reads as failed."""
    path = path or state_path()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        state = str(data["state"])
        started, log, pid = float(data.get("started", 0)), str(data.get("log", "")), int(data.get("pid", 0))
        compile_log = str(data.get("compile_log", "") or log)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    if state not in STATES:
        return None
    if state == "building":
        if not alive(pid):
            return Build("failed", started, log, pid, reason="its job stopped before it finished")
        done, total = progress(compile_log)
        return Build(state, started, log, pid, done, total, compile_log=compile_log)
    return Build(state, started, log, pid, reason=str(data.get("reason", "")))


def pending() -> str | None:
    """The line to show instead of running the local model while its runtime is not ready (building, or
    its build failed); None when there is no background build or it is done."""
    build = read()
    if build is None or build.state == "ready":
        return None
    return build.line()


def mark(
    state: str, log: str, pid: int, reason: str = "", compile_log: str = "", path: Path | None = None
) -> Path:
    """Write the state file (a temporary file renamed into place: a reader never sees half of it)."""
    path = path or state_path()
    if state not in STATES:
        raise ValueError(f"state must be one of {', '.join(STATES)}, got {state!r}")
    old = read(path)
    started = old.started if old is not None and state != "building" else time.time()
    body = {
        "state": state,
        "started": started,
        "log": log,
        "pid": pid,
        "reason": reason,
        "compile_log": compile_log,
    }
    tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(body) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


def wait_for_app(port: int, limit_s: float = 120.0, every_s: float = 1.0) -> bool:
    """Wait until the app on this machine's `port` answers its health check (or `limit_s` passes): the
    background build then compiles without slowing the app's own start. True when it answered."""
    import urllib.request

    end = time.monotonic() + limit_s
    while time.monotonic() < end:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=5) as r:
                if r.status == 200:
                    return True
        except OSError:
            pass
        time.sleep(every_s)
    return False


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m components.providers.runtime")
    sub = p.add_subparsers(dest="op", required=True)
    m = sub.add_parser("mark", help="record the background build's state")
    m.add_argument("state", choices=STATES)
    m.add_argument("--log", required=True)
    m.add_argument("--pid", type=int, default=os.getppid(), help="the build job's process (default: parent)")
    m.add_argument("--reason", default="")
    m.add_argument("--compile-log", default="", help="the compiler's output (its progress lines)")
    m.add_argument("--file", type=Path, default=None, help="the state file (default: the environment's)")
    sub.add_parser("status", help="print the line a user reads, or 'ready'")
    w = sub.add_parser("wait-app", help="wait until the app answers its health check")
    w.add_argument("--port", type=int, required=True)
    w.add_argument("--limit", type=float, default=120.0, help="seconds at most (default 120)")
    args = p.parse_args(argv)
    if args.op == "mark":
        mark(args.state, args.log, args.pid, args.reason, args.compile_log, args.file)
        return 0
    if args.op == "wait-app":
        answered = wait_for_app(args.port, args.limit)
        print(
            "    the app answers: compiling now"
            if answered
            else f"    the app did not answer in {args.limit:g} s"
        )
        return 0
    line = pending()
    print(line or "ready")
    return 0 if line is None else 1


if __name__ == "__main__":
    sys.exit(main())
