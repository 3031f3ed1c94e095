"""ALR2 §5.1's retrieval measures as the paper defines them: a retrieved sentence is "in the context"
when it matches one of the document's sentences; a gold fact is recalled when a retrieved sentence
contains it; a cell's rates pool every retrieved sentence (gold fact) of its trials."""

import json

import pandas as pd
import pytest

from components.core.scoring import (
    gold_fact_counts,
    gold_sentence_recall,
    hallucination_rate,
    sentence_counts,
)
from components.providers.fake import FakeProvider
from components.report.analysis import accuracy
from components.run.config import SweepConfig
from components.run.reader import summary_frame
from components.run.runner import run_sweep
from components.run.store import RunStore

CONTEXT = [
    "Hamlet was written by William Shakespeare. It is set in Denmark.",
    "Othello is set in Venice. Mr. Smith saw it in 1999.",
]


def test_a_sentence_is_in_the_context_when_it_matches_one_of_its_sentences():
    # case, punctuation and spacing do not matter; an abbreviation does not split a sentence
    assert sentence_counts(
        ["hamlet was written by william shakespeare", "Mr. Smith saw it in 1999"], CONTEXT
    ) == (2, 0)
    # a 3-word fragment is not a sentence of the context; an item of two sentences is two retrieved
    # sentences (ALR2 counts sentences), each in the context
    assert sentence_counts(
        ["written by William", "It is set in Denmark. Othello is set in Venice."], CONTEXT
    ) == (3, 1)
    # nor is a span across two pages without its sentence end, nor an invented sentence
    assert sentence_counts(
        ["It is set in Denmark Othello is set in Venice", "Macbeth is Scottish."], CONTEXT
    ) == (2, 2)
    assert hallucination_rate(["Othello is set in Venice.", "Macbeth is Scottish."], CONTEXT) == 0.5
    assert hallucination_rate([], CONTEXT) is None and sentence_counts(["...", ""], CONTEXT) == (0, 0)


def test_letters_of_any_script_count():
    ctx = "東京は日本の首都です。大阪は港町です。"
    assert sentence_counts(["東京は日本の首都です", "京都は古都です"], [ctx]) == (2, 1)


def test_a_gold_fact_is_recalled_when_a_retrieved_sentence_contains_it():
    gold = ["Hamlet was written by William Shakespeare.", "It is set in Denmark."]
    assert gold_fact_counts(["Hamlet was written by William Shakespeare, around 1600."], gold) == (2, 1)
    # a retrieved sentence covering just over half of a fact does not recall it
    assert gold_fact_counts(["Hamlet was written by William", "set in Denmark"], gold) == (2, 0)
    # whole words only: "in Denmarks" does not contain "in Denmark"
    assert gold_fact_counts(["It is set in Denmarks."], gold) == (2, 0)
    assert (
        gold_sentence_recall(["It is set in Denmark!", "Hamlet was written by William Shakespeare"], gold)
        == 1.0
    )
    assert gold_sentence_recall(["x"], []) is None


SENTENCES = [
    f"Fact number {w} is true."
    for w in ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
]


def tasks_file(folder):
    rows = [
        {
            "id": "q1",
            "question": "What is invented?",
            "answers": ["x"],
            "gold": [0],
            "passages": ["Alpha is the first letter.", "Omega is the last letter."],
            "gold_sentences": ["Alpha is the first letter."],
        },
        {
            "id": "q2",
            "question": "What are the facts?",
            "answers": ["y"],
            "gold": [0],
            "passages": [" ".join(SENTENCES[:5]), " ".join(SENTENCES[5:])],
            "gold_sentences": [SENTENCES[0], SENTENCES[8], "Fact number ten is true."],
        },
    ]
    path = folder / "facts.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def reply(messages, settings):
    text = messages[-1]["content"]
    if len(messages) > 1:  # stage 2 continues stage 1's conversation (ALR2 Fig. 3)
        return "x"
    if "What is invented?" in text:
        return "- Gamma is a letter that the document never mentions."
    return "\n".join(f"- {s}" for s in SENTENCES)


def test_the_pooled_rate_of_a_cell_over_a_real_sweep_and_store(tmp_path):
    """The issue's example: one trial with 1 invented sentence, one with 9 found ones. The paper's
    pooled formula gives 1/10 = 0.1 (a mean of the trials' rates would read 0.5)."""
    tasks_file(tmp_path)
    (tmp_path / "s.toml").write_text(
        '[sweep]\nname = "alr2"\ntasks = "facts.jsonl"\ndocuments = [2]\ngold_index = [0]\n'
        'strategies = ["retrieve-then-reason"]\n[[sweep.models]]\nprovider = "fake"\nmodel = "fake"\n'
    )
    cfg = SweepConfig.from_toml(tmp_path / "s.toml")
    fake = FakeProvider(responder=reply)
    with RunStore(tmp_path / "runs.sqlite") as store:
        run_sweep(cfg, store, providers={cfg.models[0].label: fake})
        frame = summary_frame(store)
    # stage 2 went out as stage 1's conversation continued: user, assistant, user
    assert sorted(len(h["messages"]) for h in fake.history) == [1, 1, 3, 3]
    frame = frame.sort_values("task").reset_index(drop=True)
    assert frame["error"].isna().all(), frame["error"].tolist()
    assert frame["sentences_retrieved"].tolist() == [1, 9]
    assert frame["sentences_hallucinated"].tolist() == [1, 0]
    assert frame["hallucination_rate"].tolist() == [1.0, 0.0]
    assert frame["gold_facts"].tolist() == [1, 3] and frame["gold_facts_recalled"].tolist() == [0, 2]

    cell = accuracy(frame, ["strategy"], "hallucination_rate").iloc[0]
    assert cell["mean"] == pytest.approx(0.1)
    assert cell["n"] == 2 and cell["successes"] == 1
    assert 0.0 <= cell["lo"] < 0.1 < cell["hi"] <= 1.0
    assert frame["hallucination_rate"].mean() == 0.5  # what a mean of rates would have said
    recall = accuracy(frame, ["strategy"], "sentence_recall").iloc[0]
    assert recall["mean"] == pytest.approx(2 / 4)  # pooled gold facts: 0 of 1 and 2 of 3


def test_trials_from_before_the_counts_fall_back_to_the_mean_of_their_rates():
    old = pd.DataFrame({"strategy": ["rr", "rr"], "hallucination_rate": [1.0, 0.0]})
    assert accuracy(old, ["strategy"], "hallucination_rate").iloc[0]["mean"] == 0.5
