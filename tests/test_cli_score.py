import json

import pytest

from components.cli import main
from components.core.stats import proportion_ci


def write(tmp_path, lines):
    p = tmp_path / "preds.jsonl"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return p


def test_score_lines_and_summary(capsys, tmp_path):
    p = write(
        tmp_path,
        [
            json.dumps({"id": 1, "prediction": "Shakespeare", "answers": ["William Shakespeare"]}),
            "",
            json.dumps({"id": 2, "prediction": "Marlowe", "answers": ["William Shakespeare"]}),
        ],
    )
    assert main(["score", "--metric", "fuzzy", "--input", str(p)]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = [json.loads(x) for x in lines[:2]]
    assert [(r["id"], r["score"]) for r in rows] == [(1, 1.0), (2, 0.0)]
    low, high = proportion_ci(1, 2)
    assert lines[2] == f"n=2 mean=0.500 95% CI [{low:.3f}, {high:.3f}] (Wilson)"


def test_subspan_metric(capsys, tmp_path):
    p = write(tmp_path, [json.dumps({"prediction": "Shakespeare", "answers": ["William Shakespeare"]})])
    assert main(["score", "--metric", "subspan-em", "--input", str(p)]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[0])["score"] == 0.0


@pytest.mark.parametrize(
    "line, message",
    [
        ("{not json", "line 2: not valid JSON"),
        ('["a"]', "line 2: expected an object"),
        ('{"prediction": 3, "answers": ["a"]}', "line 2: 'prediction' must be a string"),
        ('{"prediction": "a", "answers": "a"}', "line 2: 'answers' must be a non-empty list"),
    ],
)
def test_bad_line_names_its_number(capsys, tmp_path, line, message):
    p = write(tmp_path, [json.dumps({"prediction": "a", "answers": ["a"]}), line])
    assert main(["score", "--metric", "exact", "--input", str(p)]) == 1
    captured = capsys.readouterr()
    assert message in captured.err and captured.out == "" and "Traceback" not in captured.err


def test_empty_and_missing_input(capsys, tmp_path):
    assert main(["score", "--metric", "exact", "--input", str(write(tmp_path, [""]))]) == 1
    assert "no lines to score" in capsys.readouterr().err
    assert main(["score", "--metric", "exact", "--input", str(tmp_path / "nope.jsonl")]) == 1


def test_wilson_interval():
    low, high = proportion_ci(5, 10)
    assert low == pytest.approx(0.2366, abs=1e-3) and high == pytest.approx(0.7634, abs=1e-3)
    assert proportion_ci(0, 0) == (0.0, 1.0)
    low, high = proportion_ci(10, 10)
    assert high == pytest.approx(1.0) and 0.69 < low < 0.73
    with pytest.raises(ValueError):
        proportion_ci(3, 2)
