"""A metric is one record (components.core.metrics.Metric): the answer metrics, their scorers, the summary
columns, the labels and the trial's scores all derive from METRICS, and the record, the stored trial and
the tables agree."""

from dataclasses import fields

import pytest

from components.core.completion import Completion
from components.core.documents import make_document
from components.core.metrics import (
    ANSWER_METRICS,
    BY_COLUMN,
    LABELS,
    METRICS,
    SCORERS,
    SUMMARY_METRIC_COLUMNS,
    answer_scores,
    score,
)
from components.core.parsing import Parsed
from components.run.reader import SUMMARY_COLUMNS
from components.run.schema import SQL_TYPES, Trial
from components.run.trial import score_outcome
from components.strategies.base import Outcome

TRIAL_FIELDS = {f.name for f in fields(Trial)}


def test_every_metric_has_its_trial_column_and_summary_columns():
    for m in METRICS.values():
        assert m.column in TRIAL_FIELDS, f"{m.name}: no Trial field {m.column}"
        assert SQL_TYPES[m.column] == "REAL", m.name
        for c in m.companions:
            assert c in TRIAL_FIELDS, f"{m.name}: companion {c} is not a Trial field"
        assert set(m.summary_columns) <= set(SUMMARY_COLUMNS)
        assert LABELS[m.column] == m.label
        assert BY_COLUMN[m.column] is m
    assert len(SUMMARY_COLUMNS) == len(set(SUMMARY_COLUMNS))  # no column read twice
    assert len(SUMMARY_METRIC_COLUMNS) == len(set(SUMMARY_METRIC_COLUMNS))


def test_answer_metrics_are_the_records_with_a_scorer_in_their_order():
    assert ANSWER_METRICS == (
        "fuzzy",
        "subspan-em",
        "exact",
        "kv-match",
        "mq-match",
        "ruler-all",
        "ruler-part",
    )
    assert list(SCORERS) == list(ANSWER_METRICS)
    assert all(METRICS[n].answer and SCORERS[n] is METRICS[n].scorer for n in ANSWER_METRICS)
    assert not any(m.answer for n, m in METRICS.items() if n not in ANSWER_METRICS)


def test_score_by_name_and_an_unknown_name_lists_the_answer_metrics():
    assert score("kv-match", "The value is:\nABC", ["abc"]) == 1.0
    assert score("subspan-em", "The value is:\nABC", ["abc"]) == 0.0
    with pytest.raises(
        ValueError,
        match=r"unknown answer metric 'page-recall'; choose one of fuzzy, subspan-em, "
        r"exact, kv-match, mq-match, ruler-all, ruler-part$",
    ):
        score("page-recall", "a", ["a"])


def test_answer_scores_read_the_raw_response_only_where_the_record_says():
    # nothing parsed: the metrics that read the raw response score it, the others score the empty answer
    got = answer_scores("", ["Paris"], raw="Paris")
    assert got == {
        "score": 0.0,
        "subspan_em": 1.0,
        "exact": 0.0,
        "kv_match": 1.0,
        "mq_match": 0.0,
        "ruler_all": 1.0,
        "ruler_part": 1.0,
    }
    reading = {m.column for m in METRICS.values() if m.reads_raw or m.reads_response}
    assert {c for c, v in got.items() if v} == reading
    # a parsed answer is what every metric reads, but RULER's, which score the whole response (as generated)
    got = answer_scores("Paris", ["Paris"], raw="I think Lyon")
    assert got == {**dict.fromkeys(got, 1.0), "ruler_all": 0.0, "ruler_part": 0.0}
    assert answer_scores("Paris", ["Paris"])["ruler_all"] == 1.0  # no response given: the answer
    # every gold answer required
    assert answer_scores("Paris", ["Paris", "Lyon"], "all")["score"] == 0.0
    assert answer_scores("Paris and Lyon", ["Paris", "Lyon"], "all")["subspan_em"] == 1.0


def _outcome(text: str, parsed: Parsed) -> Outcome:
    done = Completion(text=text, input_tokens=10, output_tokens=2, latency_s=0.1, model="m")
    return Outcome(parsed.answer if parsed.ok else "", parsed, [], [done], cited_pages=parsed.pages)


def test_a_trial_is_scored_with_every_answer_metric():
    doc = make_document(["Paris is the capital.", "Lyon is a city."], gold=[1])
    trial = Trial()
    score_outcome(trial, _outcome("Paris", Parsed(True, answer="Paris", pages=(1,))), doc, ["Paris"])
    for name in ANSWER_METRICS:
        assert getattr(trial, METRICS[name].column) == 1.0, name
    assert trial.page_recall == 1.0 and trial.page_precision == 1.0
    # unparsed: raw-reading metrics still find the answer, the others score 0
    trial = Trial()
    score_outcome(trial, _outcome("Paris!", Parsed(False, error="no answer")), doc, ["Paris"])
    found = {n for n in ANSWER_METRICS if getattr(trial, METRICS[n].column)}
    assert found == {"subspan-em", "kv-match", "ruler-all", "ruler-part"}
    assert trial.parse_error == "no answer"


def test_multi_question_trials_score_the_same_answer_metrics():
    from components.run.multiq import score_answer

    trial = Trial()
    score_answer(trial, "Around 1899", ["1899"])
    assert {n: getattr(trial, METRICS[n].column) for n in ANSWER_METRICS} == {
        "fuzzy": 1.0,
        "subspan-em": 1.0,
        "exact": 0.0,
        "kv-match": 1.0,
        "mq-match": 1.0,
        "ruler-all": 1.0,
        "ruler-part": 1.0,
    }
    assert trial.category == "correct"


def test_a_complete_multi_value_answer_scores_1_under_rulers_reading():
    """RULER's string_match_all, ALR2's NIAH metric: the share of the values the response contains. The
    strict exact match (kept for what ALR2 scores with EM) gives the joined answer 0, as before."""
    import json
    from pathlib import Path

    row = Path(__file__).resolve().parent.parent / "sample_docs" / "tasks" / "niah-multivalue.jsonl"
    values = json.loads(row.read_text().splitlines()[0])["answers"]
    assert values == ["7273843", "4860197", "5787803", "1939635"]
    got = answer_scores(", ".join(values), values, "all")
    assert (got["ruler_all"], got["ruler_part"], got["exact"], got["score"]) == (1.0, 1.0, 0.0, 1.0)
    half = answer_scores("7273843\n5787803", values, "all", raw="7273843\n5787803")
    assert (half["ruler_all"], half["ruler_part"], half["subspan_em"]) == (0.5, 1.0, 0.0)
    assert score("ruler-all", "None of them.", values) == 0.0


def test_a_new_record_is_all_a_scored_metric_needs(monkeypatch):
    """One record with a scorer, and the trial's scores and `score` take it (the schema's column aside)."""
    import components.core.metrics as metrics

    def shouting(prediction, answers):
        return float(any(a.upper() in (prediction or "") for a in answers))

    new = metrics.Metric(
        "shout", "exact", "shouted", "a test", scorer=shouting
    )  # stored in an existing column
    table = {n: m for n, m in METRICS.items() if n != "exact"} | {"shout": new}
    monkeypatch.setattr(metrics, "METRICS", table)
    monkeypatch.setattr(metrics, "SCORERS", {m.name: m.scorer for m in table.values() if m.scorer})
    assert metrics.answer_scores("PARIS", ["Paris"])["exact"] == 1.0
    assert metrics.score("shout", "paris", ["Paris"]) == 0.0
