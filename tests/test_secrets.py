"""An API key never reaches the store, exports, logs, stdout or stderr, even when calls fail."""

import logging
import os
import secrets
import subprocess
import sys
from pathlib import Path

from components.run.store import RunStore
from tests.support import sweep_toml
from tests.support.llm_server import LLMServer

ROOT = Path(__file__).resolve().parent.parent


def test_key_never_written_anywhere(tmp_path, caplog):
    key = "sk-test-" + secrets.token_hex(16)
    with LLMServer() as server:
        toml = sweep_toml(
            tmp_path,
            base_url=server.openai_url,
            strategies=("baseline", "icr"),
            extra_model='api_key_env = "LITM_SECRET_TEST_KEY"\nmax_retries = 0',
        )
        from components.run.config import SweepConfig

        failing = SweepConfig.from_toml(toml).load_tasks()[0].question
        server.set(fail_match=failing)  # some calls fail: their errors are recorded too
        db = tmp_path / "secret.sqlite"
        env = {**os.environ, "PYTHONPATH": str(ROOT), "LITM_SECRET_TEST_KEY": key}
        cmd = [sys.executable, "-m", "components.cli"]
        run = subprocess.run(
            [*cmd, "sweep", str(toml), "--db", str(db)], cwd=ROOT, env=env, capture_output=True, text=True
        )
        assert run.returncode == 3, run.stderr  # some trials ended in error (exit codes: cli/common.py)
        assert server.counts["total"] > 0
        results = subprocess.run(
            [*cmd, "results", "--db", str(db), "--format", "json"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
        )
        # the same in-process, with logging captured at DEBUG (SDK logs included)
        caplog.set_level(logging.DEBUG)
        from components.run.runner import run_sweep

        store = RunStore(db)
        summary = run_sweep(
            SweepConfig.from_toml(toml), store, api_keys={"LITM_SECRET_TEST_KEY": key}, retry_errors=True
        )
        assert summary.errors > 0
    frame = store.trials_frame()
    assert frame["error"].notna().any()
    exports = [store.export_trials(tmp_path / f"out.{fmt}", fmt) for fmt in ("csv", "jsonl", "parquet")]
    store.close()
    files = [db, *db.parent.glob("secret.sqlite*"), *exports]
    for path in files:
        assert key.encode() not in path.read_bytes(), f"key found in {path.name}"
    for text in (run.stdout, run.stderr, results.stdout, results.stderr, caplog.text):
        assert key not in text
    assert "sk-test-" not in caplog.text
