"""R&R's reminder and chunk counts as its tables give them, checked from outside through `litm prompt
--json` on bundled NQ-open questions, as a sweep builds the documents (R&R §4.1: about d tokens, the
gold passage about x tokens in, x from 0 to d in steps of 10k).

- Table 1 (r = 10k): no reminder at d = 10k ("reprompting is not done at this length"); d/r - 1 =
  1/3/7 at d = 20k/40k/80k.
- Table 3 (d = 80k): m = d/c + 1 calls = 9/5/3/2 at c = 10k/20k/40k/80k, so 8/4/2/1 retrieval chunks.
- Table 2: no chunked R&R at c = 10k (no reminder inside chunks of about r tokens).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from components.cli import main

NQ30 = Path(__file__).resolve().parent.parent / "sample_docs" / "tasks" / "nq-open-30docs.jsonl.gz"
QUESTIONS = (0, 7, 42)


def prompt(capsys, index: int, length: int, position: int, strategy: str, **params) -> dict:
    args = [
        "prompt",
        "--task",
        str(NQ30),
        "--index",
        str(index),
        "--length",
        str(length),
        "--position",
        str(position),
        "--strategy",
        strategy,
        "--json",
    ]
    for name, value in params.items():
        args += ["--param", f"{name}={value}"]
    assert main(args) == 0
    return json.loads(capsys.readouterr().out)


def reminders(prompt_dict: dict) -> int:
    return sum(s["kind"] == "reminder" for s in prompt_dict["spans"])


@pytest.mark.parametrize("length,want", [(10_000, 0), (20_000, 1), (40_000, 3), (80_000, 7)])
def test_reprompt_reminder_counts_are_table_1s(capsys, length, want):
    for index in QUESTIONS:
        for position in sorted({0, length // 2 // 10_000 * 10_000, length}):
            got = prompt(capsys, index, length, position, "reprompt", r=10_000)
            assert [reminders(p) for p in got["prompts"]] == [want], (index, position)
            assert length - 1_000 < got["document_tokens"] <= length  # about d, never past it
        rr = prompt(capsys, index, length, length // 2, "rr", r=10_000, k=5)  # R&R's stage 1
        assert [reminders(p) for p in rr["prompts"]] == [want], index


def test_chunk_counts_at_80k_are_table_3s(capsys):
    for index in QUESTIONS:
        for position in (0, 80_000):
            counts = [
                len(prompt(capsys, index, 80_000, position, "chunked-icr", k=5, c=c)["prompts"])
                for c in (10_000, 20_000, 40_000, 80_000)
            ]
            assert counts == [8, 4, 2, 1], (index, position)  # m = 9/5/3/2 with the answer call


def test_chunked_rr_reprompts_only_in_chunks_longer_than_r(capsys):
    for index in QUESTIONS:
        for c, per_chunk in ((10_000, 0), (20_000, 1), (40_000, 3), (80_000, 7)):
            got = prompt(capsys, index, 80_000, 30_000, "chunked-rr", k=5, c=c, r=10_000)
            assert [reminders(p) for p in got["prompts"]] == [per_chunk] * (80_000 // c), (index, c)
