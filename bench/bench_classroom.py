"""A classroom on one app server, without browsers: N students arriving over a window of seconds,
each one Streamlit session opened over the server's own websocket protocol (bench/stclient.py), each
visiting the same pages in order as a class following the teacher does. A student costs the client
a few milliseconds of CPU, so the server has the machine's cores to itself.

The app is started by `litm app` itself (`--workers N`: N servers behind nginx) with a fresh HOME
(an empty run store of the user's; the shipped runs are read). A teacher opens every page first, as
in a class (the server's first-visit costs are reported apart). Reported, per page: seconds from
asking for the page to Streamlit's script_finished (median, p95, max); the server's CPU seconds per
student (utime + stime of /proc/<pid>/stat, before and after the class), its peak memory (VmHWM of
/proc/<pid>/status); the errors (bench/stclient.py says what counts). Then, with the class gone, the
server CPU seconds of each page view by page: new sessions (a student's default view of every page)
view the pages one at a time, the server's CPU read before and after each view (`--views`).

    python -m bench classroom --sessions 50 [--window 10] [--pages home lesson results compare]
    python -m bench classroom --url http://127.0.0.1:8501 --pid 1234   # a server you started
    python -m bench classroom --sessions 50 --workers 2                # `litm app --workers 2`: behind nginx

Pages are url paths. With the default list, a page the app does not have is left out and named;
a page given with --pages that the app does not have counts as an error.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from bench.stclient import Session, Visit

DEFAULT_PAGES = ("home", "lesson", "results", "compare")
GOAL_S = 5.0  # p95 to script finished on every page, 50 students within 10 s
GOAL_PAGES = DEFAULT_PAGES
GOAL_CPU_S = 0.1  # server CPU seconds per default view of a page
VIEWS = 10  # views of each page measured one at a time after the class, for the CPU per page view


@dataclass
class Classroom:
    sessions: int
    window: float
    pages: list[str]
    skipped: list[str] = field(default_factory=list)
    teacher: list[Visit] = field(default_factory=list)
    visits: list[Visit] = field(default_factory=list)
    connect_errors: list[str] = field(default_factory=list)
    wall_s: float = 0.0
    server_cpu_s: float | None = None
    peak_mb: float | None = None
    rss_before_mb: float | None = None
    client_cpu_s: float = 0.0
    processes: int = 1  # the server's processes (litm app --workers N: N servers and nginx's two)
    load: tuple[float, float] = (0.0, 0.0)  # the machine's 1-minute load average at the start and the end
    page_cpu: dict[str, list[float]] = field(default_factory=dict)  # page -> server CPU s of each view

    @property
    def errors(self) -> list[str]:
        return self.connect_errors + [f"{v.page}: {e}" for v in self.visits for e in v.errors]


# ------------------------------------------------------------------ the server process


def tree(pid: int) -> list[int]:
    """The process and all its descendants (`litm app --workers N`: the app servers and nginx)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(stat.parent.name))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process (all its threads) and its descendants, from /proc/<pid>/stat."""
    total = 0.0
    for p in tree(pid):
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def memory_mb(pid: int, key: str) -> float:
    """A line of /proc/<pid>/status in MB (VmHWM: peak resident, VmRSS: resident now), summed over the
    process and its descendants."""
    total, found = 0.0, False
    for p in tree(pid):
        try:
            lines = Path(f"/proc/{p}/status").read_text().splitlines()
        except OSError:
            continue
        for line in lines:
            if line.startswith(key + ":"):
                total, found = total + int(line.split()[1]) / 1024, True
    if not found:
        raise LookupError(f"no {key} in /proc/{pid}/status")
    return total


def app_servers() -> set[int]:
    """The app servers among this process's children (tests/e2e/appserver.py starts them as children)."""
    me, found = os.getpid(), set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            cmd = (stat.parent / "cmdline").read_bytes()
        except (OSError, ValueError, IndexError):
            continue
        if ppid == me and (b"webapp.serve" in cmd or b"components.cli" in cmd):
            found.add(int(stat.parent.name))
    return found


def app_server_pid(before: set[int] = frozenset()) -> int:
    """The app server this process started since `before` was taken (another, older one may still run:
    a test's server in the same pytest process)."""
    new = app_servers() - set(before)
    if len(new) != 1:
        raise LookupError(
            f"the app server started by this bench was not found among its child processes ({new})"
        )
    return new.pop()


# ------------------------------------------------------------------ the class


async def teacher(
    url: str, pages: list[str], explicit: bool, timeout: float
) -> tuple[list[Visit], list[str], tuple]:
    """Open the app's root URL, then every page once, in order. With the default pages, those the app
    does not have are left out (returned second). Returns the app's pages third (Session.app)."""
    visits, skipped = [], []
    async with Session(url, timeout=timeout) as s:
        root = await s.visit("")
        root.page = "(root URL)"
        visits.append(root)
        for page in pages:
            if not explicit and page not in s.pages:
                skipped.append(page)
                continue
            visits.append(await s.visit(page))
        return visits, skipped, s.app


async def student(
    url: str,
    pages: list[str],
    known: tuple | None,
    delay: float,
    timeout: float,
    done: asyncio.Queue,
    hold: asyncio.Event,
    out: Classroom,
) -> None:
    await asyncio.sleep(delay)
    t0 = time.perf_counter()
    signalled = False
    try:
        async with Session(url, timeout=timeout, app=known) as s:
            for i, page in enumerate(pages):
                visit = await s.visit(page)
                if i == 0 and visit.ok:  # what a student waits for: the connection and the first page
                    visit.seconds = time.perf_counter() - t0
                out.visits.append(visit)
            done.put_nowait(1)
            signalled = True
            await hold.wait()  # tabs stay open until the whole class is done: the server holds every session
    except Exception as exc:  # a bench counts a failure, it does not stop on it
        out.connect_errors.append(f"session: {type(exc).__name__}: {str(exc)[:160]}")
    finally:
        if not signalled:
            done.put_nowait(1)


async def classroom(
    url: str,
    sessions: int,
    window: float,
    pages: list[str] | None,
    pid: int | None,
    timeout: float = 300.0,
    warm: bool = True,
    views: int = VIEWS,
) -> Classroom:
    explicit = pages is not None
    out = Classroom(sessions, window, list(pages or DEFAULT_PAGES))
    known = None
    if warm:
        out.teacher, out.skipped, known = await teacher(url, out.pages, explicit, timeout)
        out.pages = [p for p in out.pages if p not in out.skipped]
    if pid:
        cpu0, out.rss_before_mb = cpu_seconds(pid), memory_mb(pid, "VmRSS")
    me0, load0 = resource.getrusage(resource.RUSAGE_SELF), os.getloadavg()[0]
    hold, done = asyncio.Event(), asyncio.Queue()
    t0 = time.perf_counter()
    tasks = [
        asyncio.create_task(student(url, out.pages, known, i * window / sessions, timeout, done, hold, out))
        for i in range(sessions)
    ]
    for _ in range(sessions):
        await done.get()
    out.wall_s = time.perf_counter() - t0
    if pid:
        out.server_cpu_s = cpu_seconds(pid) - cpu0
        out.peak_mb = memory_mb(pid, "VmHWM")
        out.processes = len(tree(pid))
    me1 = resource.getrusage(resource.RUSAGE_SELF)
    out.client_cpu_s = (me1.ru_utime + me1.ru_stime) - (me0.ru_utime + me0.ru_stime)
    out.load = (load0, os.getloadavg()[0])
    hold.set()
    await asyncio.gather(*tasks)
    if pid and views:
        await measure_idle(pid)
        out.page_cpu = await page_views(url, out.pages, known, pid, views, timeout)
    return out


async def page_views(url: str, pages: list[str], known: tuple | None, pid: int, views: int, timeout: float):
    """Server CPU seconds of each page view, with nothing else asking: `views` new sessions (a student's
    default view of each page), one visit at a time, the server's CPU read before and after each."""
    out: dict[str, list[float]] = {p: [] for p in pages}
    # A tab left open, as in a class: Streamlit drops its compiled page scripts when the last session
    # closes, which a class never does.
    async with Session(url, timeout=timeout, app=known) as tab:
        await tab.visit(pages[0])
        for _ in range(views):
            await _views_of(url, pages, known, pid, timeout, out)
    return out


async def _views_of(url: str, pages: list[str], known, pid: int, timeout: float, out: dict) -> None:
    async with Session(url, timeout=timeout, app=known) as s:
        for page in pages:
            await asyncio.sleep(0.2)  # the previous page's messages sent and the server idle
            before = cpu_seconds(pid)
            visit = await s.visit(page)
            await asyncio.sleep(0.2)  # what the server does after script_finished is the view's too
            if visit.ok:
                out[page].append(cpu_seconds(pid) - before - 0.4 * idle_cpu(pid))


_IDLE: dict[int, float] = {}


def idle_cpu(pid: int) -> float:
    """The server's CPU seconds per second with no visitor (measured once, 1 s): taken off each view."""
    return _IDLE.get(pid, 0.0)


async def measure_idle(pid: int) -> None:
    before = cpu_seconds(pid)
    await asyncio.sleep(1.0)
    _IDLE[pid] = max(0.0, cpu_seconds(pid) - before)


# ------------------------------------------------------------------ the report


def p95(values: list[float]) -> float:
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=20, method="inclusive")[-1]


def report(c: Classroom) -> list[str]:
    lines = []
    if c.skipped:
        lines.append(f"pages left out (not in this app): {', '.join(c.skipped)}")
    if c.teacher:
        lines.append(
            "teacher (first visitor, every page once): "
            + ", ".join(
                f"{v.page} {v.seconds:.1f} s" + (f" ({len(v.errors)} errors)" if v.errors else "")
                for v in c.teacher
            )
        )
    lines.append(
        f"{c.sessions} students arriving over {c.window:g} s, each visiting "
        f"{' -> '.join(c.pages)} in one session ({c.wall_s:.0f} s until the last was done):"
    )
    for page in c.pages:
        done = [v.seconds for v in c.visits if v.page == page and v.ok]
        n = sum(v.page == page for v in c.visits)
        elements = [v.elements for v in c.visits if v.page == page and v.ok]
        if done:
            lines.append(
                f"  {page:<10} to script finished: median {statistics.median(done):.1f} s, "
                f"p95 {p95(done):.1f} s, max {max(done):.1f} s ({len(done)}/{n} finished without error, "
                f"{statistics.median(elements):.0f} elements)"
            )
        else:
            lines.append(f"  {page:<10} no visit finished without error ({n} asked)")
    for page, cpu in c.page_cpu.items():
        if cpu:
            lines.append(
                f"  {page:<10} server CPU per view: median {statistics.median(cpu):.3f} s, "
                f"max {max(cpu):.3f} s ({len(cpu)} new sessions, one view at a time, after the class)"
            )
    if c.server_cpu_s is not None:
        summed = f" ({c.processes} processes, summed)" if c.processes > 1 else ""
        lines.append(
            f"server CPU{summed}: {c.server_cpu_s:.1f} s for {c.sessions} students = "
            f"{c.server_cpu_s / c.sessions:.2f} s per student; peak memory (VmHWM) {c.peak_mb:.0f} MB "
            f"(resident {c.rss_before_mb:.0f} MB before the class)"
        )
    lines.append(
        f"client CPU (this load generator): {c.client_cpu_s:.1f} s; machine: {os.cpu_count()} cores, "
        f"load average {c.load[0]:.1f} at the start, {c.load[1]:.1f} at the end"
    )
    errors = c.errors
    kinds = sorted({e.split(" within ")[0][:140] for e in errors})
    lines.append(f"errors: {len(errors)}" + (f" ({'; '.join(kinds[:5])})" if errors else ""))
    goals = []
    for page in GOAL_PAGES:
        done = [v.seconds for v in c.visits if v.page == page and v.ok]
        if done:
            goals.append(f"{page} p95 {p95(done):.1f} s ({'met' if p95(done) < GOAL_S else 'not met'})")
    if goals:
        lines.append(f"goal p95 < {GOAL_S:g} s on every page (50 students within 10 s): " + ", ".join(goals))
    cpu = [
        f"{page} {statistics.median(v):.3f} s ({'met' if statistics.median(v) < GOAL_CPU_S else 'not met'})"
        for page, v in c.page_cpu.items()
        if v
    ]
    if cpu:
        lines.append(f"goal server CPU < {GOAL_CPU_S:g} s per default view: " + ", ".join(cpu))
    return lines


def run(
    sessions: int = 50,
    window: float = 10.0,
    pages: list[str] | None = None,
    url: str | None = None,
    pid: int | None = None,
    timeout: float = 300.0,
    warm: bool = True,
    workers: int = 1,
    views: int = VIEWS,
    profile: str | None = None,
) -> list[str]:
    return report(measure(sessions, window, pages, url, pid, timeout, warm, workers, views, profile))


def measure(
    sessions: int = 50,
    window: float = 10.0,
    pages: list[str] | None = None,
    url: str | None = None,
    pid: int | None = None,
    timeout: float = 300.0,
    warm: bool = True,
    workers: int = 1,
    views: int = VIEWS,
    profile: str | None = None,
) -> Classroom:
    with ExitStack() as stack:
        if url is None:
            from tests.e2e.appserver import streamlit_app

            before = app_servers()
            env = {"LITM_PROFILE_DIR": str(Path(profile).resolve())} if profile else None
            url = stack.enter_context(streamlit_app(env=env, workers=workers, litm_app=True))
            pid = app_server_pid(before)
        return asyncio.run(classroom(url, sessions, window, pages, pid, timeout, warm, views))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench classroom", description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=50, help="students (default 50)")
    ap.add_argument("--window", type=float, default=10.0, help="seconds over which they arrive (default 10)")
    ap.add_argument(
        "--pages",
        nargs="+",
        metavar="PATH",
        help=f"url paths, in the order a student visits them (default: {' '.join(DEFAULT_PAGES)})",
    )
    ap.add_argument("--url", help="a running app server (default: start one, as `litm app` does)")
    ap.add_argument(
        "--pid",
        type=int,
        help="with --url: the server's process id, for its CPU and memory "
        "(with its child processes: `litm app --workers N`)",
    )
    ap.add_argument(
        "--workers",
        type=int,
        default=1,
        help="start `litm app --workers N` (N app servers behind nginx) instead of one server",
    )
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds a page may take (default 300)")
    ap.add_argument(
        "--no-teacher",
        dest="warm",
        action="store_false",
        help="no teacher visit first: the first students pay the server's first-visit costs",
    )
    ap.add_argument(
        "--views",
        type=int,
        default=VIEWS,
        help=f"after the class, new sessions that view every page one at a time, for the server CPU per "
        f"page view (default {VIEWS}; 0: none)",
    )
    ap.add_argument(
        "--profile",
        metavar="DIR",
        help="profile every script run of the server it starts (cProfile), one file a run in DIR, named "
        "by its number and page (read them with python -m pstats)",
    )
    args = ap.parse_args(argv)
    if args.sessions < 1 or args.window < 0:
        ap.error("--sessions must be at least 1 and --window at least 0")
    for line in run(
        args.sessions,
        args.window,
        args.pages,
        args.url,
        args.pid,
        args.timeout,
        args.warm,
        args.workers,
        args.views,
        args.profile,
    ):
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
