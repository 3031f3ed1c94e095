"""LITM's random-order run (App. C) as its reference scripts build it: `random.seed(0)` once, then for
each example in file order `random.shuffle` of its distractors, the gold document put back at its index
(scripts/get_qa_responses_*.py, `--use-random-ordering`), with the prompt's extra sentence
(`qa_ordered_randomly.prompt`). The reference's procedure is written out here again, from the raw task
file, and every prompt is compared with `litm prompt`'s, character for character."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import pytest

from components.cli import main
from components.core.documents import make_document
from components.strategies import get_strategy
from components.strategies.litm import reference_order, shuffled_pages

NQ30 = Path(__file__).resolve().parent.parent / "sample_docs" / "tasks" / "nq-open-30docs.jsonl.gz"
HEAD = (
    "Write a high-quality answer for the given question using only the provided search results "
    "(some of which might be irrelevant). The search results are ordered randomly."
)


def rows() -> list[dict]:
    with gzip.open(NQ30, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def reference_prompts(examples: list[list[dict]], questions: list[str]) -> list[str]:
    """The reference, step by step: seed once; per example, in order, shuffle the non-gold documents,
    insert the gold one at its original index, format the prompt."""
    random.seed(0)
    out = []
    for ctxs, question in zip(examples, questions, strict=True):
        (gold_index,) = [i for i, c in enumerate(ctxs) if c["isgold"]]
        distractors = [c for c in ctxs if not c["isgold"]]
        random.shuffle(distractors)
        distractors.insert(gold_index, ctxs[gold_index])
        docs = "\n".join(
            f"Document [{i + 1}](Title: {c['title']}) {c['text']}" for i, c in enumerate(distractors)
        )
        out.append(f"{HEAD}\n\n{docs}\n\nQuestion: {question}\nAnswer:")
    return out


def cli_prompt(capsys, *args) -> dict:
    assert main(["prompt", "--task", str(NQ30), "--strategy", "litm-random", "--json", *args]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("gold_index", [0, 9, 19])
def test_twenty_documents_equal_the_reference_shuffle(capsys, gold_index):
    """The reference's 20-document file with the gold at index i: each example's first 19 distractors,
    the gold at i. Example j's shuffle is the (j+1)-th since the seed, so the prompt of example j depends
    on the examples before it; `--index j` gives the same prompt whatever was built before it."""
    data = rows()[:12]
    files = [c["ctxs"][1:20][:gold_index] + [c["ctxs"][0]] + c["ctxs"][1:20][gold_index:] for c in data]
    want = reference_prompts(files, [r["question"] for r in data])
    for j in (11, 0, 5, 1):
        got = cli_prompt(capsys, "--index", str(j), "--documents", "20", "--position", str(gold_index))
        assert got["prompts"][0]["text"] == want[j], j
        assert got["gold"] == [gold_index + 1] and got["pages"] == 20
    # not a shuffle that happens to keep the order: the examples' orders differ from the file's
    plain = cli_prompt(capsys, "--index", "11", "--documents", "20", "--position", str(gold_index))
    assert (
        main(
            [
                "prompt",
                "--task",
                str(NQ30),
                "--strategy",
                "litm",
                "--json",
                "--index",
                "11",
                "--documents",
                "20",
                "--position",
                str(gold_index),
            ]
        )
        == 0
    )
    unshuffled = json.loads(capsys.readouterr().out)["prompts"][0]["text"]
    assert plain["prompts"][0]["text"].split("\n\n")[1] != unshuffled.split("\n\n")[1]


def test_every_task_of_the_file_as_given_equals_the_reference(capsys):
    """The whole 500-question file as the reference's input (30 documents each, the gold first): the
    shuffle's state carries across all 500 examples in file order."""
    data = rows()
    want = reference_prompts([r["ctxs"] for r in data], [r["question"] for r in data])
    assert main(["prompt", "--task", str(NQ30), "--strategy", "litm-random", "--all"]) == 0
    got = [json.loads(line)["prompts"][0]["text"] for line in capsys.readouterr().out.splitlines()]
    assert len(got) == len(want) == 500
    mismatched = [j for j, (a, b) in enumerate(zip(got, want, strict=True)) if a != b]
    assert mismatched == []


def test_reference_order_is_the_seeded_sequence_of_shuffles():
    rng = random.Random(0)
    expected = []
    for _ in range(30):
        order = list(range(19))
        rng.shuffle(order)
        expected.append(tuple(order))
    assert [reference_order(19, j) for j in (29, 0, 7)] == [expected[29], expected[0], expected[7]]
    assert sorted(reference_order(19, 3)) == list(range(19)) and reference_order(19, 3) != tuple(range(19))
    with pytest.raises(ValueError):
        reference_order(19, -1)


def test_gold_pages_keep_their_index_and_a_pasted_document_is_example_zero():
    texts = [f"Passage {i}." for i in range(8)]
    doc = make_document(texts, titles=[f"T{i}" for i in range(8)], gold=[3, 6])
    pages = shuffled_pages(doc, 4)
    assert [p.number for p in pages][2] == 3 and [p.number for p in pages][5] == 6
    rest = [p.number for p in pages if p.number not in (3, 6)]
    assert rest == [[1, 2, 4, 5, 7, 8][i] for i in reference_order(6, 4)]
    strategy = get_strategy("litm-random")
    prompt = strategy.first_prompts(doc, "q")[0]
    first = [p.number for p in shuffled_pages(doc, 0)]
    assert [s.page for s in prompt.spans if s.kind in ("page", "gold")] == first
    assert [s.page for s in prompt.spans if s.kind == "gold"] == [3, 6]


def test_a_sweep_sends_the_reference_prompts():
    """A sweep plans the first n tasks of the file: each trial's document carries its task's position in
    the file, so the prompts a sweep sends are the reference's, whatever order the trials run in."""
    from components.run.config import SweepConfig
    from components.run.plan import Documents, plan

    config = SweepConfig.from_dict(
        {
            "sweep": {
                "name": "r",
                "tasks": str(NQ30),
                "n_tasks": 6,
                "documents": [10],
                "gold_index": [4],
                "strategies": ["litm-random"],
                "models": [{"provider": "openai", "model": "gpt-4o-mini"}],
            }
        }
    )
    data = rows()[:6]
    want = reference_prompts(
        [r["ctxs"][1:10][:4] + [r["ctxs"][0]] + r["ctxs"][1:10][4:] for r in data],
        [r["question"] for r in data],
    )
    docs = Documents(config.encoding, config.all_tasks().tasks)
    strategy = get_strategy("litm-random")
    specs = plan(config)
    got = {
        s.task.id: strategy.first_prompts(docs.get(s).document, s.task.question)[0].text
        for s in reversed(specs)
    }
    assert [got[r["id"]] for r in data] == want
