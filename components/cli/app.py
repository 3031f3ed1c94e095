"""`litm app`: start the Streamlit app (the same as `streamlit run webapp/app.py`, with the settings of
.streamlit/config.toml given on the command line so they hold from any folder). The engine never
loads the UI library itself: this replaces the process with `python -m webapp.serve`, Streamlit's own
command line after a thread that loads what the first page needs while the server starts."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def add_parser(sub, name):
    p = sub.add_parser(name, help="start the web app")
    p.add_argument("--port", type=int, default=8501)
    p.set_defaults(func=run)


def command(port: int) -> list[str]:
    app = Path(__file__).resolve().parents[2] / "webapp" / "app.py"
    return [sys.executable, "-m", "webapp.serve", "run", str(app), "--server.port", str(port),
            "--server.headless", "true", "--server.address", "127.0.0.1",
            "--browser.gatherUsageStats", "false", "--client.toolbarMode", "viewer"]


def run(args) -> int:
    if not 1 <= args.port <= 65535:
        raise ValueError(f"--port must be 1-65535, got {args.port}")
    argv = command(args.port)
    os.execv(argv[0], argv)
    return 0  # not reached
