"""`litm score`: score predictions from a JSON-lines file.

Input lines: {"prediction": "...", "answers": ["...", ...]} (other keys are kept). Output: each line
with "score" added, then one summary line: n, mean and its 95% Wilson interval.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from components.core.jsonlines import numbered_lines
from components.core.metrics import ANSWER_METRICS
from components.core.scoring import score
from components.core.stats import proportion_ci


def add_parser(sub, name: str) -> None:
    p = sub.add_parser(name, help="score predictions (JSONL: prediction, answers)",
                       description="Score predictions against gold answers.")
    p.add_argument("--metric", required=True, choices=ANSWER_METRICS,
                   help="fuzzy (R&R §4.3), subspan-em (Lost in the Middle), exact (ALR2), kv-match (Lost in the Middle §4.1)")
    p.add_argument("--input", required=True, help="JSON-lines file, or - for standard input")
    p.set_defaults(func=run)


def read_rows(path: str) -> list[dict]:
    """Every non-blank line, checked; the first bad one raises ValueError naming its line."""
    text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    rows = []
    for lineno, line in numbered_lines(text):  # on "\n" only (components.core.jsonlines)
        if not line.strip():
            continue
        where = f"{path}: line {lineno}"
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise ValueError(f"{where}: not valid JSON ({exc.msg})") from None
        if not isinstance(row, dict):
            raise ValueError(f"{where}: expected an object with prediction and answers")
        if not isinstance(row.get("prediction"), str):
            raise ValueError(f"{where}: 'prediction' must be a string")
        answers = row.get("answers")
        if not isinstance(answers, list) or not answers or not all(isinstance(a, str) for a in answers):
            raise ValueError(f"{where}: 'answers' must be a non-empty list of strings")
        rows.append(row)
    if not rows:
        raise ValueError(f"{path}: no lines to score")
    return rows


def summary(scores: list[float]) -> str:
    n = len(scores)
    hits = round(sum(scores))
    low, high = proportion_ci(hits, n)
    return f"n={n} mean={sum(scores) / n:.3f} 95% CI [{low:.3f}, {high:.3f}] (Wilson)"


def run(args) -> int:
    rows = read_rows(args.input)
    scores = []
    for row in rows:
        row["score"] = score(args.metric, row["prediction"], row["answers"])
        scores.append(row["score"])
        print(json.dumps(row, ensure_ascii=False))
    print(summary(scores))
    return 0
