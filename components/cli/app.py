"""`litm app`: start the Streamlit app (the same as `streamlit run webapp/app.py`, with the server
settings below given on the command line so they hold from any folder, a checkout or an installed
wheel). The engine never loads the UI library itself: this replaces the process with
`python -m webapp.serve`, Streamlit's own command line after a thread that loads what the first page
needs while the server starts. `--workers N` starts N such servers behind nginx instead
(components/cli/workers.py)."""

from __future__ import annotations

import os
import sys
from importlib.util import find_spec

# The server's settings: the one definition. .streamlit/config.toml holds the same (for `streamlit run`
# in a checkout; tests/test_cli_app.py checks that they agree).
SETTINGS = {
    "server.headless": "true",
    "server.address": "127.0.0.1",  # loopback only
    "server.maxUploadSize": "25",  # MB; the loaders refuse a document over 20 MB with a clear line
    "browser.gatherUsageStats": "false",
    "client.toolbarMode": "viewer",
    "theme.base": "light",
    # Streamlit's default runs a full garbage collection after every script run: 120-200 ms of the
    # server's one interpreter per page view here (py-spy), more than half of what opening the Lesson
    # costs. Python's own collector still runs. Measured with `python -m bench classroom --sessions 50
    # --pages playground lesson`: 0.34 -> 0.16 CPU s per student, Lesson p95 7.0-10.6 s -> 1.7 s.
    "runner.postScriptGC": "false",
    # Streamlit's file watcher walks every loaded module (realpath of each) after every script run, on
    # the server's event loop: most of what a session cost `litm app --workers 2` (py-spy: 2,000 of
    # 2,200 event-loop samples in LocalSourcesWatcher.update_watched_modules). Users do not edit the
    # app's code while it serves; a developer who wants reload on save passes
    # --server.fileWatcherType auto to `streamlit run`.
    "server.fileWatcherType": "none",
}


def add_parser(sub, name):
    p = sub.add_parser(name, help="start the web app")
    p.add_argument("--port", type=int, default=8501)
    p.add_argument(
        "--workers",
        type=int,
        default=1,
        help="app servers behind nginx, one per core for a class (default 1: one server, no nginx; "
        "2 or more needs Debian's nginx package)",
    )
    p.set_defaults(func=run)


def app_script() -> str:
    """webapp/app.py, wherever the package is (a checkout or site-packages). Found without importing
    it (it is a Streamlit script); webapp is a namespace package, so importlib.resources.files cannot
    name one folder for it."""
    spec = find_spec("webapp.app")
    if spec is None or not spec.origin:
        raise LookupError("the web app (webapp/app.py) is not installed")
    return spec.origin


def command(port: int) -> list[str]:
    argv = [sys.executable, "-m", "webapp.serve", "run", app_script(), "--server.port", str(port)]
    for key, value in SETTINGS.items():
        argv += [f"--{key}", value]
    return argv


def run(args) -> int:
    if not 1 <= args.port <= 65535:
        raise ValueError(f"--port must be 1-65535, got {args.port}")
    os.environ.setdefault("MALLOC_ARENA_MAX", "2")  # the servers' memory: fewer malloc arenas per thread
    if args.workers != 1:
        from components.cli import workers

        if not 2 <= args.workers <= workers.MAX_WORKERS:
            raise ValueError(
                f"--workers must be 2-{workers.MAX_WORKERS}, got {args.workers} (1: run `litm app` without it)"
            )
        workers.nginx_binary()  # missing: one line from here, before anything starts
        # The process that watches the servers only starts and stops them: a fresh interpreter without the
        # command line's other commands loaded (about 20 MB instead of 110) holds the class's memory down.
        argv = [sys.executable, "-c", SUPERVISOR, str(args.port), str(args.workers)]
        os.execv(argv[0], argv)
    argv = command(args.port)
    os.execv(argv[0], argv)
    return 0  # not reached


SUPERVISOR = "from components.cli.app import supervise; supervise()"


def supervise() -> None:
    """`litm app --workers N` after its checks: N servers behind nginx (components/cli/workers.py serve);
    an error is one line and exit code 1, as the command line's own."""
    from components.cli import workers

    try:
        code = workers.serve(int(sys.argv[1]), int(sys.argv[2]), command)
    except (ValueError, OSError, LookupError) as exc:
        print(f"litm: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}", file=sys.stderr)
        code = 1
    sys.exit(code)
