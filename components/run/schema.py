"""The one definition of a trial: the runner fills it, the store migrates to it and writes it, exports
and imports read and write its columns, and the pages read them.

`Trial` holds what a trial is (its task, cell, strategy, model) and what came of it (answer, every
metric that applies, error, calls, tokens, cost). Each field's metadata gives its SQL type and the
store schema version that added it, from which the store's migrations add new columns.

Columns `litm results` prints (RESULT_COLUMNS) keep their names and order: scripts read them. New
columns are only ever added after them.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, fields

from components.core.metrics import METRICS


def _col(sql: str, help_: str, since: int = 1, default=None):
    return field(default=default, metadata={"sql": sql, "help": help_, "since": since})


def _list_col(help_: str, since: int = 1):
    return field(default=None, metadata={"sql": "JSON", "help": help_, "since": since})


@dataclass
class Trial:
    trial_key: str = _col("TEXT", "stable key of (task, cell, strategy, params, model, settings)", default="")
    task: str = _col("TEXT", "task id")
    question: str = _col("TEXT", "the question, as sent")
    answers: list | None = _list_col("gold answers")
    strategy: str = _col("TEXT", "strategy name (components.strategies)")
    params: str = _col("TEXT", "strategy parameters, JSON with sorted keys")
    model: str = _col("TEXT", "provider:model")
    length: int | None = _col(
        "INTEGER", "requested document length in tokens (R&R §4.1); empty in a documents sweep"
    )
    position: float | None = _col("REAL", "requested answer position: <= 1 a fraction of length, > 1 tokens")
    documents: int | None = _col(
        "INTEGER", "number of documents (LITM §3.1); empty in a token sweep", since=2
    )
    gold_index: int | None = _col("INTEGER", "0-based index of the gold document (LITM §3.1)", since=2)
    actual_length: int | None = _col(
        "INTEGER", "document tokens built (a token cell: as R&R's prompt holds it, PAGE tags included)"
    )
    actual_position: int | None = _col("INTEGER", "tokens before the first gold page (counted the same way)")
    gold_pages: list | None = _list_col("gold page numbers")
    retrieved_pages: list | None = _list_col("pages a retrieval stage returned (ICR, R&R)")
    cited_pages: list | None = _list_col("pages the answer cited")
    sentences: list | None = _list_col("sentences or quotes a stage retrieved (ALR2)", since=3)
    answer: str | None = _col("TEXT", "the parsed answer")
    raw_answer: str | None = _col("TEXT", "the last response, as the model wrote it")
    parse_error: str | None = _col("TEXT", "why a response could not be parsed")
    metric: str | None = _col("TEXT", "the strategy's primary metric (components.core.metrics)", since=3)
    score: float | None = _col("REAL", "fuzzy match (R&R §4.3)")
    subspan_em: float | None = _col("REAL", "best subspan EM (Lost in the Middle)")
    exact: float | None = _col("REAL", "exact match (ALR2)")
    page_recall: float | None = _col("REAL", "gold pages among the retrieved (or cited) pages")
    page_precision: float | None = _col("REAL", "retrieved (or cited) pages that are gold")
    hallucination_rate: float | None = _col(
        "REAL", "retrieved sentences not in the document (ALR2 §5.1)", since=3
    )
    sentence_recall: float | None = _col("REAL", "gold sentences among the retrieved (ALR2 §5.1)", since=3)
    error: str | None = _col("TEXT", "why the trial failed (it is then not scored)")
    error_kind: str | None = _col(
        "TEXT", "kind of failure: auth, rate_limited, transient, too_long, ...", since=3
    )
    calls: int = _col("INTEGER", "model calls (cached ones included)", default=0)
    cached_calls: int = _col("INTEGER", "calls answered from the cache", default=0)
    input_tokens: int = _col("INTEGER", "input tokens of all calls", default=0)
    output_tokens: int = _col("INTEGER", "output tokens of all calls", default=0)
    cost_usd: float | None = _col(
        "REAL", "dollars at the prices of the run (None: unknown price)", default=0.0
    )
    latency_s: float = _col("REAL", "seconds spent in calls", default=0.0)
    cached_input_tokens: int | None = _col(
        "INTEGER",
        "input tokens the provider read from its prompt cache (OpenAI cached_tokens, "
        "Anthropic cache_read_input_tokens); part of input_tokens",
        since=5,
    )
    cache_write_tokens: int | None = _col(
        "INTEGER",
        "input tokens written to the provider's prompt cache (Anthropic "
        "cache_creation_input_tokens); part of input_tokens",
        since=5,
    )
    answer_logprob: float | None = _col(
        "REAL", "natural log-probability of the gold answer, summed over its tokens (the best alias)", since=5
    )
    answer_logprob_mean: float | None = _col("REAL", "answer_logprob per answer token", since=5)
    answer_logprob_tokens: int | None = _col("INTEGER", "tokens of the answer alias scored", since=5)
    kv_match: float | None = _col(
        "REAL",
        "the gold value anywhere in the response, case-insensitive (LITM §4.1 key-value evaluation)",
        since=6,
    )
    # 7: the multi-question design (Context Overloading, components/run/multiq.py): one trial per question
    contexts: int | None = _col(
        "INTEGER", "K: contexts (SQuAD paragraphs) in the multi-question document", since=7
    )
    questions_per_context: int | None = _col(
        "INTEGER", "Q: questions asked of each context (multi-question)", since=7
    )
    mq_document: int | None = _col(
        "INTEGER", "which of the n documents of this K (from 0; multi-question)", since=7
    )
    question_number: int | None = _col(
        "INTEGER", "the question's number in the whole document (Q1 = 1)", since=7
    )
    mq_match: float | None = _col(
        "REAL", "gold and answer contain one another, raw or normalised (Context Overloading §4.2)", since=7
    )
    category: str | None = _col(
        "TEXT",
        "correct, partial, not_specified or wrong (Context Overloading §4.2, "
        "§5.3; rules in core.scoring.mq_category)",
        since=7,
    )
    # 8: ALR2 §5.1 pools its measures over a cell: the counts behind each trial's rate, so a cell's rate is
    # every hallucinated sentence over every retrieved one (not a mean of the trials' rates)
    sentences_retrieved: int | None = _col("INTEGER", "retrieved sentences counted (ALR2 §5.1)", since=8)
    sentences_hallucinated: int | None = _col(
        "INTEGER", "retrieved sentences that match no sentence of the document (ALR2 §5.1)", since=8
    )
    gold_facts: int | None = _col("INTEGER", "gold supporting facts of the task (ALR2 §5.1)", since=8)
    gold_facts_recalled: int | None = _col(
        "INTEGER", "gold supporting facts a retrieved sentence contains (ALR2 §5.1)", since=8
    )
    # 9: RULER's scorers, which ALR2 reports on its NIAH tasks (ALR2 §4; core.scoring.ruler_match_all/_part)
    ruler_all: float | None = _col(
        "REAL", "share of the gold answers the response contains (RULER string_match_all)", since=9
    )
    ruler_part: float | None = _col(
        "REAL", "1 if the response contains any gold answer (RULER string_match_part)", since=9
    )
    # 10: the attention measure (components/run/measure.py, providers/attention.py): where the last prompt
    # token of the bundled local model looks, by page (Hsieh et al. 2024 §2; Peysakhovich and Lerer 2023 §3)
    attention_gold: float | None = _col(
        "REAL",
        "share of the last prompt token's attention on the gold page (mean over layers and heads)",
        since=10,
    )
    attention_gold_late: float | None = _col(
        "REAL", "attention_gold over the last half of the layers (Hsieh et al. 2024 §4's choice)", since=10
    )
    attention_other: float | None = _col(
        "REAL", "share of that attention outside every page (instructions, question, template)", since=10
    )
    attention_pages: list | None = _list_col("each page's share of that attention, in prompt order", since=10)
    # 11: an LLM judge's verdict (core.judge, [sweep.judge]) and repeated samples ([sweep] samples)
    judge: float | None = _col(
        "REAL", "the LLM judge's verdict: 1 correct, 0 incorrect (core.judge)", since=11
    )
    judge_reply: str | None = _col("TEXT", "the judge's reply, as it wrote it", since=11)
    sample: int | None = _col(
        "INTEGER", "the sample's index (from 0) when a sweep takes samples > 1", since=11
    )

    def row(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @property
    def primary(self) -> float | None:
        """The value of the strategy's own metric (None when unscored or unknown)."""
        m = METRICS.get(self.metric or "")
        return None if m is None or self.error else getattr(self, m.column)


FIELDS = tuple(fields(Trial))
STORED = tuple(f.name for f in FIELDS)
JSON_COLUMNS = tuple(f.name for f in FIELDS if f.metadata["sql"] == "JSON")
INT_COLUMNS = tuple(f.name for f in FIELDS if f.metadata["sql"] == "INTEGER")
SQL_TYPES = {f.name: ("TEXT" if f.metadata["sql"] == "JSON" else f.metadata["sql"]) for f in FIELDS}

# `litm results` columns, in the order scripts rely on (add at the end, rename none)
RESULT_COLUMNS = [
    "sweep",
    "task",
    "strategy",
    "model",
    "params",
    "length",
    "position",
    "actual_length",
    "actual_position",
    "answer",
    "score",
    "subspan_em",
    "exact",
    "page_recall",
    "page_precision",
    "error",
    "calls",
    "input_tokens",
    "output_tokens",
    "cost_usd",
    "latency_s",
    "documents",
    "gold_index",
    "metric",
    "hallucination_rate",
    "sentence_recall",
    "error_kind",
    "kv_match",
    "answer_logprob",
    "answer_logprob_mean",
    "answer_logprob_tokens",
    "contexts",
    "questions_per_context",
    "mq_document",
    "question_number",
    "mq_match",
    "category",
    "sentences_retrieved",
    "sentences_hallucinated",
    "gold_facts",
    "gold_facts_recalled",
    "ruler_all",
    "ruler_part",
    "attention_gold",
    "attention_gold_late",
    "attention_other",
    "attention_pages",
    "judge",
    "sample",
]
# every column of an export: the result columns, then the rest of the trial, then the store's own
EXPORT_COLUMNS = [
    "trial_id",
    "sweep_id",
    *RESULT_COLUMNS,
    *[n for n in STORED if n not in RESULT_COLUMNS],
    "created",
]


def added_in(version: int) -> list[str]:
    """ALTER TABLE statements adding the trial columns that store schema `version` introduced."""
    return [
        f"ALTER TABLE trials ADD COLUMN {f.name} {SQL_TYPES[f.name]}"
        for f in FIELDS
        if f.metadata["since"] == version
    ]


def encode(name: str, value):
    """A trial value as SQLite stores it (lists as JSON text)."""
    if name in JSON_COLUMNS:
        return None if value is None else json.dumps(list(value))
    return value


def decode(name: str, value):
    if name in JSON_COLUMNS:
        return None if value is None else json.loads(value)
    return value


def key_of(fields: dict) -> str:
    """A trial's key: 24 hex digits of the sha256 of what it depends on (`fields`, JSON with sorted keys).
    The one way a key is made: run.plan.trial_key (a sweep's trial), run.multiq.mq_key (a question of a
    multi-question document) and an imported row without a key (run.store_io) all call it."""
    blob = json.dumps(fields, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


def model_fields(config, model) -> dict:
    """What of the model (a run.config.ModelConfig) and the sweep's settings (its SweepConfig) changes an
    answer: part of every trial's key."""
    # a model's temperature (above 0) and seed, only when set: older keys stay as they were
    temperature, seed = getattr(model, "temperature", None), getattr(model, "seed", None)
    sampling = {
        **({"model_temperature": temperature} if temperature else {}),
        **({"model_seed": seed} if seed is not None else {}),
    }
    return {
        "model": model.label,
        "base_url": model.base_url or "",
        "encoding": config.encoding,
        "max_tokens": model.max_tokens or config.max_tokens,
        "seed": config.seed,
        **sampling,
    }


def params_json(params: dict) -> str:
    return json.dumps(params, sort_keys=True)
