"""Every metric, once: its name (CLI, strategies), the trial column that stores it, its label, its source.

A trial stores every metric that applies to it (components.run.schema.Trial); a strategy names its
primary one (`Strategy.metric`), which the Playground's verdict and the Results page both read from
the stored trial. Fuzzy match lives in the column `score` for compatibility with older exports.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Metric:
    name: str  # as written on the command line and by strategies, e.g. "subspan-em"
    column: str  # the trial column that stores it
    label: str  # as shown to users
    source: str  # where it is defined
    accuracy: bool = True  # a 0/1 accuracy (higher is better); False: not one (a rate, a log-probability)
    share: bool = True  # a value between 0 and 1 (shown as a percentage); False: a log-probability in nats


METRICS: dict[str, Metric] = {m.name: m for m in (
    Metric("fuzzy", "score", "fuzzy match", "R&R §4.3"),
    Metric("subspan-em", "subspan_em", "best subspan EM", "Lost in the Middle, its evaluation script"),
    Metric("exact", "exact", "exact match", "ALR2 §4"),
    Metric("kv-match", "kv_match", "value in response", "Lost in the Middle §4.1, its evaluate_kv_responses.py"),
    Metric("mq-match", "mq_match", "two-way substring match", "Context Overloading §4.2"),
    Metric("page-recall", "page_recall", "page recall", "R&R Table 4 (page retrieval)"),
    Metric("page-precision", "page_precision", "page precision", "retrieved pages that are gold"),
    Metric("hallucination", "hallucination_rate", "hallucinated sentences", "ALR2 §5.1", accuracy=False),
    Metric("sentence-recall", "sentence_recall", "gold-sentence recall", "ALR2 §5.1"),
    # the likelihood measure (components.run.measure): the gold answer's log-probability after the prompt,
    # natural log summed over its tokens; closer to 0 is better. Ours: none of the papers report it.
    Metric("likelihood", "answer_logprob", "how likely the model finds the right answer (log scale)",
           "this app: the gold answer's log-probability after the prompt (teacher-forced, nats)",
           accuracy=False, share=False),
)}
LIKELIHOOD = METRICS["likelihood"]
ANSWER_METRICS = ("fuzzy", "subspan-em", "exact", "kv-match", "mq-match")  # scores of (prediction, gold answers)
BY_COLUMN: dict[str, Metric] = {m.column: m for m in METRICS.values()}
# not a stored column: each trial's own strategy's metric (components.report.sweeps.primary_values), the
# value the Playground's verdict shows for the same trial
PRIMARY = "primary"
LABELS: dict[str, str] = {PRIMARY: "each strategy's own metric", **{m.column: m.label for m in METRICS.values()}}


def get_metric(name_or_column: str) -> Metric:
    """A metric by its name or its column; ValueError with the choices otherwise."""
    found = METRICS.get(name_or_column) or BY_COLUMN.get(name_or_column)
    if found is None:
        raise ValueError(f"unknown metric {name_or_column!r}; choose one of {', '.join(METRICS)}")
    return found
