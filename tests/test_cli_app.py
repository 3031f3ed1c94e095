"""`litm app` starts the real app: served on loopback, healthy, with the usage statistics off."""

import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from components.cli.app import SETTINGS, command

ROOT = Path(__file__).resolve().parent.parent


def test_command_keeps_the_app_on_loopback_and_quiet():
    argv = command(8765)
    assert argv[:4] == [sys.executable, "-m", "webapp.serve", "run"]
    assert argv[argv.index("--server.address") + 1] == "127.0.0.1"
    assert argv[argv.index("--browser.gatherUsageStats") + 1] == "false"
    assert Path(argv[4]).name == "app.py" and Path(argv[4]).is_file()


def test_litm_app_passes_the_settings_of_the_checkouts_streamlit_config():
    """`litm app` from any folder (an installed wheel has no .streamlit/) serves as `streamlit run` in a
    checkout does: every setting of .streamlit/config.toml is given on the command line."""
    import tomllib

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    flat = {
        f"{section}.{key}": str(value).lower() if isinstance(value, bool) else str(value)
        for section, values in config.items()
        for key, value in values.items()
        if key != "port"
    }
    assert flat == SETTINGS
    argv = command(8765)
    for key, value in flat.items():
        assert argv[argv.index(f"--{key}") + 1] == value


def test_the_server_preloads_what_the_first_page_needs():
    """webapp.serve's thread imports these before the first visitor: a renamed module fails here, not
    silently in a server log."""
    code = (
        "import sys, webapp.serve as s; s.preload(); "
        "print(all(m in sys.modules for m in ('scipy.stats', 'plotly.graph_objects', 'pandas', "
        "'components.report.analysis', 'components.report.compare')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**__import__("os").environ, "PYTHONPATH": str(ROOT)},
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "True"


def test_the_preload_starts_only_once_streamlit_and_pandas_are_loaded_whole():
    """Plotly looks pandas up in sys.modules without importing it: a thread still importing pandas made
    the server's own start fail ("partially initialized module 'pandas'"), about 1 start in 8."""
    code = (
        "import sys, threading, webapp.serve as s\n"
        "class Spy:\n"
        "    def __init__(self, target=None, **kw):\n"
        "        self.loaded = all(m in sys.modules for m in ('streamlit', 'pandas', 'plotly'))\n"
        "    def start(self):\n"
        "        raise SystemExit(0 if self.loaded else 3)\n"
        "threading.Thread = Spy\n"
        "s.main()\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**__import__("os").environ, "PYTHONPATH": str(ROOT)},
    )
    assert out.returncode == 0, out.stderr


def test_litm_app_serves_the_app(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "components.cli", "app", "--port", str(port)],
        cwd=tmp_path,
        env={**__import__("os").environ, "PYTHONPATH": str(ROOT), "HOME": str(tmp_path)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(120):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as r:
                    assert r.read() == b"ok"
                    return
            except OSError:
                time.sleep(0.5)
        raise AssertionError("the app did not answer on its health endpoint")
    finally:
        proc.terminate()
        proc.wait(timeout=20)
