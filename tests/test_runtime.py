"""The local runtime's background build (components/providers/runtime.py, which `make app` writes through):
its state and the "N min left" read from the compiler's log, and what every user of the local model says
while it builds: the provider (a sweep, a Playground run), `litm doctor`, the sidebar."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from components.providers import runtime

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "webapp" / "app.py")


def compile_log(path: Path, *steps: tuple[int, int]) -> Path:
    lines = ["Building wheel for llama-cpp-python (pyproject.toml): started"]
    lines += [f"  [{d}/{t}] Building C object vendor/llama.cpp/ggml/src/ggml.c.o" for d, t in steps]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def state(tmp_path, monkeypatch) -> Path:
    path = tmp_path / "runtime.json"
    monkeypatch.setenv(runtime.ENV_STATE, str(path))
    return path


def building(state: Path, log: Path, started: float, pid: int | None = None) -> None:
    runtime.mark("building", str(log), os.getpid() if pid is None else pid, compile_log=str(log), path=state)
    data = json.loads(state.read_text())
    data["started"] = started
    state.write_text(json.dumps(data))


def test_the_time_left_is_the_time_so_far_scaled_by_the_compile_steps_left(state, tmp_path):
    log = compile_log(tmp_path / "c.log", (1, 120), (29, 120), (30, 120))
    now = time.time()
    building(state, log, now - 120)  # 30 of 120 steps in 2 minutes: 6 minutes left
    build = runtime.read()
    assert (build.state, build.done, build.total) == ("building", 30, 120)
    assert build.minutes_left(now) == 6
    line = build.line(now)
    assert "is being built, about 6 min left (30 of 120 compile steps done)" in line
    assert line.endswith(f"; log: {log}") and runtime.pending() is not None


def test_before_the_compiler_says_anything_the_usual_length_counts_down(state, tmp_path):
    log = compile_log(tmp_path / "c.log")
    now = time.time()
    building(state, log, now - 60)
    assert runtime.read().minutes_left(now) == round((runtime.EXPECTED_S - 60) / 60)
    building(state, log, now - 10 * runtime.EXPECTED_S)  # late: never 0 or less
    assert runtime.read().minutes_left(now) == 1
    assert "about 1 min left;" in runtime.read().line(now)


def test_a_build_whose_job_is_gone_reads_as_failed(state, tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    building(state, compile_log(tmp_path / "c.log", (3, 9)), time.time(), pid=dead.pid)
    build = runtime.read()
    assert build.state == "failed" and "its job stopped before it finished" in build.line()
    assert "run make app again" in runtime.pending()


def test_ready_and_no_state_mean_nothing_pending(state, tmp_path):
    assert runtime.read() is None and runtime.pending() is None  # no background build: as before
    building(state, compile_log(tmp_path / "c.log"), 1000.0)
    runtime.mark("ready", "job.log", 1, path=state)
    assert runtime.pending() is None
    assert json.loads(state.read_text())["started"] == 1000.0  # when the build began is kept


@pytest.mark.parametrize("text", ["", "{", "[]", '{"state": "cooking"}', '{"state": "building", "pid": "x"}'])
def test_an_unreadable_state_file_is_no_state(state, text):
    state.write_text(text)
    assert runtime.read() is None and runtime.pending() is None


def test_mark_refuses_an_unknown_state(state):
    with pytest.raises(ValueError, match="state must be one of building, ready, failed"):
        runtime.mark("done", "x.log", 1)
    assert not state.exists()


@pytest.fixture
def being_built(state, tmp_path) -> Path:
    building(state, compile_log(tmp_path / "c.log", (10, 40)), time.time() - 30)
    return state


def test_the_local_provider_refuses_in_one_line_while_it_builds(being_built):
    from components.providers.base import ModelSpec, ProviderError
    from components.providers.factory import make_provider

    with pytest.raises(ProviderError) as info:
        make_provider(ModelSpec("local", "default"))
    message = str(info.value)
    assert "\n" not in message and "is being built, about 2 min left (10 of 40 compile steps done)" in message


def test_a_local_sweep_refuses_in_one_line_and_sends_nothing(being_built, tmp_path, capsys):
    from components.cli import main

    db = tmp_path / "runs.sqlite"
    assert main(["sweep", "quick-local", "--db", str(db), "--quiet"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("litm: ") and "is being built, about" in err[0], err


def test_doctor_says_it_is_being_built(being_built, capsys):
    from components.cli import main

    assert main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert "FAIL  The local model's runtime (llama-cpp-python for this CPU) is being built" in out
    assert "then litm doctor again" in out


def test_the_sidebar_says_it_is_being_built_and_offers_no_run(being_built, monkeypatch, tmp_path):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("LITM_DB", str(tmp_path / "runs.sqlite"))
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert not at.exception
    assert at.sidebar.selectbox(key="provider").value == "local"
    said = " ".join(i.value for i in at.sidebar.info).replace("\\", "")
    assert "is being built, about 2 min left" in said, said
    at.switch_page("playground/page.py").run()
    assert not at.exception
    assert any("is being built, about" in i.value.replace("\\", "") for i in at.info), [
        i.value for i in at.info
    ]


def test_the_build_waits_for_the_app_to_answer_first():
    """wait-app: True once the app's health check answers 200; False after its limit when nothing answers."""
    import http.server
    import threading

    class Health(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200 if self.path == "/_stcore/health" else 404)
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Health)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        assert runtime.wait_for_app(server.server_port, limit_s=30, every_s=0.05)
    finally:
        server.shutdown()
        server.server_close()
    assert not runtime.wait_for_app(server.server_port, limit_s=0.3, every_s=0.05)
