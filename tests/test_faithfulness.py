"""Faithful to "Lost in the Middle" where its reference code behaves in its own way: the key-value
metric of its evaluate_kv_responses.py, JSON lines split on "\\n" only, and its random-order prompt."""

from __future__ import annotations

import json

import pytest

from components.cli import main
from components.core.metrics import score
from components.core.scoring import best_subspan_em, kv_match
from components.providers.base import ModelSpec
from components.providers.fake import FakeProvider, plausible_answer
from components.run.config import SweepConfig
from components.run.runner import run_sweep
from components.run.store import RunStore
from components.tasks.generators import generate
from components.tasks.importers import parse_tasks_bytes, write_tasks

UUID = "9f2d1c4e-8a7b-4c3d-9e1f-0a2b3c4d5e6f"


# what `1.0 if value.lower() in model_answer.lower() else 0.0` gives for each response
@pytest.mark.parametrize(
    "response, expected",
    [
        (UUID, 1.0),
        ("\n" + UUID, 1.0),  # best subspan EM reads the first line only: 0
        ("The value is:\n" + UUID, 1.0),
        (UUID.upper(), 1.0),
        (f'"{UUID}"', 1.0),
        (UUID.replace("-", ""), 0.0),  # without hyphens the value is not in the response
        (UUID[:-1], 0.0),
        ("", 0.0),
    ],
)
def test_kv_match_is_the_reference_rule(response, expected):
    assert kv_match(response, [UUID]) == expected
    assert score("kv-match", response, [UUID]) == expected


def test_kv_match_and_subspan_disagree_where_the_issue_says():
    for response in ("\n" + UUID, "The value is:\n" + UUID):
        assert kv_match(response, [UUID]) == 1.0 and best_subspan_em(response, [UUID]) == 0.0


def test_kv_sweep_answered_after_a_newline_scores_1(tmp_path):
    tasks = generate("kv", 3, seed=1, pairs=10)
    path = write_tasks(tasks, tmp_path / "kv.jsonl")

    def respond(messages, settings):  # the right value, after a newline
        return "\n" + plausible_answer(messages[-1]["content"])

    fake = FakeProvider(ModelSpec("fake", "fake"), responder=respond)
    config = SweepConfig.from_dict(
        {
            "sweep": {
                "name": "kv",
                "tasks": str(path),
                "documents": [10],
                "gold_index": [0, 5, 9],
                "strategies": ["kv"],
                "models": [{"provider": "fake", "model": "fake"}],
            }
        }
    )
    store = RunStore(tmp_path / "s.sqlite")
    summary = run_sweep(config, store, providers={"fake:fake": fake})
    trials = store.trials_frame()
    assert summary.errors == 0 and len(trials) == 9
    assert set(trials["metric"]) == {"kv-match"}
    assert trials["raw_answer"].str.startswith("\n").all()
    assert (trials["kv_match"] == 1.0).all() and (trials["subspan_em"] == 0.0).all()


@pytest.mark.parametrize("char", ["\u2028", "\u2029", "\u0085"])
def test_task_file_with_a_line_separator_inside_a_string_loads(char):
    rows = [
        {
            "id": "a",
            "question": f"what{char}is it?",
            "answers": ["x"],
            "passages": [f"one{char}two", "x"],
            "gold": [1],
        },
        {"id": "b", "question": "second?", "answers": ["y"], "passages": ["three", "y"], "gold": [1]},
    ]
    data = "\n".join(json.dumps(r, ensure_ascii=False) for r in rows).encode("utf-8")
    assert char.encode("utf-8") in data  # raw in the file, not escaped
    ts = parse_tasks_bytes("t.jsonl", data)
    assert [t.id for t in ts.tasks] == ["a", "b"] and not ts.errors
    assert ts.tasks[0].question == f"what{char}is it?" and ts.tasks[0].passages[0].text == f"one{char}two"


def test_litm_score_reads_a_line_separator_inside_a_string(tmp_path, capsys):
    p = tmp_path / "preds.jsonl"
    lines = [
        json.dumps({"prediction": "Paris\u2028France", "answers": ["Paris"]}, ensure_ascii=False),
        json.dumps({"prediction": "Rome", "answers": ["Paris"]}),
        "",
    ]
    p.write_text("\r\n".join(lines), encoding="utf-8")  # CRLF line ends read too
    assert main(["score", "--metric", "subspan-em", "--input", str(p)]) == 0
    out = capsys.readouterr().out.split("\n")  # the output keeps the U+2028 raw too
    assert [json.loads(x)["score"] for x in out[:2]] == [1.0, 0.0]
