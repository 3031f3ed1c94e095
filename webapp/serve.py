"""`python -m webapp.serve run webapp/app.py ...`: Streamlit's own command line (streamlit.web.cli.main,
what the `streamlit` command runs), after starting a thread that imports what the first pages need.

Streamlit runs no app code until the first visitor opens a page, so that visitor used to wait for
pandas, plotly, scipy.stats and the tokenizer to load. Started with the server, the thread has them
loaded (or half loaded: Python's import locks make a page wait for the rest, never load twice) by
the time someone comes. Modules that other code looks up in sys.modules without importing them
(pandas, for plotly) are loaded before the thread starts (see main). Then the thread reads the run
stores (components.run.reader.browse_kept, about a second for 100k trials, about 45 MB kept): the
first visit's read (webapp/app.py warm_up, services/stores.py) finds them read, unless a store changed
since.

Started with a port (`litm app`, each server of `litm app --workers N`), the thread then warms the
server up: it opens one session over the server's own websocket and visits every page once, so what
the pages keep per server process (services/views.py: Results' and Compare's statistics and figures;
the Lesson's and Home's figures; the themed charts) is built before the first student comes. Until
then /_stcore/health answers 503 "warming up ..." and then "ok" (`ready_when_warm`): `litm app
--workers N`, nginx and a teacher's browser wait for a warm server. The heavy statistics come from the
cache folder when an earlier process computed them (services/views.py cache_dir), so a restart is warm
in seconds. LITM_NO_WARM_UP=1 turns the visit off (the health endpoint is then "ok" at once); LITM_PROFILE_DIR=DIR
profiles every script run into DIR (`profile_runs`)."""

from __future__ import annotations

import os
import sys
import threading
import time

WARM_LIMIT_S = 45.0  # healthy after this long even if the warm-up has not finished (it goes on)
_warm = {"done": threading.Event(), "pages": 0, "of": 0, "seconds": 0.0, "error": ""}


def preload() -> None:
    import plotly.graph_objects  # noqa: F401

    import components.report.analysis  # (pandas, scipy.stats)
    import components.report.compare  # noqa: F401
    from components.core.tokens import tokenizer

    tokenizer().count("preload")
    from components.run.reader import browse_kept, store_version
    from components.run.store import store_paths

    for shipped, path in store_paths():  # outside a Streamlit session: the reader's own keep, no st.cache
        try:
            browse_kept(str(path), store_version(path), shipped)
        except Exception:  # the Results page says what is wrong with the store
            continue


def visit_every_page(port: int, timeout: float = 120.0) -> None:
    """Be the class's first visitor: one session over the server's own websocket (the protocol a browser
    speaks: a `rerun_script` BackMsg per page, ForwardMsgs until `script_finished`) opening the root URL,
    then every page of the app's navigation. What the pages keep per server process (services/views.py,
    services/figures.py once, ui/charts.py themed) is then built before anyone comes."""
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
    from websockets.sync.client import connect

    base = f"127.0.0.1:{port}"
    with connect(
        f"ws://{base}/_stcore/stream", subprotocols=["streamlit"], max_size=None, open_timeout=timeout
    ) as ws:

        def run(path: str) -> list[str]:
            msg = BackMsg()
            state = msg.rerun_script
            state.page_name = path
            info = state.context_info
            info.timezone, info.timezone_offset, info.locale = "UTC", 0, "en-US"
            info.url = f"http://{base}/{path}"
            ws.send(msg.SerializeToString())
            paths: list[str] = []
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                fwd = ForwardMsg()
                fwd.ParseFromString(ws.recv(timeout=max(1.0, deadline - time.monotonic())))
                kind = fwd.WhichOneof("type")
                if kind == "navigation":
                    paths = [p.url_pathname for p in fwd.navigation.app_pages if not p.is_default]
                elif kind == "script_finished" and fwd.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                    return paths
            raise TimeoutError(f"page {path or '/'} did not finish within {timeout:.0f} s")

        pages = run("")
        _warm["of"] = len(pages) + 1
        _warm["pages"] = 1
        for path in pages:
            run(path)
            _warm["pages"] += 1


def warm_up(port: int) -> None:
    """Preload, then wait for the server to listen and visit every page once (`visit_every_page`); the
    health endpoint answers "ok" only after that (`ready`). A failure is printed and the server reports
    healthy anyway: a page's own error is the page's to show."""
    import socket

    t0 = time.monotonic()
    try:
        preload()
        while time.monotonic() - t0 < WARM_LIMIT_S:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.2)
        visit_every_page(port)
    except Exception as exc:  # the warm-up must never stop the server
        _warm["error"] = f"{type(exc).__name__}: {str(exc)[:160]}"
        print(f"LITM Explorer warm-up did not finish: {_warm['error']}", file=sys.stderr, flush=True)
    finally:
        _warm["seconds"] = time.monotonic() - t0
        _warm["done"].set()


def warm_state() -> tuple[bool, str]:
    """(warm, what the health endpoint says): "ok" once every page was built once (or the warm-up gave up,
    or WARM_LIMIT_S passed), else what it is doing."""
    if _warm["done"].is_set() or time.monotonic() - _STARTED > WARM_LIMIT_S:
        return True, "ok"
    done, of = _warm["pages"], _warm["of"]
    return False, f"warming up: building every page's default view ({done} of {of or '?'} pages)"


_STARTED = time.monotonic()


def ready_when_warm() -> None:
    """The health endpoint (/_stcore/health, what `litm app --workers N`, nginx and tests poll) answers 503
    "warming up ..." until the warm-up has built every page once, then 200 "ok" as Streamlit does."""
    from streamlit.runtime.runtime import Runtime

    served = Runtime.is_ready_for_browser_connection

    async def ready(self) -> tuple[bool, str]:
        ok, message = await served.fget(self)
        if not ok:
            return ok, message
        return warm_state()

    Runtime.is_ready_for_browser_connection = property(ready)


def profile_runs(folder: str) -> None:
    """Profile every script run (cProfile) into `folder`, one file a run: `0007-results.prof` (the run's
    number, its page): what `python -m bench classroom --profile DIR` asks for, to see where a page
    view's time goes (`python -m pstats`)."""
    import cProfile
    import itertools
    from pathlib import Path

    from streamlit.runtime.scriptrunner import script_runner

    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    numbers = itertools.count()
    served = script_runner.ScriptRunner._run_script

    def profiled(self, rerun_data):
        profile = cProfile.Profile()
        profile.enable()
        try:
            return served(self, rerun_data)
        finally:
            profile.disable()
            try:
                asked = self._pages_manager.get_pages().get(rerun_data.page_script_hash, {})
                page = rerun_data.page_name or asked.get("url_pathname") or "home"
            except Exception:  # a name is only a name
                page = "page"
            profile.dump_stats(out / f"{next(numbers):04d}-{page}.prof")

    script_runner.ScriptRunner._run_script = profiled


def port_of(argv: list[str]) -> int | None:
    for i, arg in enumerate(argv):
        if arg == "--server.port" and i + 1 < len(argv):
            return int(argv[i + 1])
        if arg.startswith("--server.port="):
            return int(arg.split("=", 1)[1])
    return None


def main() -> int:
    # Streamlit and pandas are loaded whole before the thread starts. Plotly (which Streamlit loads) looks
    # pandas up in sys.modules without importing it: with the thread halfway through importing pandas,
    # it found a half-loaded module and the server failed to start (1 start in about 8, measured).
    import pandas  # noqa: F401
    from streamlit.web.cli import main as streamlit_main

    if os.environ.get("LITM_PROFILE_DIR"):
        profile_runs(os.environ["LITM_PROFILE_DIR"])
    port = port_of(sys.argv)
    if port is None or os.environ.get("LITM_NO_WARM_UP"):
        threading.Thread(target=preload, name="litm-preload", daemon=True).start()
    else:
        ready_when_warm()
        threading.Thread(target=warm_up, args=(port,), name="litm-warm-up", daemon=True).start()
    try:
        return streamlit_main(prog_name="streamlit")
    finally:
        stop_quickly()


STOP_S = 4.0  # after the server stopped, the process is gone within this many seconds


def stop_quickly(limit: float = STOP_S) -> None:
    """After the server stopped (SIGTERM, Ctrl-C): a call waiting on the local model's worker ends at once as
    `interrupted` and its trial is recorded so (--retry-errors sends it again), then the sweeps running in
    the background are cancelled and get what is left of `limit` to stop; a watchdog ends the process at
    `limit` whatever still waits (before, a busy local model kept the app up for minutes)."""
    deadline = time.monotonic() + limit
    threading.Thread(target=_exit_at, args=(deadline,), name="litm-stop", daemon=True).start()
    worker = sys.modules.get("components.providers.localworker")
    if worker is not None and worker.interrupt_calls():
        worker.wait_calls(1.0)
        time.sleep(0.1)  # the sweep's thread writes the interrupted trial
    jobs = sys.modules.get("webapp.services.jobs")
    every = jobs.every_job() if jobs is not None else []
    for job in every:
        job.cancel.set()
    for job in every:
        jobs.wait(job, max(0.0, deadline - 0.5 - time.monotonic()))  # type: ignore[union-attr]


def _exit_at(deadline: float) -> None:
    time.sleep(max(0.0, deadline - time.monotonic()))
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
