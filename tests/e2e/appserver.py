"""Start the app as `litm app` does (`python -m webapp.serve run webapp/app.py`: Streamlit's command
line) on a free loopback port, with a temporary HOME, and stop it.

Used by the browser tests (tests/e2e/conftest.py) and scripts/screenshot.py.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(url: str, proc: subprocess.Popen, timeout: float = 60) -> None:
    """Until `url` answers 200 (components.cli.workers.wait_healthy, the app's own wait, for one server)."""
    from components.cli.workers import wait_healthy as wait

    wait(url, [proc], timeout)


@contextmanager
def process(
    args: list[str], health: str, env: dict | None = None, log: Path | None = None
) -> Iterator[subprocess.Popen]:
    out = open(log, "wb") if log else subprocess.DEVNULL  # closed below
    proc = subprocess.Popen(args, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_healthy(health, proc)
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if log:
            out.close()


@contextmanager
def streamlit_app(
    home: Path | None = None, env: dict | None = None, workers: int = 1, litm_app: bool = False
) -> Iterator[str]:
    """Yield the app's URL; HOME (and so caches and the run store) is a temporary directory. `litm_app`, or
    `workers` > 1: started by `litm app --port P [--workers N]` itself (N app servers behind nginx)."""
    with tempfile.TemporaryDirectory(prefix="litm-e2e-") as tmp:
        home = Path(home or tmp)
        port = free_port()
        environ = {
            **os.environ,
            "HOME": str(home),
            "XDG_CACHE_HOME": os.environ.get("XDG_CACHE_HOME", str(Path.home() / ".cache")),
            "LITM_DB": str(home / "runs.sqlite"),
            "PYTHONPATH": str(ROOT),
            **(env or {}),
        }
        for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
            environ.pop(key, None)
        args = [
            sys.executable,
            "-m",
            "webapp.serve",
            "run",
            "webapp/app.py",
            "--server.port",
            str(port),
            "--server.address",
            "127.0.0.1",
            "--server.headless",
            "true",
            "--browser.gatherUsageStats",
            "false",
            "--server.fileWatcherType",
            "none",
        ]
        if litm_app or workers > 1:
            args = [
                sys.executable,
                "-m",
                "components.cli",
                "app",
                "--port",
                str(port),
                "--workers",
                str(workers),
            ]
        url = f"http://127.0.0.1:{port}"
        with process(args, f"{url}/_stcore/health", environ, home / "streamlit.log"):
            yield url


@contextmanager
def llm_server() -> Iterator[str]:
    """The loopback OpenAI-compatible server (tests/support/llm_server.py); yields its /v1 URL."""
    port = free_port()
    args = [sys.executable, "-m", "tests.support.llm_server", "--port", str(port)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with process(args, f"http://127.0.0.1:{port}/admin/counts", env):
        yield f"http://127.0.0.1:{port}/v1"


# ------------------------------------------------------------------ browser helpers (playwright page)


def calm(page) -> None:
    """The page shows no traceback and no "Something went wrong"."""
    text = page.inner_text("body")
    assert "Traceback" not in text and "Something went wrong" not in text, text[-600:]


def settle(page, timeout: int = 60_000) -> None:
    """Wait until Streamlit has finished running the script (stApp's script state is not running)."""
    page.wait_for_selector('[data-testid="stApp"]', timeout=timeout)
    page.wait_for_timeout(500)  # let a rerun that an action asked for begin
    page.wait_for_function(
        """() => {
            const app = document.querySelector('[data-testid="stApp"]');
            const state = app && app.getAttribute('data-test-script-state');
            return state && state !== 'running' && state !== 'initial'
                && !document.querySelector('[data-testid="stStatusWidget"]');
        }""",
        timeout=timeout,
    )
    page.wait_for_timeout(300)


def choose(page, option: str) -> None:
    """Click a radio option by its text."""
    page.locator('[data-testid="stRadioOption"]', has_text=option).click()
    settle(page)


def fill(page, label: str, text: str, submit: str = "Enter") -> None:
    """Type into a text input (submit Enter) or text area (submit Control+Enter)."""
    box = page.get_by_label(label, exact=True)
    box.fill(text)
    box.press(submit)
    settle(page)


def paste(page, text: str) -> None:
    """Paste a document into the Playground and apply it with its button (no Ctrl+Enter needed)."""
    page.get_by_label("Paste a document", exact=True).fill(text)
    page.get_by_role("button", name="Use this text").click()
    settle(page)


ANSWER = "Where is the answer? Type its words as the document has them"  # the Playground's own-text answer


def select(page, label: str, option: str) -> None:
    """Pick an option of a selectbox by the selectbox's label and the option's text."""
    page.locator('[data-testid="stSelectbox"]').filter(has=page.get_by_text(label, exact=True)).click()
    page.keyboard.type(option)  # filters the list: an option far down a long list is drawn only then
    page.get_by_role("option", name=option, exact=True).click()
    settle(page)


def upload(page, path) -> None:
    page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(str(path))
    settle(page)
