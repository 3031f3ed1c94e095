"""The judge's prompt (exact), its verdict parsing, and its audit: Cohen's kappa against hand-worked
tables."""

from __future__ import annotations

import math

import pytest

from components.core.judge import agreement, judge_prompt, parse_verdict

PROMPT = (
    "You are grading a model's answer to a question against the reference answers. Judge the meaning, not "
    "the wording: the answer is correct when it gives the same answer as one of the references, in any "
    "words, with or without an explanation around it. It is incorrect when it gives another answer, "
    'several answers of which one is wrong, or no answer (for example "I don\'t know").\n'
    "\n"
    "Question: Which character has been to Brussels?\n"
    'Reference answers: "Dalia"; "Dalia Moss"\n'
    "Model's answer: It was {prediction} Dalia,  who jogs past the Atomium.\n"
    "\n"
    "Reply with one word on the first line, CORRECT or INCORRECT, and nothing else."
)


def test_the_prompt_exactly():
    got = judge_prompt(
        "Which character has been to Brussels?",
        ["Dalia", "Dalia Moss"],
        "It was {prediction} Dalia,  who jogs past the Atomium.",  # braces and spaces kept, not re-filled
    )
    assert got == PROMPT


@pytest.mark.parametrize(
    "reply,verdict",
    [
        ("CORRECT", True),
        ("correct.", True),
        ("**INCORRECT**\nThe answer names another person.", False),
        ("\n  Incorrect", False),
        ("The answer is correct", None),
        ("", None),
    ],
)
def test_the_verdict(reply, verdict):
    assert parse_verdict(reply) is verdict


def table(tt, tf, ft, ff):
    """Verdict pairs (judge, metric) from a 2x2 table: tt both true, tf judge true and metric false..."""
    pairs = [(True, True)] * tt + [(True, False)] * tf + [(False, True)] * ft + [(False, False)] * ff
    return [j for j, _ in pairs], [m for _, m in pairs]


def test_kappa_against_a_hand_worked_table():
    # n = 50; agreement (20 + 15) / 50 = 0.7; judge says true 25 times, the metric 30:
    # chance = (25*30 + 25*20) / 50**2 = 0.5; kappa = (0.7 - 0.5) / (1 - 0.5) = 0.4
    a = agreement(*table(20, 5, 10, 15))
    assert a.n == 50 and a.raw == pytest.approx(0.7) and a.kappa == pytest.approx(0.4)
    assert a.disagreements == tuple(range(20, 35))
    # a judge kinder than the metric: 40 + 2 agree of 50, chance = (48*40 + 2*10) / 2500 = 0.776,
    # kappa = (0.84 - 0.776) / 0.224 = 0.2857...
    b = agreement(*table(40, 8, 0, 2))
    assert b.raw == pytest.approx(0.84) and b.kappa == pytest.approx(0.064 / 0.224)


def test_unscored_trials_are_left_out_and_one_sided_runs_have_no_kappa():
    a = agreement([True, None, False, True], [True, True, None, False])
    assert a.n == 2 and a.raw == 0.5 and a.disagreements == (3,)
    same = agreement([True] * 5, [True] * 5)
    assert same.raw == 1.0 and same.kappa is None
    assert agreement([None], [True]).n == 0 and math.isnan(agreement([None], [True]).raw)
    with pytest.raises(ValueError, match="2 judge verdicts against 1"):
        agreement([True, False], [True])


def test_the_audits_table_and_the_trials_to_check_of_a_hand_worked_store(tmp_path):
    """tests/webapp/judge_store.py: 12 trials, judge 1 on 6, EM 1 on 6, both 1 on 5, so raw 10/12 and
    kappa (10/12 - 1/2) / (1 - 1/2) = 2/3 (chance (6*6 + 6*6) / 144 = 1/2); fuzzy the same numbers. Three
    trials disagree with one metric or both, listed once each with every verdict."""
    from components.report.judge_audit import audits, disagreeing, summary
    from components.run.store import RunStore
    from tests.webapp.judge_store import DISAGREE_ANY, HOSTILE_QUESTION, ODD, judged_store

    with RunStore(judged_store(tmp_path / "j.sqlite"), readonly=True) as store:
        trials = store.trials_frame()
    found = audits(trials)
    table = summary(found)
    assert list(table["label"]) == ["best subspan EM", "fuzzy match"]
    assert list(table["n"]) == [12, 12] and list(table["disagreements"]) == [2, 2]
    assert table["raw"].tolist() == pytest.approx([10 / 12] * 2)
    assert table["kappa"].tolist() == pytest.approx([2 / 3] * 2)
    wrong = disagreeing(trials, found)
    assert len(wrong) == DISAGREE_ANY
    got = {(r.task, int(r.gold_index)): (r.judge, r.subspan_em, r.score) for r in wrong.itertuples()}
    assert got == {k: (bool(v[3]), bool(v[1]), bool(v[2])) for k, v in ODD.items()}
    assert HOSTILE_QUESTION in set(wrong["question"])
    assert found[0]["disagreements"][0]["answers"] == ["Shakespeare", "William Shakespeare"]
    assert disagreeing(trials, []).empty and summary([]).empty
