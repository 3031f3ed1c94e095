"""Byte-exact "Lost in the Middle" prompts on the real data: every one of the 2,655 NQ-open questions,
through `litm prompt --all`, against the formats its repository builds (nelson-liu/lost-in-the-middle,
src/lost_in_the_middle/prompts/), written here independently from the raw file; and sweep documents that put the gold page where asked."""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

import pytest

from components.cli import main

ROOT = Path(__file__).resolve().parent.parent
NQ = ROOT / "sample_docs" / "tasks" / "nq-open-oracle.jsonl.gz"
NQ30 = ROOT / "sample_docs" / "tasks" / "nq-open-30docs.jsonl.gz"
INSTRUCTION = (
    "Write a high-quality answer for the given question using only the provided search results "
    "(some of which might be irrelevant)."
)


def rows(path: Path) -> list[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def reference(strategy: str, row: dict) -> str:
    q = row["question"]
    docs = [c for c in row["ctxs"] if c["isgold"]] if strategy == "oracle" else row["ctxs"]
    documents = "\n".join(f"Document [{i}](Title: {c['title']}) {c['text']}" for i, c in enumerate(docs, 1))
    if strategy == "closed-book":
        return f"Question: {q}\nAnswer:"
    if strategy == "litm-qac":
        return f"{INSTRUCTION}\n\nQuestion: {q}\n\n{documents}\n\nQuestion: {q}\nAnswer:"
    if strategy == "litm-random":  # qa_ordered_randomly.prompt
        return (
            f"{INSTRUCTION} The search results are ordered randomly.\n\n{documents}\n\nQuestion: {q}\nAnswer:"
        )
    return f"{INSTRUCTION}\n\n{documents}\n\nQuestion: {q}\nAnswer:"


def prompts_all(capsys, *args) -> list[dict]:
    assert main(["prompt", *args, "--all"]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_the_shipped_file_is_the_credited_one():
    assert (
        hashlib.sha256(NQ.read_bytes()).hexdigest()
        == "6a7f72b846f663a133ef952244e5a4e43f06bcf190afe34e8fbe687ce0d1653e"
    )


@pytest.mark.parametrize("strategy", ["litm", "litm-qac", "litm-random", "oracle", "closed-book"])
def test_every_nq_question_gets_the_reference_prompt(capsys, strategy):
    data = rows(NQ)
    out = prompts_all(capsys, "--task", str(NQ), "--strategy", strategy)
    assert len(data) == len(out) == 2655
    kept_space = 0
    for row, got in zip(data, out, strict=True):
        text = got["prompts"][0]["text"]
        assert text == reference(strategy, row), row["question"]
        if strategy != "closed-book":
            passage = row["ctxs"][0]["text"]
            assert passage in text  # exactly as the file holds it
            kept_space += passage != passage.strip()
    if strategy != "closed-book":
        assert kept_space == 82  # 58 passages end with a space and 24 with a newline: all kept


def test_documents_and_gold_index_reproduce_litm_document_order(capsys):
    """LITM §3.1: the distractors in their given order, the gold one inserted at index i."""
    row = rows(NQ30)[5]
    gold = row["ctxs"][0]
    distractors = row["ctxs"][1:]
    for i in (0, 4, 9, 19):
        assert (
            main(
                [
                    "prompt",
                    "--task",
                    str(NQ30),
                    "--index",
                    "5",
                    "--documents",
                    "20",
                    "--position",
                    str(i),
                    "--strategy",
                    "litm",
                    "--json",
                ]
            )
            == 0
        )
        got = json.loads(capsys.readouterr().out)
        order = distractors[:i] + [gold] + distractors[i:19]
        assert got["prompts"][0]["text"] == reference("litm", {"question": row["question"], "ctxs": order})
        assert got["gold"] == [i + 1] and got["pages"] == 20


@pytest.mark.parametrize("position", [0.0, 0.25, 0.5, 0.75, 1.0, 900])
def test_prompt_with_a_position_puts_the_gold_page_there(capsys, position):
    facts = ROOT / "sample_docs" / "tasks" / "facts.jsonl"
    assert (
        main(
            [
                "prompt",
                "--task",
                str(facts),
                "--index",
                "2",
                "--length",
                "3000",
                "--position",
                str(position),
                "--strategy",
                "baseline",
                "--json",
            ]
        )
        == 0
    )
    got = json.loads(capsys.readouterr().out)
    pages = [s for s in got["prompts"][0]["spans"] if s["kind"] in ("page", "gold")]
    target = position * 3000 if position <= 1 else position
    # the gold page starts at the page boundary nearest the target, counted in document tokens (R&R §4.1);
    # the document stays within its length, so at the end (x = d) the gold page ends it
    longest = max(s["end_token"] - s["start_token"] for s in pages)
    gold = next(s["end_token"] - s["start_token"] for s in pages if s["kind"] == "gold")
    assert abs(got["gold_token_positions"][0] - min(target, got["document_tokens"] - gold)) <= longest
    assert 3000 - longest <= got["document_tokens"] <= 3000
