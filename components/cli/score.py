"""`litm score`: score predictions from a JSON-lines file.

Input lines: {"prediction": "...", "answers": ["...", ...]} (other keys are kept). Output: each line
with "score" added, then one summary line: n, mean and its 95% Wilson interval. The input (a regular
file, or standard input) is at most MAX_INPUT_BYTES; every line is checked and scored before anything
is printed, holding only the output lines (not the parsed rows), so memory stays near twice the input.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from components.core.jsonlines import numbered_lines
from components.core.loaders import read_bounded, read_stream
from components.core.metrics import ANSWER_METRICS, score
from components.core.stats import proportion_ci

MAX_INPUT_BYTES = 64 * 1024 * 1024


def add_parser(sub, name: str) -> None:
    p = sub.add_parser(
        name,
        help="score predictions (JSONL: prediction, answers)",
        description="Score predictions against gold answers.",
    )
    p.add_argument(
        "--metric",
        required=True,
        choices=ANSWER_METRICS,
        help="fuzzy (R&R §4.3), subspan-em (Lost in the Middle), exact (ALR2), kv-match (Lost in the Middle §4.1)",
    )
    p.add_argument("--input", required=True, help="JSON-lines file, or - for standard input")
    p.set_defaults(func=run)


def read_text(path: str) -> str:
    """The input as text: a regular file or standard input ("-"), at most MAX_INPUT_BYTES."""
    if path == "-":
        data = read_stream(sys.stdin.buffer, MAX_INPUT_BYTES, "standard input", ValueError)
    else:
        data = read_bounded(Path(path), MAX_INPUT_BYTES, "the predictions to score", ValueError)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not UTF-8 text (byte {exc.start})") from None


def rows_of(text: str, path: str):
    """Every non-blank line as a checked row, one at a time; the first bad one raises ValueError naming it."""
    for lineno, line in numbered_lines(text):  # on "\n" only (components.core.jsonlines)
        if not line.strip():
            continue
        where = f"{path}: line {lineno}"
        try:
            row = json.loads(line)
        except RecursionError:
            raise ValueError(f"{where}: not valid JSON (it nests too deep)") from None
        except ValueError as exc:
            raise ValueError(f"{where}: not valid JSON ({getattr(exc, 'msg', exc)})") from None
        if not isinstance(row, dict):
            raise ValueError(f"{where}: expected an object with prediction and answers")
        if not isinstance(row.get("prediction"), str):
            raise ValueError(f"{where}: 'prediction' must be a string")
        answers = row.get("answers")
        if not isinstance(answers, list) or not answers or not all(isinstance(a, str) for a in answers):
            raise ValueError(f"{where}: 'answers' must be a non-empty list of strings")
        yield row


def summary(scores: list[float]) -> str:
    n = len(scores)
    hits = round(sum(scores))
    low, high = proportion_ci(hits, n)
    return f"n={n} mean={sum(scores) / n:.3f} 95% CI [{low:.3f}, {high:.3f}] (Wilson)"


def run(args) -> int:
    text = read_text(args.input)
    out, scores = [], []
    for row in rows_of(text, args.input):  # every line checked before anything is printed
        row["score"] = score(args.metric, row["prediction"], row["answers"])
        scores.append(row["score"])
        out.append(json.dumps(row, ensure_ascii=False))
    del text
    if not scores:
        raise ValueError(f"{args.input}: no lines to score")
    for line in out:
        print(line)
    print(summary(scores))
    return 0
