"""The sweep runner: cache, resume (also after SIGKILL), budget, errors, cancel, progress, run_one."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

from components.core.documents import make_document
from components.providers.base import ModelSpec, RateLimited, Settings, cache_key
from components.providers.fake import FakeProvider
from components.run.config import SweepConfig
from components.run.runner import run_one, run_sweep
from components.run.store import RunStore
from tests.support import sweep_toml

ROOT = Path(__file__).resolve().parent.parent
COMPARE = [
    "trial_key",
    "task",
    "strategy",
    "model",
    "length",
    "position",
    "actual_length",
    "actual_position",
    "answer",
    "raw_answer",
    "score",
    "subspan_em",
    "exact",
    "page_recall",
    "page_precision",
    "error",
    "calls",
    "input_tokens",
    "output_tokens",
    "gold_pages",
    "retrieved_pages",
]


def config(tmp_path, server, **kw) -> SweepConfig:
    return SweepConfig.from_toml(sweep_toml(tmp_path, base_url=server.openai_url, **kw))


def rows(store, sweep=None):
    f = store.trials_frame(sweep)
    return sorted(json.dumps({c: f.loc[i, c] for c in COMPARE}, default=str, sort_keys=True) for i in f.index)


def body_keys(server) -> list[str]:
    """The cache key of every request the server received (recomputed from the wire body)."""
    out = []
    for raw in server.raw_bodies:
        b = json.loads(raw)
        spec = ModelSpec("openai-compatible", b["model"], server.openai_url)
        out.append(cache_key(spec, b["messages"], Settings(b["max_tokens"], b["temperature"], b.get("seed"))))
    return out


def test_sweep_runs_scores_and_second_run_sends_nothing(tmp_path, server):
    c = config(tmp_path, server)
    store = RunStore(tmp_path / "s.sqlite")
    seen = []
    first = run_sweep(c, store, progress=seen.append)
    assert first.status == "done" and first.total == 3 * 2 * 3 * 2 and first.ran == first.total
    frame = store.trials_frame()
    assert len(frame) == first.total and frame["error"].isna().all()
    assert 0 < frame["score"].mean() <= 1  # meaningful answers from the loopback server
    icr = frame[frame.strategy == "icr"]
    assert (icr["calls"] == 2).all() and icr["retrieved_pages"].map(len).min() >= 1
    assert set(frame["page_recall"].dropna()) <= {0.0, 1.0}
    sent = server.counts["total"]
    assert sent == first.calls_sent and sent == len(set(body_keys(server)))  # no call sent twice
    assert seen and seen[-1].done == first.total and seen[-1].total == first.total
    again = run_sweep(c, store)
    assert again.calls_sent == 0 and again.skipped == first.total and server.counts["total"] == sent
    assert store.sweeps_frame().iloc[0]["status"] == "done"


def test_same_prompts_in_a_new_sweep_come_from_the_cache(tmp_path, server):
    store = RunStore(tmp_path / "s.sqlite")
    run_sweep(config(tmp_path, server, strategies=("baseline",)), store)
    sent = server.counts["total"]
    other = run_sweep(config(tmp_path, server, name="other", strategies=("baseline",)), store)
    assert server.counts["total"] == sent and other.cached_calls == other.total and other.calls_sent == 0
    assert store.trials_frame("other")["error"].isna().all()


def test_identical_prompts_in_flight_are_sent_once(tmp_path, server):
    # reprompt with r larger than the document has no reminder: the very prompt baseline sends
    c = config(tmp_path, server, strategies=("baseline", "reprompt"), params="{ r = 100000 }", concurrency=8)
    server.set(delay=0.1)
    s = run_sweep(c, RunStore(tmp_path / "s.sqlite"))
    assert s.ran == 36 and server.counts["total"] == 18 and s.cached_calls == 18


def test_spare_workers_never_exceed_the_concurrency(tmp_path, server):
    # 36 trials, 4 calls at a time: the spare workers (runner.workers_for) wait at the Caller's semaphore
    c = config(tmp_path, server, concurrency=4)
    server.set(delay=0.05)
    s = run_sweep(c, RunStore(tmp_path / "s.sqlite"))
    assert s.status == "done" and s.calls_sent == server.counts["total"] > 4
    assert server.counts["peak"] == 4  # in flight at once: the concurrency, reached and never passed


def test_budget_cap_stops_cleanly(tmp_path, server):
    c = config(tmp_path, server, budget="[sweep.budget]\nmax_calls = 5", concurrency=2)
    store = RunStore(tmp_path / "s.sqlite")
    s = run_sweep(c, store)
    assert s.status == "cancelled" and "max_calls 5" in s.reason
    assert server.counts["total"] <= 5
    frame = store.trials_frame()
    assert frame["error"].isna().all() and len(frame) < s.total  # stopped trials are absent, not errors
    assert store.sweeps_frame().iloc[0]["reason"] == s.reason
    more = run_sweep(SweepConfig.from_toml(sweep_toml(tmp_path, base_url=server.openai_url)), store)
    assert more.status == "done" and more.skipped == len(frame)


def test_dollar_budget(tmp_path, server, monkeypatch):
    prices = tmp_path / "p.json"
    prices.write_text(
        json.dumps({"models": {"openai-compatible": {"loop-model": {"input": 1000, "output": 0}}}})
    )
    monkeypatch.setenv("LITM_PRICES", str(prices))
    import components.providers.pricing as pricing
    import components.run.caller as caller

    pricing.reload()
    monkeypatch.setattr(caller, "cost_usd", pricing.cost_usd)
    try:
        c = config(tmp_path, server, budget="[sweep.budget]\nmax_usd = 0.5", concurrency=1)
        s = run_sweep(c, RunStore(tmp_path / "s.sqlite"))
        assert s.status == "cancelled" and "max_usd" in s.reason and 0.5 <= s.spend_usd < 3
    finally:
        monkeypatch.delenv("LITM_PRICES")
        pricing.reload()


def test_errors_are_recorded_not_scored_and_retried_later(tmp_path, server):
    c = config(tmp_path, server, strategies=("baseline",), extra_model="max_retries = 0")
    store = RunStore(tmp_path / "s.sqlite")
    tasks = c.load_tasks()
    server.set(fail_match=tasks[0].question)
    s = run_sweep(c, store)
    frame = store.trials_frame()
    bad = frame[frame.task == tasks[0].id]
    assert s.errors == len(bad) == 6 and bad["score"].isna().all() and bad["subspan_em"].isna().all()
    assert bad["error"].str.contains("500").all() and frame[frame.task != tasks[0].id]["error"].isna().all()
    assert s.status == "done" and "retry-errors" in s.reason
    server.set(fail_match=None)
    assert run_sweep(c, store).calls_sent == 0  # a plain rerun leaves errors alone
    fixed = run_sweep(c, store, retry_errors=True)
    assert fixed.ran == 6 and fixed.errors == 0 and store.trials_frame()["error"].isna().all()
    assert len(store.trials_frame()) == 18


def test_cancel_stops_and_resume_finishes(tmp_path, server):
    c = config(tmp_path, server, concurrency=2)
    server.set(delay=0.05)
    store = RunStore(tmp_path / "s.sqlite")
    cancel = threading.Event()

    def progress(p):
        if p.done >= 4:
            cancel.set()

    s = run_sweep(c, store, progress=progress, cancel=cancel)
    assert s.status == "cancelled" and s.reason == "cancelled by the user" and s.done < s.total
    done = run_sweep(c, store)
    assert done.status == "done" and done.done == done.total and len(store.trials_frame()) == done.total


def test_rate_limited_calls_wait_and_retry(tmp_path):
    fake = FakeProvider(ModelSpec("fake", "fake")).enqueue(RateLimited("429", retry_after=0.3))
    c = SweepConfig.from_dict(
        {
            "sweep": {
                "name": "rl",
                "tasks": str(sweep_toml(tmp_path, base_url="x").parent / "facts.jsonl"),
                "n_tasks": 1,
                "lengths": [300],
                "positions": [0.0],
                "strategies": ["baseline"],
                "models": [{"provider": "fake", "model": "fake", "requests_per_minute": 600}],
            }
        }
    )
    t0 = time.perf_counter()
    s = run_sweep(c, RunStore(tmp_path / "s.sqlite"), providers={"fake:fake": fake})
    assert time.perf_counter() - t0 >= 0.3 and s.errors == 0 and len(fake.history) == 2


def test_run_one_is_cached(tmp_path):
    doc = make_document(
        ["Bread is baked daily.", "The capital of Zorbia is Quenton.", "Tin is mined."], gold=[2]
    )
    store = RunStore(tmp_path / "s.sqlite")
    fake = FakeProvider()
    spec = ModelSpec("fake", "fake")
    ran = run_one(
        doc, "What is the capital of Zorbia?", ["Quenton"], "icr", {"k": 2}, spec, store, provider=fake
    )
    r = ran.trial
    assert r.error is None and r.score == 1.0 and r.calls == 2 and r.page_recall == 1.0
    assert r.retrieved_pages == [2] and len(ran.outcome.prompts) == 2
    assert r.metric == "fuzzy" and r.primary == 1.0 and r.model == "fake:fake" and r.params == '{"k": 2}'
    again = run_one(
        doc, "What is the capital of Zorbia?", ["Quenton"], "icr", {"k": 2}, spec, store, provider=fake
    ).trial
    assert len(fake.history) == 2 and again.cached_calls == 2 and again.answer == r.answer
    bad = run_one(
        doc, "What is the capital of Zorbia?", ["Quenton"], "icr", {"k": 9}, spec, store, provider=fake
    ).trial
    assert bad.score is None and "k = 9" in bad.error and bad.primary is None


def _count(db: Path) -> int:
    try:
        with sqlite3.connect(db, timeout=5) as conn:
            return conn.execute("SELECT COUNT(*) FROM trials").fetchone()[0]
    except sqlite3.Error:
        return 0


def test_sigkill_mid_sweep_then_resume(tmp_path, server):
    toml = sweep_toml(
        tmp_path,
        base_url=server.openai_url,
        strategies=("baseline", "icr", "rr"),
        params="{ k = 2, r = 150 }",
        concurrency=4,
    )
    server.set(delay=0.05)
    db = tmp_path / "killed.sqlite"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "components.cli", "sweep", str(toml), "--db", str(db), "--quiet"]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while _count(db) < 10 and time.time() < deadline and proc.poll() is None:
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert 10 <= _count(db) < 54, "the sweep should have been killed part-way"
    killed_store = RunStore(db)
    cached_before = {r[0] for r in killed_store.db.execute("SELECT key FROM calls")}
    n_before = len(server.raw_bodies)

    assert subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True).returncode == 0
    keys = body_keys(server)
    resent = [k for k in keys[n_before:] if k in cached_before]
    assert resent == [], "a call already in the store was sent again"
    assert len(keys) - len(set(keys)) <= 4  # at most the calls in flight at the kill (concurrency 4)
    frame = killed_store.trials_frame()
    assert len(frame) == 54 and frame["trial_key"].is_unique and frame["error"].isna().all()

    sent = server.counts["total"]
    clean = RunStore(tmp_path / "clean.sqlite")
    run_sweep(SweepConfig.from_toml(toml), clean)
    assert rows(clean) == rows(killed_store)
    assert server.counts["total"] > sent  # (the clean run used its own store)


def test_documents_draw_distractors_from_the_whole_task_file(tmp_path):
    """n_tasks picks the questions; the distractor pool is every task in the file (R&R §4.1), so a
    document longer than one task's own passages still builds."""
    from components.tasks.generators import generate
    from components.tasks.importers import write_tasks

    write_tasks(generate("facts", 12, 3), tmp_path / "facts.jsonl")
    (tmp_path / "s.toml").write_text(
        '[sweep]\nname = "pool"\ntasks = "facts.jsonl"\nn_tasks = 1\nlengths = [4000]\npositions = [0.5]\n'
        'strategies = ["baseline"]\n[[sweep.models]]\nprovider = "fake"\nmodel = "fake"\n'
    )
    cfg = SweepConfig.from_toml(tmp_path / "s.toml")
    store = RunStore(tmp_path / "runs.sqlite")
    run_sweep(
        cfg, store, providers={cfg.models[0].label: FakeProvider(responder=lambda m, s: "Answer: x\nPage: 1")}
    )
    f = store.trials_frame()
    assert len(f) == 1
    assert f.loc[0, "error"] in (None, "") or f.loc[0, "error"] != f.loc[0, "error"]  # no error (None/NaN)
    assert abs(int(f.loc[0, "actual_length"]) - 4000) < 400


def test_sweeps_pace_garbage_collection_and_put_the_thresholds_back(tmp_path):
    """While a sweep runs, the collector's thresholds are components.run.gcpace's (fewer collections);
    after it, whatever was set before is back, also after a sweep that failed."""
    import gc

    from components.run.gcpace import SWEEP_THRESHOLDS, paced

    seen = []

    class Recording(FakeProvider):
        async def complete(self, messages, settings):
            seen.append(gc.get_threshold())
            return await super().complete(messages, settings)

    before = gc.get_threshold()
    gc.set_threshold(900, 11, 12)
    try:
        c = SweepConfig.from_dict(
            {
                "sweep": {
                    "name": "gc",
                    "tasks": str(sweep_toml(tmp_path, base_url="x").parent / "facts.jsonl"),
                    "n_tasks": 2,
                    "lengths": [300],
                    "positions": [0.0],
                    "strategies": ["baseline"],
                    "models": [{"provider": "fake", "model": "fake"}],
                }
            }
        )
        s = run_sweep(
            c, RunStore(tmp_path / "s.sqlite"), providers={"fake:fake": Recording(ModelSpec("fake", "fake"))}
        )
        assert s.errors == 0
        assert seen and set(seen) == {SWEEP_THRESHOLDS}
        assert gc.get_threshold() == (900, 11, 12)
        with paced():  # nested: the inner end keeps the sweep's pace, the outer one restores
            with paced():
                pass
            assert gc.get_threshold() == SWEEP_THRESHOLDS
        assert gc.get_threshold() == (900, 11, 12)
        try:
            with paced():
                raise RuntimeError("a sweep that failed")
        except RuntimeError:
            pass
        assert gc.get_threshold() == (900, 11, 12)
    finally:
        gc.set_threshold(*before)


def test_documents_are_kept_up_to_a_bound_and_rebuilt_the_same(tmp_path, server):
    from components.run.plan import Documents, plan

    c = config(tmp_path, server)
    specs = plan(c)
    cells = list(dict.fromkeys(s.document_key for s in specs))
    assert len(cells) > 3
    docs = Documents(c.encoding, c.all_tasks().tasks, keep=3)
    first = {s.document_key: docs.get(s) for s in specs}
    assert len(docs.kept) == 3 and list(docs.kept) == cells[-3:]  # the most recently used
    assert docs.get(specs[-1]) is first[specs[-1].document_key]  # kept: the same object
    again = docs.get(specs[0])  # evicted long ago: built again, and the same document
    assert (
        again is not first[specs[0].document_key] and again.document == first[specs[0].document_key].document
    )
    assert len(docs.kept) == 3


def test_a_plan_made_once_is_run_as_given(tmp_path, server, monkeypatch):
    """The app plans a sweep to count it and passes that plan along: the runner does not plan again."""
    from components.run import runner
    from components.run.plan import plan

    c = config(tmp_path, server, strategies=("baseline",))
    specs = plan(c)
    monkeypatch.setattr(
        runner, "plan", lambda *a, **k: (_ for _ in ()).throw(AssertionError("planned again"))
    )
    store = RunStore(tmp_path / "once.sqlite")
    done = run_sweep(c, store, specs=specs)
    assert done.status == "done" and done.total == done.ran == len(specs)
    assert set(store.trials_frame()["trial_key"]) == {s.key for s in specs}
