"""`litm app`: start the Streamlit app (the same as `streamlit run webapp/app.py`)."""

from __future__ import annotations

import sys
from pathlib import Path


def add_parser(sub, name):
    p = sub.add_parser(name, help="start the web app")
    p.add_argument("--port", type=int, default=8501)
    p.set_defaults(func=run)


def run(args) -> int:
    from streamlit.web import cli as stcli

    app = Path(__file__).resolve().parent.parent / "webapp" / "app.py"
    sys.argv = ["streamlit", "run", str(app), "--server.port", str(args.port), "--server.headless", "true",
                "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
                "--client.toolbarMode", "viewer"]
    return stcli.main()
