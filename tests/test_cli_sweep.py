"""`litm sweep` and `litm results`."""

import csv
import io
import json

import pytest

from components.cli import main
from tests.support import sweep_toml

RESULT_MIN = [
    "sweep",
    "task",
    "strategy",
    "model",
    "length",
    "position",
    "actual_length",
    "actual_position",
    "answer",
    "score",
    "error",
    "calls",
    "input_tokens",
    "output_tokens",
    "cost_usd",
]


def test_dry_run_prints_estimate_and_sends_nothing(tmp_path, server, capsys):
    server.reset()
    toml = sweep_toml(tmp_path, base_url=server.openai_url)
    assert main(["sweep", str(toml), "--dry-run", "--db", str(tmp_path / "x.sqlite")]) == 0
    out = capsys.readouterr().out
    assert "calls:" in out and "input tokens:" in out and "cost:" in out and "estimate" in out
    assert server.counts["total"] == 0 and not (tmp_path / "x.sqlite").exists()


def test_dry_run_counts_cached_calls_apart(tmp_path, server, capsys):
    """--dry-run on a finished sweep: 0 calls to send, every call cached; a new sweep of the same prompts
    replays them from the store (0 to send); before any run everything is to send. Nothing is sent."""
    from components.run.store import RunStore

    server.reset()
    toml = sweep_toml(tmp_path, base_url=server.openai_url)  # baseline and icr (two calls a trial)
    db = tmp_path / "r.sqlite"
    assert main(["sweep", str(toml), "--dry-run", "--db", str(db)]) == 0
    assert "calls:         54 to send; 0 already cached in the store" in capsys.readouterr().out
    assert main(["sweep", str(toml), "--db", str(db), "--quiet"]) == 0
    capsys.readouterr()
    sent = server.counts["total"]
    with RunStore(db) as store:
        frame = store.trials_frame()
    calls, tin, tout = (int(frame[c].sum()) for c in ("calls", "input_tokens", "output_tokens"))
    assert calls == 54 and sent > 0
    assert main(["sweep", str(toml), "--dry-run", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "trials:        36 (36 already in the store: not run again)" in out
    assert f"calls:         0 to send; {calls} already cached in the store" in out
    assert (
        f"input tokens:  0 to send; {tin:,} cached" in out
        and f"output tokens: 0 to send; {tout:,} cached" in out
    )
    again = sweep_toml(tmp_path, name="again", base_url=server.openai_url)  # a new sweep, the same prompts
    assert main(["sweep", str(again), "--dry-run", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert (
        f"calls:         0 to send; {calls} already cached in the store" in out
        and "already in the store" not in out
    )
    assert server.counts["total"] == sent  # dry runs send nothing


def test_sweep_then_results_csv_and_json(tmp_path, server, capsys):
    toml = sweep_toml(tmp_path, base_url=server.openai_url, strategies=("baseline",))
    db = tmp_path / "runs" / "r.sqlite"
    assert main(["sweep", str(toml), "--db", str(db)]) == 0
    captured = capsys.readouterr()
    assert "done" in captured.out and "18/18" in captured.out and "trials" in captured.err  # progress line
    assert main(["results", "--db", str(db), "--sweep", "demo", "--format", "csv"]) == 0
    table = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(table) == 18 and set(RESULT_MIN) <= set(table[0])
    assert {r["strategy"] for r in table} == {"baseline"} and table[0]["sweep"] == "demo"
    assert main(["results", "--db", str(db), "--sweep", "1", "--format", "json"]) == 0
    records = json.loads(capsys.readouterr().out)
    assert len(records) == 18 and records[0]["model"] == "openai-compatible:loop-model"


def test_retry_errors_flag(tmp_path, server, capsys):
    server.reset()
    toml = sweep_toml(
        tmp_path, base_url=server.openai_url, strategies=("baseline",), extra_model="max_retries = 0"
    )
    db = tmp_path / "r.sqlite"
    server.set(status=500)
    assert main(["sweep", str(toml), "--db", str(db), "--quiet"]) == 3  # trials ended in error
    assert "errors 18" in capsys.readouterr().out
    server.set(status=None)
    assert main(["sweep", str(toml), "--db", str(db), "--quiet", "--retry-errors"]) == 0
    assert "errors 0" in capsys.readouterr().out


def test_expected_errors_are_one_line(tmp_path, capsys):
    assert main(["results", "--db", str(tmp_path / "none.sqlite")]) == 1
    assert capsys.readouterr().err.startswith("litm: no run store")
    bad = tmp_path / "bad.toml"
    bad.write_text('[sweep]\nname = "x"\ntasks = "t.jsonl"\nlengths = []\n')
    assert main(["sweep", str(bad)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "lengths must be a non-empty list" in err


def test_missing_key_fails_before_sending(tmp_path, server, capsys, monkeypatch):
    server.reset()
    monkeypatch.delenv("LITM_CLI_NO_KEY", raising=False)
    toml = sweep_toml(tmp_path, base_url=server.openai_url, extra_model='api_key_env = "LITM_CLI_NO_KEY"')
    assert main(["sweep", str(toml), "--db", str(tmp_path / "k.sqlite")]) == 1
    assert "LITM_CLI_NO_KEY" in capsys.readouterr().err and server.counts["total"] == 0


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_exported_runs_import_into_another_store(tmp_path, server, capsys, fmt):
    """A class shares runs: export from one store, `litm import` into another, same trials and scores."""
    from components.run.store import RunStore

    toml = sweep_toml(tmp_path, base_url=server.openai_url, strategies=("baseline",))
    db = tmp_path / "a.sqlite"
    assert main(["sweep", str(toml), "--db", str(db), "--quiet"]) == 0
    source = RunStore(db)
    export = source.export_trials(tmp_path / f"runs.{fmt}", fmt)
    before = source.trials_frame().sort_values("trial_key")
    source.close()
    capsys.readouterr()
    assert main(["import", str(export), "--db", str(tmp_path / "b.sqlite")]) == 0
    assert "imported 18 trial(s) in 1 sweep(s)" in capsys.readouterr().out
    target = RunStore(tmp_path / "b.sqlite")
    after = target.trials_frame().sort_values("trial_key")
    target.close()
    assert list(after["trial_key"]) == list(before["trial_key"])
    assert list(after["score"]) == list(before["score"])
    assert after["sweep"].iloc[0].startswith("demo (imported")


def test_import_missing_file_is_one_line(tmp_path, capsys):
    assert main(["import", str(tmp_path / "nope.csv"), "--db", str(tmp_path / "x.sqlite")]) == 1
    assert capsys.readouterr().err.strip().count("\n") == 0


def test_the_progress_line_shows_the_elapsed_time():
    """While a slow local call runs the line still moves: the runner's ticker redraws its elapsed time."""
    import io

    from components.cli.sweep import ProgressLine
    from components.run.runner import Progress

    out = io.StringIO()
    line = ProgressLine(out)
    line(Progress(0, 2, 0, 0.0, 0.0, 0, sent=1, elapsed_s=55.4))
    line(Progress(0, 2, 0, 0.0, 0.0, 0, sent=1, elapsed_s=450.0))
    text = out.getvalue()
    assert "elapsed 55 s" in text and "elapsed 7 min 30 s" in text
