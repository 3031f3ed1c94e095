"""R&R's reminder and chunk counts as its tables give them, checked from outside through `litm prompt
--json` on bundled NQ-open questions, as a sweep builds the documents (R&R §4.1: about d tokens, the
gold passage about x tokens in, x from 0 to d in steps of 10k).

- Table 1 (r = 10k): no reminder at d = 10k ("reprompting is not done at this length"); d/r - 1 =
  1/3/7 at d = 20k/40k/80k.
- Table 3 (d = 80k): m = d/c + 1 calls = 9/5/3/2 at c = 10k/20k/40k/80k, so 8/4/2/1 retrieval chunks.
- Table 2: no chunked R&R at c = 10k (no reminder inside chunks of about r tokens).
- §4.1: d counts the document as the prompt holds it, each passage in its PAGE tags (the instructions
  around it and the reminders inside it not): the baseline prompt's document is d +/- 2%, encoded.
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


def document_block(prompt_dict: dict) -> str:
    """The prompt's document as it holds it: from its first page's opening tag to its last page's closing one."""
    pages = [s for s in prompt_dict["spans"] if s["kind"] in ("page", "gold")]
    return prompt_dict["text"][pages[0]["start_char"] : pages[-1]["end_char"]]


@pytest.mark.parametrize("length", [10_000, 20_000, 40_000, 80_000])
def test_baseline_documents_are_d_tokens_with_their_page_tags(capsys, length):
    from components.core.tokens import tokenizer

    count = tokenizer().count
    for index in QUESTIONS:
        for position in (0, length // 2, length):
            got = prompt(capsys, index, length, position, "baseline")
            (p,) = got["prompts"]
            block = document_block(p)
            assert block.startswith("<PAGE 1>\n") and block.endswith(f"</PAGE {got['pages']}>")
            tokens = count(block)  # the real tokeniser on the text the prompt holds
            assert abs(tokens - length) <= 0.02 * length and tokens <= length, (index, position, tokens)
            assert got["document_tokens"] == tokens  # what litm prompt reports is that count
            gold = got["gold"][0]  # x, counted the same way: the tokens of the document before the gold page
            x = count(block[: block.index(f"<PAGE {gold}>\n")]) if gold > 1 else 0
            assert abs(x - got["gold_token_positions"][0]) <= 1
            assert abs(x - position) <= 400  # within a page of x (at x = d the gold page ends the document)


@pytest.mark.parametrize("length,want", [(10_000, 0), (20_000, 1), (40_000, 3), (80_000, 7)])
def test_reprompt_reminder_counts_are_table_1s(capsys, length, want):
    for index in QUESTIONS:
        for position in sorted({0, length // 2 // 10_000 * 10_000, length}):
            got = prompt(capsys, index, length, position, "reprompt", r=10_000)
            assert [reminders(p) for p in got["prompts"]] == [want], (index, position)
            assert length - 1_000 < got["document_tokens"] <= length  # about d, never past it (tags counted)
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
