import json
import subprocess
import sys
from pathlib import Path

import pytest

from components.cli import main

ROOT = Path(__file__).resolve().parent.parent
DOC = "Macbeth is a tragedy.\n\nHamlet was written by William Shakespeare.\n\nOthello is set in Venice.\n"


@pytest.fixture
def doc_path(tmp_path):
    p = tmp_path / "plays.txt"
    p.write_text(DOC, encoding="utf-8")
    return p


def run_json(capsys, *argv):
    assert main(["prompt", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_prompt_json_shape_and_spans(capsys, doc_path):
    out = run_json(
        capsys,
        "--doc",
        str(doc_path),
        "--question",
        "Who wrote Hamlet?",
        "--strategy",
        "rr",
        "--param",
        "k=2",
        "--param",
        "r=10",
        "--gold",
        "2",
    )
    assert out["strategy"] == "rr"
    (prompt,) = out["prompts"]
    assert prompt["stage"] == 1 and prompt["tokens"] > 0
    text = prompt["text"]
    for s in prompt["spans"]:
        assert set(s) >= {"kind", "page", "start_char", "end_char", "start_token", "end_token"}
        region = text[s["start_char"] : s["end_char"]]
        if s["kind"] in ("page", "gold"):
            assert region.startswith(f"<PAGE {s['page']}>")
    assert [s["page"] for s in prompt["spans"] if s["kind"] == "gold"] == [2]
    assert any(s["kind"] == "reminder" for s in prompt["spans"])


def test_prompt_without_gold_marks_none(capsys, doc_path):
    out = run_json(capsys, "--doc", str(doc_path), "--question", "Who?", "--strategy", "litm")
    assert not [s for s in out["prompts"][0]["spans"] if s["kind"] == "gold"]
    assert out["prompts"][0]["text"].startswith("Write a high-quality answer")


def test_prompt_sentence_pages(capsys, doc_path):
    out = run_json(
        capsys,
        "--doc",
        str(doc_path),
        "--question",
        "Who?",
        "--pages",
        "sentence",
        "--encoding",
        "o200k_base",
    )
    assert out["pages"] == 3 and out["strategy"] == "baseline"


def test_prompt_readable(capsys, doc_path):
    assert (
        main(["prompt", "--doc", str(doc_path), "--question", "Who?", "--strategy", "icr", "--param", "k=1"])
        == 0
    )
    out = capsys.readouterr().out
    assert "=== stage 1: retrieve" in out and "<PAGE 2>" in out and "2 stages in all" in out


def test_prompt_from_task_file(capsys, tmp_path):
    path = tmp_path / "qa.jsonl"
    rows = [
        {
            "question": "who wrote hamlet",
            "answers": ["Shakespeare"],
            "ctxs": [
                {"title": "Macbeth", "text": "Macbeth is a play."},
                {"title": "Hamlet", "text": "Hamlet was written by Shakespeare.", "isgold": True},
            ],
        },
        {
            "question": "capital of france",
            "answers": ["Paris"],
            "ctxs": [{"title": "Paris", "text": "Paris is the capital.", "isgold": True}],
        },
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = run_json(capsys, "--task", str(path), "--strategy", "litm")
    assert out["gold"] == [2]
    assert out["prompts"][0]["text"].endswith("Question: who wrote hamlet\nAnswer:")
    out = run_json(capsys, "--task", str(path), "--index", "1", "--strategy", "oracle")
    assert "Document [1](Title: Paris) Paris is the capital." in out["prompts"][0]["text"]


def test_prompt_from_kv_task_defaults_to_kv(capsys, tmp_path):
    path = tmp_path / "kv.jsonl"
    path.write_text(
        json.dumps({"ordered_kv_records": [["k1", "v1"], ["k2", "v2"]], "key": "k2", "value": "v2"}) + "\n",
        encoding="utf-8",
    )
    out = run_json(capsys, "--task", str(path))
    assert out["strategy"] == "kv"
    assert '{"k1": "v1",\n "k2": "v2"}' in out["prompts"][0]["text"]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--strategy", "nope"], "unknown strategy 'nope'"),
        (["--strategy", "rr", "--param", "k=9"], "more than the document's 3 pages"),
        (["--param", "k"], "write NAME=VALUE"),
        (["--param", "r=ten"], "not a whole number"),
        (["--gold", "7"], "outside 1..3"),
    ],
)
def test_prompt_errors_are_one_line(capsys, doc_path, argv, message):
    assert main(["prompt", "--doc", str(doc_path), "--question", "Who?", *argv]) == 1
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_prompt_missing_file_and_question(capsys, tmp_path, doc_path):
    assert main(["prompt", "--doc", str(tmp_path / "none.txt"), "--question", "Who?"]) == 1
    assert "no such file" in capsys.readouterr().err
    assert main(["prompt", "--doc", str(doc_path)]) == 1
    assert "--question is required" in capsys.readouterr().err
    assert main(["prompt", "--task", str(tmp_path / "none.jsonl")]) == 1
    assert "Traceback" not in capsys.readouterr().err


def test_prompt_as_subprocess(doc_path):
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "components.cli",
            "prompt",
            "--doc",
            str(doc_path),
            "--question",
            "Who wrote Hamlet?",
            "--strategy",
            "reorder",
            "--json",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    pages = [s["page"] for s in out["prompts"][0]["spans"] if s["kind"] == "page"]
    assert pages[0] == 2 and sorted(pages) == [1, 2, 3]
    bad = subprocess.run(
        [
            sys.executable,
            "-m",
            "components.cli",
            "prompt",
            "--doc",
            str(doc_path),
            "--question",
            "x",
            "--strategy",
            "chunked-icr",
            "--param",
            "c=0",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode == 1 and bad.stderr.startswith("litm: c must be a positive whole number")


@pytest.mark.parametrize(
    "task_file", sorted((ROOT / "sample_docs" / "tasks").glob("*.jsonl")), ids=lambda p: p.stem
)
@pytest.mark.parametrize("strategy", ["baseline", "rr", "litm"])
def test_prompt_works_on_every_bundled_task_set(capsys, task_file, strategy):
    params = ["--param", "k=2", "--param", "r=300"] if strategy == "rr" else []
    assert main(["prompt", "--task", str(task_file), "--strategy", strategy, *params, "--json"]) == 0
    prompt = json.loads(capsys.readouterr().out)["prompts"][0]
    gold = [s for s in prompt["spans"] if s["kind"] == "gold"]
    assert gold, "the task's gold page is marked"
    assert all(prompt["text"][s["start_char"] : s["end_char"]].strip() for s in gold)
