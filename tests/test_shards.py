"""Sweeps across machines: `litm sweep CONFIG --shard I/N` runs a part of the plan into its own store, and
`litm import` merges the parts' stores into one: the same trial keys and scores as the sweep run whole,
nothing lost or doubled, a rerun against the merged store sends nothing. Against the loopback server."""

from __future__ import annotations

import sqlite3

import pytest

from components.cli import main
from components.run.config import SweepConfig
from components.run.plan import parse_shard, plan, shard
from components.run.store import RunStore
from tests.support import sweep_toml

SCORES = ["trial_key", "score", "answer", "error", "calls", "input_tokens", "output_tokens", "cost_usd"]


def trials(db) -> dict[str, tuple]:
    with RunStore.for_reading(db) as store:
        frame = store.trials_frame()
    return {r["trial_key"]: tuple(r[c] for c in SCORES[1:]) for _, r in frame.iterrows()}


def sweep(toml, db, *extra) -> int:
    return main(["sweep", str(toml), "--db", str(db), "--quiet", *extra])


@pytest.fixture
def config_toml(tmp_path, server):
    return sweep_toml(tmp_path, base_url=server.openai_url, n_tasks=4)  # 4 questions x 6 cells x 2 strategies


def test_two_parts_are_disjoint_and_merge_into_the_whole_sweep(tmp_path, server, config_toml, capsys):
    whole, parts = tmp_path / "whole.sqlite", [tmp_path / f"part{i}.sqlite" for i in range(2)]
    assert sweep(config_toml, whole) == 0
    sent_whole = server.counts["total"]
    for i, part in enumerate(parts):
        assert sweep(config_toml, part, "--shard", f"{i}/2") == 0
    out = capsys.readouterr().out
    assert (
        "part 0/2 of the sweep: 24 of its trials" in out and "part 1/2 of the sweep: 24 of its trials" in out
    )
    keys = [set(trials(p)) for p in parts]
    assert keys[0] and keys[1] and not keys[0] & keys[1]  # disjoint
    assert keys[0] | keys[1] == set(trials(whole))  # together, the whole plan
    assert server.counts["total"] == 2 * sent_whole  # each part sent only its own calls (fresh stores)

    merged = tmp_path / "merged.sqlite"
    assert main(["import", str(parts[0]), str(parts[1]), "--db", str(merged)]) == 0
    out = capsys.readouterr().out
    assert "merged part0.sqlite: 24 trial(s) added, 0 already there" in out
    assert "merged part1.sqlite: 24 trial(s) added, 0 already there" in out and "into 'demo'" in out
    assert trials(merged) == trials(whole)  # the same keys, answers, scores, counts and costs
    with RunStore.for_reading(merged) as store:
        sweeps = store.sweeps_frame()
    assert list(sweeps["name"]) == ["demo"] and list(sweeps["status"]) == ["done"]
    assert int(sweeps["trials"].iloc[0]) == 48

    # merging a part again doubles nothing; a rerun against the merged store sends nothing
    assert main(["import", str(parts[1]), "--db", str(merged)]) == 0
    assert "0 trial(s) added, 24 already there" in capsys.readouterr().out
    assert trials(merged) == trials(whole)
    before = server.counts["total"]
    assert sweep(config_toml, merged) == 0
    assert server.counts["total"] == before
    assert "trials 48/48 (ran 0, already present 48)" in capsys.readouterr().out


def test_a_failed_trial_is_replaced_by_the_other_stores_answer(tmp_path, config_toml, capsys):
    part, other = tmp_path / "part.sqlite", tmp_path / "other.sqlite"
    assert sweep(config_toml, part, "--shard", "0/2") == 0
    assert sweep(config_toml, other, "--shard", "0/2") == 0
    key = next(iter(trials(part)))
    with sqlite3.connect(part) as db:  # one trial failed on that machine
        db.execute("UPDATE trials SET error = 'timeout', score = NULL WHERE trial_key = ?", (key,))
    merged = tmp_path / "merged.sqlite"
    assert main(["import", str(part), str(other), "--db", str(merged)]) == 0
    out = capsys.readouterr().out
    assert "24 trial(s) added" in out and "1 failed one(s) replaced by an answer, " in out
    assert trials(merged) == trials(other)


def test_a_sweep_of_the_same_name_and_another_config_stays_apart(tmp_path, server, capsys):
    a = sweep_toml(tmp_path, base_url=server.openai_url, n_tasks=2)
    store_a = tmp_path / "a.sqlite"
    assert sweep(a, store_a) == 0
    b = sweep_toml(tmp_path, base_url=server.openai_url, n_tasks=3)  # same name "demo", other tasks
    store_b = tmp_path / "b.sqlite"
    assert sweep(b, store_b) == 0
    assert main(["import", str(store_b), "--db", str(store_a)]) == 0
    assert "into 'demo (imported " in capsys.readouterr().out
    with RunStore.for_reading(store_a) as store:
        assert len(store.sweeps_frame()) == 2


def test_a_store_is_not_merged_into_itself(tmp_path, config_toml, capsys):
    db = tmp_path / "x.sqlite"
    assert sweep(config_toml, db, "--shard", "1/3") == 0
    assert main(["import", str(db), "--db", str(db)]) == 1
    assert "is the store being merged into (--db)" in capsys.readouterr().err


@pytest.mark.parametrize("text", ["2/2", "1", "a/b", "-1/2", "0/0", "1/2/3"])
def test_a_bad_shard_is_one_line(text):
    with pytest.raises(ValueError, match="--shard"):
        parse_shard(text)


def test_parts_take_whole_questions_and_cover_the_plan(tmp_path, server):
    config = SweepConfig.from_toml(sweep_toml(tmp_path, base_url=server.openai_url, n_tasks=5))
    specs = plan(config)
    for n in (1, 2, 3, 7):
        parts = [shard(specs, i, n) for i in range(n)]
        assert sorted(s.index for p in parts for s in p) == [s.index for s in specs]
        if n <= 5:  # as many questions as parts or more: each question on one machine
            for p in parts:
                assert not {s.task.id for s in p} & {s.task.id for q in parts if q is not p for s in q}
    assert [s.key for s in shard(specs, 1, 3)] == [s.key for s in shard(plan(config), 1, 3)]  # the same


def test_a_dry_run_of_a_part_counts_its_trials(tmp_path, config_toml, capsys):
    assert (
        main(["sweep", str(config_toml), "--dry-run", "--shard", "1/2", "--db", str(tmp_path / "n.sqlite")])
        == 0
    )
    out = capsys.readouterr().out
    assert "; part 1/2: 24 trials" in out and "trials:        24" in out


FAKE_VLLM = """#!/bin/bash
# vllm serve MODEL --host H --port P ...: the loopback server on that port
while [ $# -gt 0 ]; do [ "$1" = --port ] && port=$2; shift; done
cd "{root}" && exec "{python}" -m tests.support.llm_server --port "$port"
"""
FAKE_LITM = """#!/bin/bash
cd "{root}" && exec "{python}" -m components.cli "$@"
"""


@pytest.mark.slow
def test_the_slurm_array_job_runs_each_part_beside_its_own_server(tmp_path, capsys):
    """scripts/slurm_sweep.sbatch as two array tasks would run it (SLURM_ARRAY_TASK_ID 0 and 1 of 2): each
    starts its model server (a stand-in for vllm serve: the loopback server), waits for it, runs its part
    and stops it; the parts merge into the whole sweep."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    from tests.e2e.appserver import free_port

    root = Path(__file__).resolve().parent.parent
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, text in (("vllm", FAKE_VLLM), ("litm", FAKE_LITM)):
        (bin_dir / name).write_text(text.format(root=root, python=sys.executable))
        (bin_dir / name).chmod(0o755)
    port = free_port()
    toml = sweep_toml(tmp_path, base_url=f"http://127.0.0.1:{port}/v1", n_tasks=4)
    out = tmp_path / "parts"
    for i in range(2):
        env = {
            **os.environ,
            "PATH": f"{bin_dir}:{os.environ['PATH']}",
            "SLURM_ARRAY_TASK_ID": str(i),
            "SLURM_ARRAY_TASK_COUNT": "2",
            "SLURM_SUBMIT_DIR": str(root),
            "VLLM_PORT": str(port),
            "SERVER_WAIT": "120",
        }
        done = subprocess.run(
            ["bash", str(root / "scripts" / "slurm_sweep.sbatch"), str(toml), "loop-model", str(out)],
            env=env,
            capture_output=True,
            text=True,
            timeout=240,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert f"the model server answers on 127.0.0.1:{port}" in done.stdout
        assert "trials 24/24 (ran 24, already present 0)" in done.stdout
    parts = sorted(out.glob("part-*-of-2.sqlite"))
    assert [p.name for p in parts] == ["part-0-of-2.sqlite", "part-1-of-2.sqlite"]
    merged = tmp_path / "whole.sqlite"
    assert main(["import", *map(str, parts), "--db", str(merged)]) == 0
    assert len(trials(merged)) == 48
    with socket_closed(port):
        pass


class socket_closed:
    """The server of a part is stopped when its part ends: nothing listens on its port any more."""

    def __init__(self, port: int):
        self.port = port

    def __enter__(self):
        import socket

        with socket.socket() as s:
            assert s.connect_ex(("127.0.0.1", self.port)) != 0, f"a server still listens on {self.port}"
        return self

    def __exit__(self, *exc):
        return False
