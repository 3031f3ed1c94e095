"""Batch results a provider gets wrong (the loopback server's batch_bad modes, tests/support/batch_routes.py):
every result line is checked like a live answer. A line with an unknown id, a malformed or mistyped line,
an absurd usage or an empty answer makes its request's trial an error of kind bad_response (never a
cached answer, never a wrong score); a batch is submitted once per stage whatever comes back, and
`--retry-errors` sends those requests again. Two batch sweeps on one store submit each request once."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys

import pytest

from components.run.store import RunStore
from tests.support.batch_routes import BAD_LINES
from tests.test_batch import ROOT, live_calls, sweep, write_toml

# the loopback server spoils OpenAI's and Anthropic's result lines (batch_routes.BAD_LINES); Gemini's
# unusable answers are checked by the same gemini_completion as a live call's (tests/test_cloud_providers.py)
BOTH = pytest.mark.parametrize("provider", ["openai", "anthropic"])


@pytest.fixture(autouse=True)
def _keys(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-batch-0000")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-batch-0000")


@pytest.fixture(autouse=True)
def _at_most_six_batches(server):
    """A client that resubmits in a loop (the bug these tests guard against) ends instead of running on."""
    server.set(batch_max=6)


def first_question(folder) -> str:
    from components.tasks.importers import read_tasks

    return read_tasks(folder / "facts.jsonl").tasks[0].question


def sent_ids(server) -> list[str]:
    """Every custom_id the server was sent, in every batch (a request sent twice appears twice)."""
    return [cid for b in server.batches.values() for cid, _ in b["requests"]]


@BOTH
@pytest.mark.parametrize("kind", BAD_LINES)
def test_a_bad_result_line_is_its_trials_error_and_retry_errors_sends_it_again(
    tmp_path, server, capsys, provider, kind
):
    toml, db = write_toml(tmp_path, server, provider), tmp_path / "runs.sqlite"
    server.set(batch_bad=kind, batch_bad_match=first_question(tmp_path))  # one task of three: 6 trials
    code = sweep(toml, db)
    out, err = capsys.readouterr()
    assert code == 3 and "Traceback" not in err, (code, out, err)
    assert "trials 18/18" in out and "errors 6" in out, out
    assert server.counts["batches"] == 1 and len(sent_ids(server)) == 18  # nothing went out twice
    trials = RunStore(db).trials_frame()
    failed = trials[trials["error"].notna()]
    assert len(failed) == 6 and set(failed["error_kind"]) == {"bad_response"}, failed[["error", "error_kind"]]
    assert failed["score"].isna().all() and trials[trials["error"].isna()]["score"].notna().all()
    with sqlite3.connect(db) as c:  # never cached: 12 answers stored, not 18
        assert c.execute("SELECT COUNT(*) FROM calls").fetchone()[0] == 12
    assert sweep(toml, db) == 3  # a plain rerun sends nothing: the errors stay errors
    assert server.counts["batches"] == 1
    server.set(batch_bad=None)
    assert sweep(toml, db, "--retry-errors") == 0
    assert "errors 0" in capsys.readouterr().out
    assert server.counts["batches"] == 2 and len(sent_ids(server)) == 18 + 6 and live_calls(server) == 0


@BOTH
@pytest.mark.parametrize("kind", ["unknown_id", "malformed"])
def test_a_batch_whose_every_line_is_bad_fails_once_with_one_line(tmp_path, server, capsys, provider, kind):
    toml, db = write_toml(tmp_path, server, provider), tmp_path / "runs.sqlite"
    server.set(batch_bad=kind)
    code = sweep(toml, db)
    out, err = capsys.readouterr()
    assert code == 3 and "Traceback" not in err, (out, err)
    lines = [x for x in err.splitlines() if x.strip()]
    batch_id = next(iter(server.batches))
    assert len(lines) == 1 and batch_id in lines[0] and "none of its 18 results could be used" in lines[0], (
        err
    )
    assert server.counts["batches"] == 1 and len(sent_ids(server)) == 18
    frame = RunStore(db).batches_frame()
    assert list(frame["state"]) == ["failed"] and batch_id in frame["reason"][0]
    trials = RunStore(db).trials_frame()
    assert len(trials) == 18 and set(trials["error_kind"]) == {"bad_response"}
    assert sweep(toml, db) == 3 and server.counts["batches"] == 1  # never resubmitted on its own
    server.set(batch_bad=None)
    assert sweep(toml, db, "--retry-errors") == 0
    assert server.counts["batches"] == 2 and len(sent_ids(server)) == 36


def test_bad_first_stage_lines_end_their_two_stage_trials(tmp_path, server, capsys):
    toml = write_toml(tmp_path, server, "openai", strategies=("rr",), params="{ k = 2, r = 300 }")
    db = tmp_path / "runs.sqlite"
    question = first_question(tmp_path)
    server.set(batch_bad="choices_zz", batch_bad_match=question)
    assert sweep(toml, db) == 3
    assert "errors 6" in capsys.readouterr().out
    assert server.counts["batches"] == 2 and len(set(sent_ids(server))) == len(sent_ids(server))
    second = list(server.batches.values())[1]["requests"]  # stage 2: only for the trials answered in stage 1
    assert second and not any(question in str(body["messages"]) for _, body in second)


def test_two_batch_sweeps_at_once_on_one_store_send_each_request_once(tmp_path, server):
    """Two `litm sweep --mode batch` processes on one store (R&R: two stages): every request goes out once."""
    server.set(batch_delay=0.5)
    toml = write_toml(tmp_path, server, "openai", strategies=("rr",), params="{ k = 2, r = 300 }", n_tasks=4)
    db = tmp_path / "runs.sqlite"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [
        sys.executable,
        "-m",
        "components.cli",
        "sweep",
        str(toml),
        "--db",
        str(db),
        "--quiet",
        "--poll-interval",
        "0.05",
    ]
    procs = [
        subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=240) for p in procs]
    for p, (out, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0 and b"Traceback" not in err, (out, err)
    ids = sent_ids(server)
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT COUNT(*), COUNT(DISTINCT trial_key) FROM trials").fetchone() == (24, 24)
        assert c.execute("SELECT COUNT(*) FROM trials WHERE error IS NOT NULL").fetchone()[0] == 0
        needed = c.execute("SELECT COUNT(DISTINCT call_key) FROM trial_calls").fetchone()[0]
    assert len(ids) == len(set(ids)) == needed, (len(ids), len(set(ids)), needed)  # 24 trials, two stages
    assert live_calls(server) == 0


def lost_row(toml, db) -> int:
    """A 'submitting' row with the sweep's first-stage requests, as a process killed before the provider
    created its batch leaves it (nothing reached the provider). Returns how many requests it holds."""
    from dataclasses import asdict

    from components.providers.factory import make_provider
    from components.run.batch import CacheCaller
    from components.run.config import SweepConfig
    from components.run.plan import plan, trial_document
    from components.strategies import get_strategy

    config, store = SweepConfig.from_toml(toml), RunStore(db)
    prov = make_provider(config.models[0].spec)
    caller = CacheCaller(prov, store, {}, set())
    for spec in plan(config):
        built = trial_document(spec, config.encoding, config.all_tasks().tasks)
        for p in get_strategy(spec.strategy).first_prompts(built.document, spec.task.question, spec.params):
            caller.want(p.messages, config.settings(spec.model, p.max_tokens))
    store.add_batch(None, prov.spec, [(k, m, asdict(s)) for k, (m, s) in caller.wanted.items()])
    store.close()
    return len(caller.wanted)


def foreign_batch(server, n: int) -> str:
    """A batch someone else made on the same account: n requests, none of ours."""
    import anthropic

    client = anthropic.Anthropic(api_key="sk-ant-test-batch-0000", base_url=server.anthropic_url)
    reqs = [
        {
            "custom_id": f"someone-else-{i}",
            "params": {
                "model": "claude-3-5-haiku-20241022",
                "max_tokens": 8,
                "messages": [{"role": "user", "content": f"hi {i}"}],
            },
        }
        for i in range(n)
    ]
    return client.messages.batches.create(requests=reqs).id


def test_a_lost_batch_is_never_taken_for_another_of_the_same_size(tmp_path, server, capsys, monkeypatch):
    """Our submission never reached the provider; another batch of the same size was created just after
    on the account: it is not taken for ours (its results answer other requests), ours go out again."""
    import components.run.batch as batch

    monkeypatch.setattr(batch, "LOST_AFTER", 1.0)
    toml, db = write_toml(tmp_path, server, "anthropic"), tmp_path / "runs.sqlite"
    other = foreign_batch(server, lost_row(toml, db))
    assert sweep(toml, db) == 0
    assert "trials 18/18" in capsys.readouterr().out
    frame = RunStore(db).batches_frame()
    assert other not in set(frame["batch_id"]) and list(frame["state"]) == ["failed", "collected"]
    assert server.counts["batches"] == 2 and len(RunStore(db).trials_frame().dropna(subset=["score"])) == 18


def test_cancel_never_cancels_a_batch_that_is_not_ours(tmp_path, server, capsys):
    server.set(batch_delay=60.0)
    toml, db = write_toml(tmp_path, server, "anthropic"), tmp_path / "runs.sqlite"
    other = foreign_batch(server, lost_row(toml, db))
    sweep(toml, db, "--cancel")
    assert server.counts["batch_cancels"] == 0 and server.batches[other]["cancelled_at"] is None
    assert other not in set(RunStore(db).batches_frame()["batch_id"])
