"""Reading never writes: `litm results`, `litm compare` and the app's reads (components.run.reader) open a
store read-only, never migrate it, and read an older schema as it is; shipped stores are at the current
schema, in rollback-journal mode (a reader makes no -wal or -shm file next to them). The session fixture
in tests/conftest.py fails the run when any file under sample_docs/ changes."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest

from components.run.store import MIGRATIONS, RunStore, shipped_paths
from tests.test_bad_inputs import run

# a process per case (tests/test_bad_inputs.run): make test, not make check
pytestmark = pytest.mark.own_process

ROOT = Path(__file__).resolve().parent.parent


def files(folder: Path) -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()
    }


def old_store(path: Path, version: int) -> Path:
    """A store written at schema `version` (the migrations up to it), with one sweep of two trials, in
    rollback-journal mode, as an older LITM Explorer left it."""
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied REAL)")
    for v in range(1, version + 1):
        for statement in MIGRATIONS[v - 1].split(";"):
            if statement.strip():
                conn.execute(statement)
        conn.execute("INSERT INTO schema_version VALUES (?, 0)", (v,))
    conn.execute("INSERT INTO sweeps (id, name, config, status) VALUES (1, 'old', '{}', 'done')")
    for i, score in enumerate((1.0, 0.0)):
        conn.execute(
            "INSERT INTO trials (sweep_id, trial_key, task, strategy, model, length, position, score, "
            "calls, cost_usd) VALUES (1, ?, ?, 'baseline', 'fake:m', 600, 0.5, ?, 1, 0)",
            (f"k{i}", f"t{i}", score),
        )
    conn.commit()
    conn.close()
    return path


@pytest.mark.parametrize("version", range(1, len(MIGRATIONS)))
def test_results_and_compare_read_an_older_store_as_it_is(tmp_path, version):
    folder = tmp_path / "store"
    folder.mkdir()
    db = old_store(folder / "old.sqlite", version)
    before = files(folder)
    r = run(["results", "--db", str(db), "--format", "json"], tmp_path)
    assert r.code == 0 and '"task": "t1"' in r.out and '"score": 1.0' in r.out, r.err
    r = run(["compare", "--db", str(db), "--json"], tmp_path)
    assert r.code == 0 and '"n": 2' in r.out, r.err
    from components.run.reader import browse, whole_trials

    trials, sweeps = browse(db, readonly=False)  # the app's Results read, whatever the caller says
    assert len(trials) == 2 and list(sweeps["name"]) == ["old"]
    assert [t["task"] for t in whole_trials(db, trials["trial_id"], readonly=False)] == ["t0", "t1"]
    assert files(folder) == before  # same bytes, no new file (no -wal, no -shm)
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as c:
        assert c.execute("SELECT MAX(version) FROM schema_version").fetchone()[0] == version


def test_reading_a_store_a_sweep_is_writing_sees_its_trials(tmp_path):
    """Read-only is not a frozen copy: a store open for writing (WAL) is read as it is now."""
    db = tmp_path / "live.sqlite"
    writer = RunStore(db)
    sid = writer.open_sweep("live", {})
    writer.put_trial(sid, {"trial_key": "a", "task": "t", "strategy": "baseline"})
    reader = RunStore(db, readonly=True)
    assert len(reader.trials_frame()) == 1
    writer.put_trial(sid, {"trial_key": "b", "task": "t", "strategy": "baseline"})
    assert len(reader.trials_frame()) == 2
    with pytest.raises(sqlite3.OperationalError):
        reader.db.execute("DELETE FROM trials")
    reader.close()
    writer.close()


def test_shipped_stores_are_at_the_current_schema():
    paths = shipped_paths()
    assert len(paths) >= 4
    for path in paths:
        with sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True) as c:
            version = c.execute("SELECT MAX(version) FROM schema_version").fetchone()[0]
            mode = c.execute("PRAGMA journal_mode").fetchone()[0]
        assert version == len(MIGRATIONS), f"{path.name} is at schema {version}: run scripts/ship_stores.py"
        assert mode == "delete", f"{path.name} is in journal mode {mode}: run scripts/ship_stores.py"
        # the header too (an immutable connection says "delete" for a WAL file): a reader of a WAL
        # store makes -wal and -shm files next to it
        assert path.read_bytes()[18:20] == b"\x01\x01", (
            f"{path.name} is in WAL mode: run scripts/ship_stores.py"
        )


def test_shipped_stores_name_their_task_files_as_they_ship_not_by_a_path_of_the_machine_that_ran_them(
    tmp_path,
):
    """A shipped sweep's stored config names its bundled task file by its bare name, so its TOML (Results'
    "its TOML and command") runs on any machine, from any folder; and no store holds a path of ours."""
    from components.run.config import SweepConfig
    from components.run.estimate import estimate

    for path in shipped_paths():
        assert b"/work/" not in path.read_bytes() and b"/home/" not in path.read_bytes(), path.name
        with sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True) as c:
            configs = [row[0] for row in c.execute("SELECT config FROM sweeps")]
        for blob in configs:
            tasks = json.loads(blob)["tasks"]
            assert "/" not in tasks, f"{path.name}: {tasks}: run scripts/ship_stores.py"
            config = SweepConfig.from_stored(blob)  # from the test's own folder, not sample_docs/runs
            assert config.tasks_path.is_file() and config.load_tasks()
    config = SweepConfig.from_stored(configs[-1])
    with RunStore(shipped_paths()[-1], readonly=True) as store:  # the last store's own trials: all cached
        est = estimate(config, store=store)
    assert est.calls == 0 and est.done_trials == est.trials > 0


def test_reading_every_shipped_store_leaves_it_as_it_was(tmp_path):
    folder = shipped_paths()[0].parent
    before = files(folder)
    for path in shipped_paths():
        r = run(["results", "--db", str(path)], tmp_path)
        assert r.code == 0 and r.out.count("\n") > 10, r.err
        r = run(["compare", "--db", str(path), "--json"], tmp_path)
        assert r.code == 0, r.err
    assert files(folder) == before


def test_ship_stores_migrates_a_copy_and_is_idempotent(tmp_path):
    import shutil
    import subprocess
    import sys

    db = old_store(tmp_path / "old.sqlite", 3)
    shutil.copyfile(db, tmp_path / "copy.sqlite")
    script = [sys.executable, str(ROOT / "scripts" / "ship_stores.py")]
    done = subprocess.run([*script, "--check", str(db)], capture_output=True, text=True)
    assert done.returncode == 1 and "schema 3" in done.stdout
    done = subprocess.run([*script, str(db)], capture_output=True, text=True)
    assert done.returncode == 0 and f"now schema {len(MIGRATIONS)}, journal mode delete" in done.stdout, done
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "copy.sqlite",
        "old.sqlite",
    ]  # no -wal, no leftovers
    first = db.read_bytes()
    assert subprocess.run([*script, str(db)], capture_output=True).returncode == 0
    assert db.read_bytes() == first  # already current: left byte for byte
    assert len(RunStore(db, readonly=True).trials_frame()) == 2
