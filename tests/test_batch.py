"""Batch mode (components/run/batch.py) against the loopback server's batch protocols, all three providers
(OpenAI, Anthropic, Gemini):
a sweep completes; kill -9 while a batch is pending and resume: no second batch; a rerun sends
nothing; failed requests are trial errors; a two-stage strategy submits stage 2 after stage 1;
the estimate shows batch prices; cancel; budget; the provider's size limits split batches."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from components.cli import main
from components.providers.batches import split
from components.providers.pricing import cost_usd
from components.run.batch import run_batch_sweep
from components.run.config import SweepConfig
from components.run.estimate import estimate
from components.run.store import RunStore
from tests.support import facts_file
from tests.support.cloud_routes import LOOP_GEMINI_KEY

ROOT = Path(__file__).resolve().parent.parent
MODELS = {"openai": "gpt-4o-mini", "anthropic": "claude-3-5-haiku-20241022", "gemini": "gemini-2.5-flash"}
EVERY = pytest.mark.parametrize("provider", list(MODELS))  # each a priced model with a batch interface


@pytest.fixture(autouse=True)
def _keys(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-batch-0000")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-batch-0000")
    monkeypatch.setenv("GEMINI_API_KEY", LOOP_GEMINI_KEY)


def url_for(server, provider: str) -> str:
    return {"openai": server.openai_url, "anthropic": server.anthropic_url, "gemini": server.url}[provider]


def write_toml(
    folder: Path,
    server,
    provider: str,
    *,
    strategies=("baseline",),
    params="{ k = 2 }",
    mode="batch",
    n_tasks=3,
    budget="",
    name="bsweep",
) -> Path:
    tasks = facts_file(folder, max(n_tasks, 2))
    path = folder / f"{name}.toml"
    path.write_text(
        f"""[sweep]
name = "{name}"
mode = "{mode}"
tasks = "{tasks.name}"
n_tasks = {n_tasks}
lengths = [700, 1200]
positions = [0.0, 0.5, 1.0]
strategies = {list(strategies)!r}
params = {params}
{budget}
[[sweep.models]]
provider = "{provider}"
model = "{MODELS[provider]}"
base_url = "{url_for(server, provider)}"
""".replace("'", '"')
    )
    return path


def sweep(toml: Path, db: Path, *extra: str) -> int:
    return main(["sweep", str(toml), "--db", str(db), "--quiet", "--poll-interval", "0.05", *extra])


def live_calls(server) -> int:
    return server.counts["chat"] + server.counts["messages"] + server.counts["gemini"]


@EVERY
def test_batch_sweep_completes_then_rerun_sends_nothing(tmp_path, server, capsys, provider):
    toml, db = write_toml(tmp_path, server, provider), tmp_path / "runs.sqlite"
    assert sweep(toml, db) == 0
    out = capsys.readouterr().out
    assert "done" in out and "trials 18/18" in out and "calls sent 18," in out and "errors 0" in out
    assert server.counts["batches"] == 1 and server.counts["batch_requests"] == 18 and live_calls(server) == 0
    trials = RunStore(db).trials_frame()
    assert len(trials) == 18 and trials["error"].isna().all() and (trials["cached_calls"] == 0).all()
    # each trial is priced at batch prices: half the list price of its tokens
    row = trials.iloc[0]
    full = cost_usd(provider, MODELS[provider], int(row["input_tokens"]), int(row["output_tokens"]))
    assert row["cost_usd"] == pytest.approx(full / 2) and row["cost_usd"] > 0
    # every result is a normal cached call: a live rerun of the same grid sends nothing either
    assert sweep(toml, db) == 0
    assert "calls sent 0," in capsys.readouterr().out
    assert main(["sweep", str(toml), "--db", str(db), "--quiet", "--mode", "live"]) == 0
    assert server.counts["batches"] == 1 and live_calls(server) == 0
    frame = RunStore(db).batches_frame()
    assert list(frame["state"]) == ["collected"] and list(frame["succeeded"]) == [18]
    assert b"sk-test-batch" not in db.read_bytes() and b"sk-ant-test-batch" not in db.read_bytes()


def _wait_for(predicate, timeout: float = 90.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError("timed out")


def _submitted(db: Path) -> bool:
    if not db.exists():
        return False
    try:
        with sqlite3.connect(db, timeout=1) as c:
            return bool(c.execute("SELECT COUNT(*) FROM batches WHERE state = 'submitted'").fetchone()[0])
    except sqlite3.OperationalError:  # not migrated yet
        return False


def _stage_two_out(db: Path) -> bool:
    try:
        with sqlite3.connect(db, timeout=1) as c:
            return (
                c.execute("SELECT COUNT(*) FROM batches WHERE state = 'submitted'").fetchone()[0] == 1
                and c.execute("SELECT COUNT(*) FROM batches WHERE state = 'collected'").fetchone()[0] == 1
            )
    except sqlite3.OperationalError:
        return False


def kill_while_pending(toml: Path, db: Path, pending=_submitted) -> None:
    """`litm sweep` in its own process, killed with SIGKILL once its batch is submitted and polled."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "components.cli",
            "sweep",
            str(toml),
            "--db",
            str(db),
            "--quiet",
            "--poll-interval",
            "0.1",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_for(lambda: pending(db) or proc.poll() is not None)
        assert proc.poll() is None, "the sweep ended before it could be killed"
        time.sleep(0.3)  # it is polling now
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()


@EVERY
def test_kill_9_while_pending_then_resume_submits_no_second_batch(tmp_path, server, capsys, provider):
    server.set(batch_delay=6.0)
    toml, db = write_toml(tmp_path, server, provider), tmp_path / "runs.sqlite"
    kill_while_pending(toml, db)
    assert server.counts["batches"] == 1 and server.counts["batch_polls"] >= 1
    assert RunStore(db).trials_frame().empty  # nothing came back before the kill
    assert sweep(toml, db) == 0  # resume: polls the same batch, stores its results
    out = capsys.readouterr().out
    assert "trials 18/18" in out and "calls sent 0," in out
    assert server.counts["batches"] == 1 and server.counts["batch_requests"] == 18 and live_calls(server) == 0
    assert len(RunStore(db).trials_frame().dropna(subset=["score"])) == 18


def test_kill_9_while_stage_two_is_pending_then_resume(tmp_path, server, capsys):
    server.set(batch_delay=3.0)
    toml = write_toml(tmp_path, server, "openai", strategies=("rr",), params="{ k = 2, r = 300 }")
    db = tmp_path / "runs.sqlite"
    kill_while_pending(toml, db, _stage_two_out)
    assert server.counts["batches"] == 2
    assert sweep(toml, db) == 0
    out = capsys.readouterr().out
    assert "trials 18/18" in out and "calls sent 0," in out and "errors 0" in out
    assert server.counts["batches"] == 2 and server.counts["batch_requests"] == len(
        {cid for b in server.batches.values() for cid, _ in b["requests"]}
    )  # no request went out twice


@EVERY
def test_failed_requests_are_trial_errors_and_retry_errors_resubmits_only_them(
    tmp_path, server, capsys, provider
):
    from components.tasks.importers import read_tasks

    toml, db = write_toml(tmp_path, server, provider), tmp_path / "runs.sqlite"
    question = read_tasks(tmp_path / "facts.jsonl").tasks[0].question
    server.set(batch_fail_match=question)
    assert sweep(toml, db) == 3  # errors are recorded, the sweep is done; exit 3: trials in error
    assert "errors 6" in capsys.readouterr().out  # one task of three, 6 cells each
    trials = RunStore(db).trials_frame()
    failed = trials[trials["error"].notna()]
    assert len(failed) == 6 and set(failed["question"]) == {question}
    assert set(failed["error_kind"]) == {"batch"} and failed["error"].str.contains("simulated 500").all()
    assert failed["score"].isna().all() and trials[trials["error"].isna()]["score"].notna().all()
    server.set(batch_fail_match=None)
    assert sweep(toml, db, "--retry-errors") == 0
    assert "errors 0" in capsys.readouterr().out
    assert server.counts["batches"] == 2 and server.counts["batch_requests"] == 18 + 6


@EVERY
def test_two_stage_rr_submits_stage_two_after_stage_one(tmp_path, server, capsys, provider):
    toml = write_toml(tmp_path, server, provider, strategies=("rr",), params="{ k = 2, r = 300 }")
    db = tmp_path / "runs.sqlite"
    assert sweep(toml, db) == 0
    assert "errors 0" in capsys.readouterr().out
    trials = RunStore(db).trials_frame()
    assert (
        len(trials) == 18 and (trials["calls"] == 2).all() and trials["retrieved_pages"].map(len).gt(0).all()
    )
    first, second = list(server.batches.values())
    assert server.counts["batches"] == 2 and len(first["requests"]) == 18
    assert second["created"] >= first["created"] + first["delay"]  # stage 2 went out once stage 1 was back
    stage2 = str(second["requests"][0][1].get("messages") or second["requests"][0][1].get("contents"))
    assert "Page" in stage2 or "page" in stage2
    assert live_calls(server) == 0


def test_chunked_icr_sends_every_chunk_in_the_first_batch(tmp_path, server, capsys):
    toml = write_toml(tmp_path, server, "openai", strategies=("chunked-icr",), params="{ k = 1, c = 300 }")
    assert sweep(toml, tmp_path / "runs.sqlite") == 0
    trials = RunStore(tmp_path / "runs.sqlite").trials_frame()
    assert trials["error"].isna().all() and (trials["calls"] > 2).any()
    first, second = list(server.batches.values())
    # every retrieval call of a trial (one per chunk) is in batch 1, every answer call in batch 2
    store = RunStore(tmp_path / "runs.sqlite")
    calls = [[c["key"] for c in store.calls_for_trial(t)] for t in trials["trial_id"]]
    assert {cid for cid, _ in first["requests"]} == {k for keys in calls for k in keys[:-1]}
    assert {cid for cid, _ in second["requests"]} == {keys[-1] for keys in calls}


@EVERY
def test_estimate_shows_batch_prices(tmp_path, server, capsys, provider):
    toml = write_toml(tmp_path, server, provider, strategies=("baseline", "icr"))
    batch = estimate(SweepConfig.from_toml(toml))
    live = estimate(SweepConfig.from_stored({**SweepConfig.from_toml(toml).to_dict(), "mode": "live"}))
    assert (
        batch.usd == pytest.approx(live.usd / 2)
        and batch.usd > 0
        and batch.list_usd == pytest.approx(live.usd)
    )
    assert main(["sweep", str(toml), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert f"${batch.usd:,.4f} at batch prices (half of ${live.usd:,.4f} live)" in out
    assert main(["sweep", str(toml), "--dry-run", "--mode", "live"]) == 0
    out = capsys.readouterr().out
    assert f"${live.usd:,.4f}" in out and "batch prices" not in out
    assert server.counts["total"] + server.counts["batches"] == 0


@EVERY
def test_cancel_cancels_the_provider_batch_and_a_rerun_sends_the_rest(tmp_path, server, provider):
    server.set(batch_delay=30.0)
    toml, db = write_toml(tmp_path, server, provider), tmp_path / "runs.sqlite"
    store, cancel = RunStore(db), threading.Event()
    seen = []

    def progress(p):
        seen.append(p.batch)
        if server.counts["batches"] and p.batch.startswith("batch 1/1"):
            cancel.set()

    t0 = time.monotonic()
    summary = run_batch_sweep(
        SweepConfig.from_toml(toml), store, cancel=cancel, progress=progress, poll_interval=0.05
    )
    assert summary.status == "cancelled" and time.monotonic() - t0 < 20
    assert server.counts["batch_cancels"] == 1 and summary.done < 18
    assert any(w in s for s in seen for w in ("in_progress", "processing", "running"))  # its own status
    assert list(store.batches_frame()["state"]) == ["collected"]
    server.set(batch_delay=0.0)
    again = run_batch_sweep(SweepConfig.from_toml(toml), store, poll_interval=0.05)
    assert again.status == "done" and again.done == 18 and server.counts["batches"] == 2
    assert again.calls_sent == 18 - summary.done


def test_cli_cancel_cancels_a_pending_batch_left_by_a_killed_process(tmp_path, server, capsys):
    server.set(batch_delay=60.0)
    toml, db = write_toml(tmp_path, server, "openai"), tmp_path / "runs.sqlite"
    kill_while_pending(toml, db)
    assert sweep(toml, db, "--cancel") == 4  # cancelled, not done: exit 4 (stopped early)
    out = capsys.readouterr().out
    assert "1 batch(es) cancelled at the provider" in out and "calls sent 0," in out
    assert server.counts["batch_cancels"] == 1 and server.counts["batches"] == 1
    assert list(RunStore(db).batches_frame()["state"]) == ["collected"]


def test_budget_max_calls_limits_what_is_submitted(tmp_path, server, capsys):
    toml = write_toml(tmp_path, server, "openai", budget="[sweep.budget]\nmax_calls = 5")
    assert sweep(toml, tmp_path / "runs.sqlite") == 4  # stopped early by the budget
    out = capsys.readouterr().out
    assert "budget: max_calls 5 reached" in out and "calls sent 5," in out and "trials 5/18" in out
    assert server.counts["batch_requests"] == 5


def test_budget_max_usd_counts_batch_prices(tmp_path, server, capsys):
    toml = write_toml(tmp_path, server, "openai", budget="[sweep.budget]\nmax_usd = 0.0003")
    assert sweep(toml, tmp_path / "runs.sqlite") == 4  # stopped early by the budget
    assert "budget: max_usd" in capsys.readouterr().out
    assert 0 < server.counts["batch_requests"] < 18


def test_size_limits_split_requests_into_batches(tmp_path, server, capsys, monkeypatch):
    from components.providers.batches import OpenAIBatches

    assert split([10] * 5, 2, 10_000) == [[0, 1], [2, 3], [4]]
    assert split([100, 100, 100], 10, 2 * (100 + 64)) == [[0, 1], [2]]
    assert split([10, 10_000, 10], 10, 1_000) == [[0, 2]]  # too large on its own: left out
    monkeypatch.setattr(OpenAIBatches, "max_requests", 7)
    toml = write_toml(tmp_path, server, "openai")
    assert sweep(toml, tmp_path / "runs.sqlite") == 0
    assert server.counts["batches"] == 3 and server.counts["batch_requests"] == 18
    assert sorted(len(b["requests"]) for b in server.batches.values()) == [4, 7, 7]


def test_wanted_requests_are_submitted_in_parts_to_bound_memory(tmp_path, server, capsys, monkeypatch):
    import components.run.batch as batch

    monkeypatch.setattr(batch, "PART_BYTES", 1)  # every trial's request goes out as soon as it is wanted
    toml = write_toml(tmp_path, server, "anthropic", strategies=("icr",))
    assert sweep(toml, tmp_path / "runs.sqlite") == 0
    assert "errors 0" in capsys.readouterr().out
    assert server.counts["batches"] > 18 and all(len(b["requests"]) == 1 for b in server.batches.values())


@EVERY
def test_a_batch_lost_between_create_and_saving_its_id_is_found_again(tmp_path, server, capsys, provider):
    """A process killed right after the provider created its batch (before the id was saved) leaves a
    'submitting' row; the resume finds that batch (OpenAI: the row's token in the batch's metadata;
    Anthropic: the one unknown batch of that size created just after the row), never submitting twice."""
    import asyncio
    from dataclasses import asdict

    from components.providers.batches import batch_api
    from components.providers.factory import make_provider
    from components.run.batch import BatchRun, CacheCaller

    toml, db = write_toml(tmp_path, server, provider), tmp_path / "runs.sqlite"
    config, store = SweepConfig.from_toml(toml), RunStore(db)
    run = BatchRun(config, store, None, threading.Event(), {}, False, {}, 0.05)
    prov = make_provider(config.models[0].spec)
    caller = CacheCaller(prov, store, {}, set())
    run.callers = {config.models[0].label: caller}

    async def half_submit():
        from components.run.plan import plan, trial_document

        for spec in plan(config):
            built = trial_document(spec, config.encoding, config.all_tasks().tasks)
            from components.strategies import get_strategy

            for p in get_strategy(spec.strategy).first_prompts(
                built.document, spec.task.question, spec.params
            ):
                caller.want(p.messages, config.settings(spec.model, p.max_tokens))
        api = batch_api(prov)
        reqs = [(k, m, asdict(s)) for k, (m, s) in caller.wanted.items()]
        _, token = store.add_batch(None, prov.spec, reqs)
        await api.submit([api.request(k, m, s) for k, (m, s) in caller.wanted.items()], token)
        await prov.aclose()

    asyncio.run(half_submit())
    assert server.counts["batches"] == 1 and store.batch_rows()[0]["state"] == "submitting"
    assert sweep(toml, db) == 0
    assert "calls sent 0," in capsys.readouterr().out and server.counts["batches"] == 1
    assert list(store.batches_frame()["state"]) == ["collected"]


def test_config_mode_is_checked(tmp_path, server, capsys):
    toml = write_toml(tmp_path, server, "openai", mode="sometimes")
    assert main(["sweep", str(toml)]) == 1
    assert "mode must be one of live, batch" in capsys.readouterr().err
    fake = tmp_path / "fake.toml"
    fake.write_text(
        write_toml(tmp_path, server, "openai").read_text().replace('provider = "openai"', 'provider = "fake"')
    )
    assert main(["sweep", str(fake)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "fake:gpt-4o-mini has no batch interface" in err
    live = write_toml(tmp_path, server, "openai", mode="live", name="live")
    assert main(["sweep", str(live), "--cancel"]) == 1
    assert "are for batch mode" in capsys.readouterr().err
    assert (
        "mode" not in SweepConfig.from_toml(live).to_dict()
    )  # live is the default: stored configs stay as they were
    batch = SweepConfig.from_toml(write_toml(tmp_path, server, "openai", name="b2"))
    assert SweepConfig.from_stored(batch.to_dict()).mode == "batch"
