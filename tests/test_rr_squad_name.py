"""R&R's SQuAD set (R&R §4.1) by its bundled name, through the CLI: `tasks = "rr-squad"` in a sweep config
and `litm prompt --task rr-squad`, from a folder that holds no task file."""

from __future__ import annotations

import json

import pytest

from components.cli import main
from components.tasks.importers import parse_derived, read_tasks
from components.tasks.model import TaskFileError

TOML = """[sweep]
name = "rr-squad-check"
tasks = "rr-squad"
n_tasks = 2
lengths = [4000]
positions = [0.5]
strategies = ["baseline"]

[[sweep.models]]
provider = "openai"
model = "gpt-4o-mini"
"""


@pytest.fixture(scope="module")
def rr_squad():
    return read_tasks("rr-squad")


def test_the_name_reads_rr_squad_set(rr_squad):
    assert rr_squad.format == "rr-squad" and len(rr_squad.tasks) == 50
    first = rr_squad.tasks[0]
    assert first.question == "Which NFL team represented the AFC at Super Bowl 50?"
    assert (
        len(first.passages) == 601 and first.passages[0].gold and not any(p.gold for p in first.passages[1:])
    )
    # distractors come from other articles only (their titles differ from the gold paragraph's article)
    assert all(p.title != first.passages[0].title for p in first.passages[1:])


def test_litm_prompt_builds_a_sweep_document_from_the_name(capsys, monkeypatch, tmp_path, rr_squad):
    monkeypatch.chdir(tmp_path)
    assert (
        main(
            [
                "prompt",
                "--task",
                "rr-squad",
                "--index",
                "1",
                "--length",
                "4000",
                "--position",
                "0.5",
                "--json",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    task = rr_squad.tasks[1]
    assert out["task"] == task.id and out["strategy"] == "baseline"
    assert 3_500 < out["document_tokens"] <= 4_000 and len(out["gold"]) == 1
    text = out["prompts"][0]["text"]
    assert task.question in text and task.passages[0].text in text
    assert abs(out["gold_token_positions"][0] - 2_000) < 400


def test_a_sweep_config_names_it(capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "rr.toml").write_text(TOML, encoding="utf-8")
    assert main(["sweep", "rr.toml", "--dry-run", "--db", str(tmp_path / "x.sqlite")]) == 0
    out = capsys.readouterr().out
    assert "2 to send" in out  # 2 questions x 1 cell x baseline: one call each


def test_a_bad_derived_file_is_one_line():
    with pytest.raises(TaskFileError, match="unknown derived task set 'nope'"):
        parse_derived("x", '{"derived": "nope"}')
    with pytest.raises(TaskFileError, match="is built from squad-dev-v1.1.json.gz"):
        parse_derived("x", '{"derived": "rr-squad", "from": "/etc/passwd"}')
    with pytest.raises(TaskFileError, match="questions must be a whole number"):
        parse_derived("x", '{"derived": "rr-squad", "questions": 0}')


def test_litm_prompt_takes_a_shipped_task_file_by_its_bare_name(capsys, monkeypatch, tmp_path):
    """As a sweep config does: `--task nq-open-30docs.jsonl.gz` from any folder is the file that ships;
    a file of that name in the current folder comes first."""
    monkeypatch.chdir(tmp_path)
    args = [
        "prompt",
        "--task",
        "nq-open-30docs.jsonl.gz",
        "--documents",
        "20",
        "--position",
        "9",
        "--by-index",
        "--strategy",
        "litm",
        "--json",
    ]
    assert main(args) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["task"] == "nq-open-oracle-1" and got["pages"] == 20
    (tmp_path / "nq-open-30docs.jsonl.gz").write_bytes(b"")  # the user's own (empty) file wins
    assert main(args) == 1
    assert "nq-open-30docs.jsonl.gz" in capsys.readouterr().err
