"""Every metric, once: its name (CLI, strategies), the trial column that stores it, its label, its source,
and how it is scored. The other tables derive from `METRICS`: the answer metrics and their scorers
(`ANSWER_METRICS`, `SCORERS`, `answer_scores`, which components.run.trial fills a trial with), the
columns a summary reads (`SUMMARY_METRIC_COLUMNS`: components.run.reader), `BY_COLUMN` and `LABELS`.

A trial stores every metric that applies to it (components.run.schema.Trial, one field per metric
column); a strategy names its primary one (`Strategy.metric`), which the Playground's verdict and the
Results page both read from the stored trial. Fuzzy match lives in the column `score` for
compatibility with older exports.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from components.core.scoring import (
    best_subspan_em,
    exact_match,
    fuzzy_match,
    kv_match,
    mq_match,
    ruler_match_all,
    ruler_match_part,
    scorer_for,
)

Scorer = Callable[[str, Iterable[str]], float]  # (prediction, gold answers) -> 0 or 1


@dataclass(frozen=True)
class Metric:
    name: str  # as written on the command line and by strategies, e.g. "subspan-em"
    column: str  # the trial column that stores it
    label: str  # as shown to users
    source: str  # where it is defined
    accuracy: bool = True  # a 0/1 accuracy (higher is better); False: not one (a rate, a log-probability)
    share: bool = True  # a value between 0 and 1 (shown as a percentage); False: a log-probability in nats
    # an answer metric scores (prediction, gold answers) with its scorer (`litm score --metric` takes it);
    # None: the runner fills the column from elsewhere (pages, sentences, the model's log-probabilities)
    scorer: Scorer | None = None
    # the scorer reads the response as the model wrote it when no answer could be parsed from it (LITM's
    # evaluation scores the output itself); False: the parsed answer only
    reads_raw: bool = False
    # stored columns read with it wherever trials are summarised: the counts a cell pools, its category
    companions: tuple[str, ...] = ()
    # the scorer reads the model's whole last response whenever there is one, not the parsed answer
    # (RULER scores the output as generated: a multi-value answer may take several lines)
    reads_response: bool = False
    # the scorer weighs every gold answer itself (RULER's share of references found), so a task whose
    # answers are all required (answer_mode "all") does not wrap it in require_all
    weighs_answers: bool = False

    @property
    def answer(self) -> bool:
        """An answer metric: a score of (prediction, gold answers)."""
        return self.scorer is not None

    @property
    def summary_columns(self) -> tuple[str, ...]:
        return (self.column, *self.companions)


METRICS: dict[str, Metric] = {
    m.name: m
    for m in (
        Metric("fuzzy", "score", "fuzzy match", "R&R §4.3", scorer=fuzzy_match),
        Metric(
            "subspan-em",
            "subspan_em",
            "best subspan EM",
            "Lost in the Middle, its evaluation script",
            scorer=best_subspan_em,
            reads_raw=True,
        ),
        Metric("exact", "exact", "exact match", "ALR2 §4", scorer=exact_match),
        Metric(
            "kv-match",
            "kv_match",
            "value in response",
            "Lost in the Middle §4.1, its evaluate_kv_responses.py",
            scorer=kv_match,
            reads_raw=True,
        ),
        Metric(
            "mq-match",
            "mq_match",
            "two-way substring match",
            "Context Overloading §4.2",
            scorer=mq_match,
            companions=("category",),
        ),
        # ALR2 §4 takes its NIAH tasks and their scoring from RULER ("Following the setup of Ruler"):
        # NVIDIA/RULER scripts/eval/synthetic/constants.py, string_match_all for NIAH, _part for QA
        Metric(
            "ruler-all",
            "ruler_all",
            "RULER match (share of values found)",
            "RULER's string_match_all (ALR2 §4, App. B.1: its NIAH tasks)",
            scorer=ruler_match_all,
            reads_response=True,
            weighs_answers=True,
        ),
        Metric(
            "ruler-part",
            "ruler_part",
            "RULER match (any value found)",
            "RULER's string_match_part (its QA tasks)",
            scorer=ruler_match_part,
            reads_response=True,
            weighs_answers=True,
        ),
        Metric("page-recall", "page_recall", "page recall", "R&R Table 4 (page retrieval)"),
        Metric("page-precision", "page_precision", "page precision", "retrieved pages that are gold"),
        Metric(
            "hallucination",
            "hallucination_rate",
            "hallucinated sentences",
            "ALR2 §5.1",
            accuracy=False,
            companions=("sentences_retrieved", "sentences_hallucinated"),
        ),
        Metric(
            "sentence-recall",
            "sentence_recall",
            "gold-sentence recall",
            "ALR2 §5.1",
            companions=("gold_facts", "gold_facts_recalled"),
        ),
        # an LLM judge ([sweep] metric = "judge", components/run/judging.py): our prompt, the judge's verdict
        Metric(
            "judge",
            "judge",
            "LLM judge",
            "this app: a judge model's verdict on our judge prompt (strategies/templates/judge.txt)",
        ),
        # the likelihood measure (components.run.measure): the gold answer's log-probability after the prompt,
        # natural log summed over its tokens; closer to 0 is better. Ours: none of the papers report it.
        Metric(
            "likelihood",
            "answer_logprob",
            "how likely the model finds the right answer (log scale)",
            "this app: the gold answer's log-probability after the prompt (teacher-forced, nats)",
            accuracy=False,
            share=False,
            companions=("answer_logprob_mean", "answer_logprob_tokens"),
        ),
        # the attention measure (components.run.measure, providers/attention.py): the share of the last prompt
        # token's attention on the gold page (Hsieh et al. 2024 §2; Peysakhovich and Lerer 2023 §3)
        Metric(
            "attention",
            "attention_gold",
            "the gold page's share of the model's attention",
            "Hsieh et al. 2024 §2 (attention by position); the bundled local model's last prompt token",
            accuracy=False,
            companions=("attention_gold_late", "attention_other"),
        ),
    )
}
LIKELIHOOD = METRICS["likelihood"]
# the metric a benchmark scores its own tasks with, by task kind (a task file may name another in its
# meta "metric"): RULER scores every NIAH variant with string_match_all (NVIDIA/RULER,
# scripts/eval/synthetic/constants.py, TASKS["niah"]); a strategy that follows the task's metric (ALR2's)
# reports it as its primary metric there
KIND_METRICS: dict[str, str] = dict.fromkeys(
    ("niah", "niah-multikey", "niah-multivalue", "niah-multiquery"), "ruler-all"
)
ANSWER_RECORDS = tuple(m for m in METRICS.values() if m.answer)
ANSWER_METRICS = tuple(m.name for m in ANSWER_RECORDS)  # scores of (prediction, gold answers)
SCORERS: dict[str, Scorer] = {m.name: m.scorer for m in METRICS.values() if m.scorer is not None}
BY_COLUMN: dict[str, Metric] = {m.column: m for m in METRICS.values()}
COLUMNS = tuple(BY_COLUMN)  # every metric's column, in METRICS' order
ANSWER_COLUMNS = tuple(m.column for m in METRICS.values() if m.answer)  # the answer metrics' columns
# every metric's column and its companions: what a summary of trials reads beside the trials' own columns
SUMMARY_METRIC_COLUMNS = tuple(c for m in METRICS.values() for c in m.summary_columns)
# not a stored column: each trial's own strategy's metric (components.report.sweeps.primary_values), the
# value the Playground's verdict shows for the same trial
PRIMARY = "primary"
LABELS: dict[str, str] = {
    PRIMARY: "each strategy's own metric",
    **{m.column: m.label for m in METRICS.values()},
}


def get_metric(name_or_column: str) -> Metric:
    """A metric by its name or its column; ValueError with the choices otherwise."""
    found = METRICS.get(name_or_column) or BY_COLUMN.get(name_or_column)
    if found is None:
        raise ValueError(f"unknown metric {name_or_column!r}; choose one of {', '.join(METRICS)}")
    return found


def score(metric: str, prediction: str, answers: Iterable[str]) -> float:
    """One answer metric (by name) of a prediction against the gold answers (`litm score`)."""
    try:
        fn = SCORERS[metric]
    except KeyError:
        raise ValueError(f"unknown answer metric {metric!r}; choose one of {', '.join(SCORERS)}") from None
    return fn(prediction, list(answers))


def answer_scores(
    answer: str, answers: Iterable[str], answer_mode: str = "any", raw: str | None = None
) -> dict[str, float]:
    """Every answer metric of one trial, by column: each scorer reads the parsed answer, or (`reads_raw`)
    the raw response when nothing was parsed, or (`reads_response`) the raw response whenever it is given;
    answer_mode "all": every gold answer is required (of a scorer that does not weigh them itself)."""
    answers = list(answers)
    prediction = answer or raw or ""
    return {
        m.column: _scorer(m, answer_mode)(_read(m, answer, raw, prediction), answers) for m in ANSWER_RECORDS
    }


def _read(m: Metric, answer: str, raw: str | None, prediction: str) -> str:
    if m.reads_response and raw is not None:
        return raw
    return prediction if m.reads_raw else answer


def _scorer(m: Metric, answer_mode: str) -> Scorer:
    assert m.scorer is not None
    return m.scorer if m.weighs_answers else scorer_for(m.scorer, answer_mode)
