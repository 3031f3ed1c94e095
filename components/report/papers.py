"""The papers' main experiments, each beside the shipped run that reruns it (the Papers page).

One row of EXPERIMENTS per experiment: the paper and its table, what it measured (one sentence), which
published rows hold its numbers (report.published, or report.published_004 for Context Overloading),
the shipped run of ours (sample_docs/runs/<run>.sqlite, opened read-only) and how its trials line up,
what differs between the two (model, data, distractors) in one line, the bundled config that reruns it
(`litm sweep <config>`), and the Experiments page's grid where that page can draw it (a grid of lengths
and positions; LITM's documents design and the multi-question design are run from the command).

`published_table(exp)` and `ours_table(exp)` are the two tables the page shows side by side; every
accuracy of ours carries its n and its Wilson 95% interval (report.analysis.accuracy).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache

import pandas as pd

from components.core.resources import sample_path
from components.report.analysis import accuracy

PAPERS: dict[str, str] = {
    "liu2023": "Lost in the Middle (Liu et al., 2023)",
    "rr2024": "R&R (Agrawal et al., 2024)",
    "alr2_2024": "ALR2 (Li et al., 2024)",
    "context_overloading_2025": "Context Overloading in RAG Based Systems (Naved et al., 2025)",
}
BUNDLED_MODEL = "Qwen2.5 Coder 0.5B Instruct (the bundled local model, on 2 CPU cores)"
DB = "papers.sqlite"  # the store the commands write (a new file in the current folder)


@dataclass(frozen=True)
class Experiment:
    paper: str  # a key of PAPERS
    key: str
    title: str
    measured: str  # one sentence
    tables: tuple[str, ...]  # the published table(s)
    where: dict = field(default_factory=dict)  # published rows: column -> value
    rows: tuple[str, ...] = ()  # published columns that make a row of the table
    columns: tuple[str, ...] = ()  # published columns that make a column of the table
    metric: str = ""  # the published metric, as its label
    run: str | None = None  # the shipped run (sample_docs/runs/<run>.sqlite; its sweep has the same name)
    ours_where: dict = field(default_factory=dict)  # trials: column -> value
    ours_rows: tuple[str, ...] = ()  # trial columns that make a row of ours
    ours_columns: tuple[str, ...] = ("strategy",)
    ours_metric: str = "score"  # the trial column scored
    differs: str = ""  # one line: model, data, distractors
    config: str = ""  # the bundled config that reruns it (sample_docs/runs or sample_docs/configs)
    preset: dict | None = None  # the Experiments page's grid, where it can draw this experiment
    arms: tuple[str, ...] = ()  # strategies ours shows, each from the shipped run or any other that holds it
    published_note: str = ""  # what the paper prints instead, where it prints no table of this

    @property
    def command(self) -> str:
        return f"litm sweep {self.config} --db {DB}"


LITM_DIFFERS = (
    "Ours: {what} with {model}, BM25 distractors from other questions' passages; the paper: "
    "GPT-3.5-Turbo, Claude-1.3 and open models, Contriever distractors from all of Wikipedia."
)
HSIEH_DIFFERS = (
    "Ours: {what} with the bundled Qwen2.5 Coder 0.5B on 2 CPU cores, BM25 distractors from other "
    "questions' passages, best-subspan EM; our calibrated attention reorders the documents by it (over the "
    "last half of the model's layers, most relevant last) and then answers, as attention sorting does. The "
    "paper: Vicuna-7B-v1.5-16k and Tulu-2-7B, LITM's Contriever distractors, the attention itself "
    "calibrated while the answer is generated, in the last 16 of 32 layers (llama.cpp gives no hook for that)."
)
EXPERIMENTS: tuple[Experiment, ...] = (
    Experiment(
        "liu2023",
        "litm-20",
        "20 documents: accuracy by the gold document's position (Table 6)",
        "How often the model answers an NQ-open question right when its one relevant passage sits at "
        "index 0-19 among 20 passages.",
        ("Table 6",),
        rows=("gold_index",),
        columns=("model",),
        metric="accuracy (%)",
        run="local-qwen-nq-litm20",
        ours_where={"documents": 20},
        ours_rows=("gold_index",),
        ours_metric="subspan_em",
        differs=LITM_DIFFERS.format(what="150 NQ-open questions", model="the bundled 0.5B model"),
        config="local-qwen-nq-litm20",
    ),
    Experiment(
        "liu2023",
        "litm-10",
        "10 documents: accuracy by the gold document's position (Table 5)",
        "The same measure with 10 passages, the gold one at index 0-9.",
        ("Table 5",),
        rows=("gold_index",),
        columns=("model",),
        metric="accuracy (%)",
        run="local-qwen-nq-litm",
        ours_where={"documents": 10},
        ours_rows=("gold_index",),
        ours_metric="subspan_em",
        differs=LITM_DIFFERS.format(what="50 NQ-open questions", model="the bundled 0.5B model"),
        config="local-qwen-nq-litm",
    ),
    Experiment(
        "liu2023",
        "litm-30",
        "30 documents: accuracy by the gold document's position (Table 7)",
        "The same measure with 30 passages, the gold one at index 0-29.",
        ("Table 7",),
        rows=("gold_index",),
        columns=("model",),
        metric="accuracy (%)",
        differs=LITM_DIFFERS.format(what="NQ-open questions", model="the model you choose"),
        config="papers-litm-nq30",
    ),
    Experiment(
        "liu2023",
        "litm-bounds",
        "Closed-book and oracle (Table 1)",
        "Accuracy with no passage at all (what the model knows) and with the gold passage alone (the "
        "ceiling of reading).",
        ("Table 1",),
        rows=("method",),
        columns=("model",),
        metric="accuracy (%)",
        run="local-qwen-nq-bounds",
        ours_rows=("strategy",),
        ours_columns=(),
        ours_metric="subspan_em",
        differs="Ours: 50 NQ-open questions with the bundled 0.5B model; the paper: all 2,655 questions of "
        "its NQ-open evaluation set (each with its gold passage: the oracle file) with GPT-3.5-Turbo, "
        "Claude-1.3 and open models.",
        config="local-qwen-nq-bounds",
    ),
    Experiment(
        "rr2024",
        "rr-nq",
        "Baseline, reprompting and R&R by answer position and length, NQ (Table 7)",
        "Fuzzy-match accuracy as the answer moves through documents of 10k-80k tokens, with the "
        "instructions repeated every r tokens (reprompt) and with retrieval of pages first (R&R).",
        ("Table 7",),
        rows=("doc_length_tokens", "answer_position_tokens"),
        columns=("method",),
        metric="fuzzy match (%)",
        run="local-qwen-facts",
        ours_rows=("length", "position"),
        ours_columns=("strategy",),
        ours_metric="score",
        differs="Ours, shipped: 20 invented-fact questions in documents of 2,000 tokens of page text (made "
        "before lengths counted the PAGE tags), the answer at 0/25/50/75/100% of the length, r = 500, "
        "k = 3, the bundled 0.5B model. The paper: 50 NQ questions in documents of d = 10k-80k tokens "
        "counted with the PAGE tags, the answer x tokens in, x from 0 to d in steps of 10k (2/3/5/9 "
        "places), r = 10k, k = 5, GPT-4 Turbo. The command runs the paper's grid with NQ-open questions "
        "among BM25 distractors from other questions' passages (the paper took LITM's Contriever-ranked "
        "passages); the Experiments page's grid puts the answer at 0-100% of each length instead.",
        config="papers-rr-nq",
        preset={
            "tasks": "nq-open-30docs",
            "strategies": ["baseline", "reprompt", "rr"],
            "params": {"r": [10000], "k": [5]},
            "lengths": [10000, 20000, 40000, 80000],
            "positions": [0.0, 0.25, 0.5, 0.75, 1.0],
            "n_tasks": 50,
        },
    ),
    Experiment(
        "rr2024",
        "rr-squad",
        "The same on SQuAD (Table 8)",
        "The same measure on SQuAD questions, each paragraph among paragraphs of other Wikipedia "
        "articles sorted by relevance.",
        ("Table 8",),
        rows=("doc_length_tokens", "answer_position_tokens"),
        columns=("method",),
        metric="fuzzy match (%)",
        differs='Ours: R&R\'s SQuAD set built from the SQuAD v1.1 development set (tasks = "rr-squad": '
        "50 questions, distractors the paragraphs of other articles ranked by BM25), the model you choose; "
        "the paper: 50 questions of SQuAD v2 (this app ships v1.1), GPT-4 Turbo. Both on the paper's grid: "
        "d = 10k-80k tokens counted with the PAGE tags, x from 0 to d in steps of 10k.",
        config="papers-rr-squad",
    ),
    Experiment(
        "rr2024",
        "rr-chunked",
        "Chunked ICR and chunked R&R by chunk size (Table 2)",
        "Accuracy on 80k-token documents cut into chunks of c tokens, one retrieval call per chunk "
        "and one answer call.",
        ("Table 2",),
        where={"dataset": "NQ"},
        rows=("chunk_size_tokens",),
        columns=("model", "method"),
        metric="fuzzy match (%)",
        differs="Ours: NQ-open questions among BM25 distractors from other questions' passages, the model "
        "you choose; the paper: LITM's NQ passages, GPT-4 Turbo and Claude 2.1. Both at d = 80k tokens "
        "counted with the PAGE tags (so are c and r), x from 0 to 80k in steps of 10k; the Experiments "
        "page's grid puts the answer at 0-100% instead.",
        config="papers-rr-chunked",
        preset={
            "tasks": "nq-open-30docs",
            "strategies": ["chunked-icr", "chunked-rr"],
            "params": {"c": [10000, 20000, 40000, 80000], "k": [5], "r": [10000]},
            "lengths": [80000],
            "positions": [0.0, 0.25, 0.5, 0.75, 1.0],
            "n_tasks": 50,
        },
    ),
    Experiment(
        "alr2_2024",
        "alr2-niah",
        "Direct answer against retrieve-then-reason, needle in a haystack (Table 1, NIAH)",
        "ALR2's NIAH score (its \"EM\": RULER's string match, the share of the expected values the answer "
        "contains, averaged over RULER's four NIAH variants) as the context grows from 4k to 128k tokens, "
        "answering directly (DA) or first retrieving the relevant sentences and then answering from them "
        "(RR).",
        ("Table 1",),
        where={"dataset": "NIAH"},
        rows=("doc_length_tokens",),
        columns=("model", "method"),
        metric="exact match (%)",
        differs="Ours: RULER's four NIAH variants as ALR2 ran them (single, multi-key, multi-value, "
        'multi-query; tasks = "niah-ruler", 5 of each), magic numbers in essays written for this '
        "project (RULER's are Paul Graham's), scored with RULER's string_match_all (metric ruler-all) and "
        "averaged over the four, the model you choose; lengths count the document (RULER counts the whole "
        "prompt). The paper: 500 test cases a variant, Command R and other models.",
        config="papers-alr2-niah",
        preset={
            "tasks": "niah-ruler",
            "strategies": ["direct-answer", "retrieve-then-reason"],
            "params": {},
            "lengths": [4000, 8000, 16000, 32000, 64000],
            "positions": [0.0, 0.25, 0.5, 0.75, 1.0],
            "n_tasks": 20,
        },
    ),
    Experiment(
        "alr2_2024",
        "alr2-passkey",
        "Multi-hop pass key retrieval and reasoning (Table 4)",
        "Exact match when the answer needs two pass keys found far apart and joined in the asked order.",
        ("Table 4",),
        rows=("doc_length_tokens",),
        columns=("model", "method"),
        metric="exact match, 0-1",
        differs="Ours: 20 bundled tasks (two 5-letter pass keys to join in the asked order) in essays "
        "written for this project, 16k-64k tokens, the first key at 0-100% of the document, the model you "
        "choose; the paper: 100 random pass keys in Wikitext-103 text of up to 128k tokens, placed at 30% "
        "and 60%, Command R+.",
        config="papers-alr2-passkey",
        preset={
            "tasks": "passkey-concat",
            "strategies": ["direct-answer", "retrieve-then-reason"],
            "params": {},
            "lengths": [16000, 32000, 64000],
            "positions": [0.0, 0.25, 0.5, 0.75, 1.0],
            "n_tasks": 20,
        },
    ),
    Experiment(
        "context_overloading_2025",
        "mq",
        "Many questions at once: whole context, chunks, keyword chunks (§5.3)",
        "How many of K x Q questions about K SQuAD paragraphs are answered right when all are asked at "
        "once with the whole document, with every chunk, or each with the chunk sharing most keywords.",
        ("§5.3",),
        metric="questions",
        run="local-qwen-squad-mq",
        ours_metric="mq_match",
        differs="Ours: SQuAD v1.1 development-set paragraphs, 600-token chunks, the bundled 0.5B model, "
        "answers sorted into the paper's categories by rule (its four worked examples, Figs. 17-18, land "
        "where it put them); the paper: SQuAD training-set paragraphs, about 800-token chunks, "
        "Mistral-7B-Instruct-v0.3, mismatches sorted by hand.",
        config="local-qwen-squad-mq",
    ),
    # Found in the Middle (Hsieh et al. 2024, arXiv 2406.16008): §2 ties the lost middle to a U-shaped
    # positional attention bias; §3-4 calibrate it (a document's attention minus a dummy document's at the
    # same place, in the last 16 of their 7B models' 32 layers); Table 5 (appendix, p. 14) is NQ accuracy by
    # the gold document's position, 10 and 20 documents, with vanilla attention, calibrated attention and
    # attention sorting (Peysakhovich and Lerer 2023 §3).
    Experiment(
        "hsieh2024",
        "hsieh-20",
        "20 documents: vanilla, calibrated attention and attention sorting (Table 5)",
        "Accuracy on LITM's NQ-open experiment with 20 documents, the gold one at index 0, 9 or 19, with the "
        "documents as given (vanilla) and reordered by where the model looks.",
        ("Table 5",),
        where={"n_documents": 20},
        rows=("model", "gold_index"),
        columns=("method",),
        metric="accuracy (%)",
        run="local-qwen-nq-litm20",
        ours_where={"documents": 20},
        ours_rows=("gold_index",),
        ours_metric="subspan_em",
        arms=("litm", "attention-sort", "calibrated-attention"),
        differs=HSIEH_DIFFERS.format(what="150 NQ-open questions"),
        config="papers-hsieh-nq20",
    ),
    Experiment(
        "hsieh2024",
        "hsieh-10",
        "10 documents: vanilla, calibrated attention and attention sorting (Table 5)",
        "The same with 10 documents, the gold one at index 0, 4 or 9.",
        ("Table 5",),
        where={"n_documents": 10},
        rows=("model", "gold_index"),
        columns=("method",),
        metric="accuracy (%)",
        run="local-qwen-nq-litm",
        ours_where={"documents": 10},
        ours_rows=("gold_index",),
        ours_metric="subspan_em",
        arms=("litm", "attention-sort", "calibrated-attention"),
        differs=HSIEH_DIFFERS.format(what="50 NQ-open questions"),
        config="papers-hsieh-nq10",
    ),
    Experiment(
        "hsieh2024",
        "hsieh-attention",
        "Attention on the gold document by its position (§2)",
        "The share of the last prompt token's attention that the gold document gets, by its index among "
        "20: the positional attention bias the paper ties to the lost middle.",
        ("§2",),
        metric="attention",
        run="local-qwen-nq-attention20",
        ours_where={"documents": 20},
        ours_rows=("gold_index",),
        ours_metric="attention_gold",
        differs="Ours: the bundled 0.5B model on the same 20-document prompts as the accuracy run, the last "
        "prompt token's attention averaged over all layers and heads and summed over each document's tokens "
        "(its PAGE tags included), mean and 95% interval by position (litm results --metric attention); "
        "the paper: its 7B models' attention to each document, with the gold one moved through the context.",
        config="local-qwen-nq-attention20",
        published_note="The paper draws attention by position as figures (§2) and prints no table of it.",
    ),
)


# What each paper measured that a user cannot rerun here, and why: (what, why), shown under its experiments.
NOT_RERUN: dict[str, tuple[tuple[str, str], ...]] = {
    "liu2023": (
        (
            "The distractors (§2.1, every multi-document table)",
            "LITM retrieved each question's distractors with Contriever from a 2018 Wikipedia dump; neither "
            "the retriever nor the dump ships with the app, and the app reaches no model or dataset hub. Ours "
            "are other questions' passages chosen by BM25, which are easier to tell from the gold one",
        ),
        (
            "Appendix A (the unambiguous questions)",
            "it needs the ambiguity annotations of Min et al. (2020), which do not ship",
        ),
        (
            "Appendix B (random distractors)",
            "it draws random passages from the same Wikipedia dump, which does not ship",
        ),
    ),
    "rr2024": (
        ("The HotPotQA rows", "HotPotQA does not ship with the app"),
        (
            "The PubMed rows",
            "the paper's PubMed set (2024 abstracts it scraped, each with a question GPT-4 Turbo wrote) "
            "does not ship with the app",
        ),
        (
            "Table 4 (answering without the page request; retrieving the single most relevant page)",
            "neither prompt is built here: every answer prompt of the app asks for the page too, and ICR's "
            "retrieval asks for up to k pages",
        ),
    ),
    "alr2_2024": (
        (
            "The fine-tuned rows (CMD-R-FT and ALR2, Tables 1-3)",
            "they are Command R fine-tuned on ALR2's training examples; the app prompts models and "
            "fine-tunes none",
        ),
        (
            "The QA rows (Table 1: HotpotQA and SQuAD; Table 3: StrategyQA and TriviaQA)",
            "RULER's long-context versions of these sets are not built here, and HotpotQA, StrategyQA and "
            "TriviaQA do not ship",
        ),
    ),
    "hsieh2024": (
        (
            "Calibrating the attention itself while the answer is generated (§4, Table 5's calibrated rows)",
            "llama.cpp gives no hook to change a model's attention during generation; ours reorders the "
            "documents by calibrated attention instead, then answers",
        ),
        (
            "Their models (Vicuna-7B-v1.5-16k, Tulu-2-7B)",
            "they do not ship with the app, which reaches no model hub; and only the bundled local model "
            "gives its attention",
        ),
    ),
    "context_overloading_2025": (
        (
            "The documents (§5.1: SQuAD training-set paragraphs)",
            "only the SQuAD v1.1 development set ships with the app; ours are its paragraphs, which are longer",
        ),
    ),
}


def not_rerun(paper: str) -> tuple[tuple[str, str], ...]:
    """What the paper measured that a user cannot rerun here, each (what, why)."""
    return NOT_RERUN.get(paper, ())


def experiments(paper: str | None = None) -> list[Experiment]:
    return [e for e in EXPERIMENTS if paper is None or e.paper == paper]


def config_file(exp: Experiment):
    """The bundled config's file (sample_docs/runs or sample_docs/configs), or None."""
    for folder in ("runs", "configs"):
        path = sample_path(folder, f"{exp.config}.toml")
        if path.is_file():
            return path
    return None


# --- the published table ------------------------------------------------------------------------------------


def _label(col: str, value) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return "overall" if col in ("doc_length_tokens",) else ""
    if col in ("doc_length_tokens", "answer_position_tokens", "chunk_size_tokens", "length"):
        n = int(value)
        return f"{n // 1000}k" if n >= 1000 and n % 1000 == 0 else f"{n:,}"
    if col == "position":
        x = float(value)
        return f"{x:.0%}" if x <= 1 else f"{int(x):,} tokens"
    return str(value)


ROW_TITLES = {
    "gold_index": "gold index",
    "doc_length_tokens": "d (tokens)",
    "answer_position_tokens": "answer at (tokens)",
    "chunk_size_tokens": "chunk c (tokens)",
    "method": "setting",
    "length": "d (tokens)",
    "position": "answer at",
    "strategy": "setting",
    "K": "K",
    "Q": "Q",
}


def published_rows(exp: Experiment, rows: pd.DataFrame) -> pd.DataFrame:
    part = rows[(rows["source"] == exp.paper) & rows["table"].isin(exp.tables)]
    for col, value in exp.where.items():
        part = part[part[col] == value]
    return part


def published_table(exp: Experiment, rows: pd.DataFrame | None = None) -> pd.DataFrame:
    """The paper's numbers as it printed them: a row per cell (exp.rows), a column per series (exp.columns).
    `rows`: the published rows (report.published.load_published, or for Context Overloading
    report.published_004.load_published_004); read here when not given."""
    if exp.paper == "context_overloading_2025":
        if rows is None:
            from components.report.published_004 import load_published_004

            rows = load_published_004()
        return mq_published(rows)
    if rows is None:
        from components.report.published import load_published

        rows = load_published()
    part = published_rows(exp, rows)
    if part.empty:
        return pd.DataFrame()
    part = part.assign(
        _col=part[list(exp.columns)].fillna("").astype(str).agg(" · ".join, axis=1).str.strip(" ·")
    )
    order = part.sort_values(list(exp.rows), na_position="last", kind="stable")
    keys = list(
        dict.fromkeys(
            tuple(None if pd.isna(v) else v for v in r) for r in order[list(exp.rows)].itertuples(index=False)
        )
    )
    out = []
    for key in keys:
        mask = pd.Series(True, index=part.index)
        for col, v in zip(exp.rows, key, strict=True):
            mask &= part[col].isna() if v is None else part[col] == v
        cell = part[mask]
        row = {ROW_TITLES.get(c, c): _label(c, v) for c, v in zip(exp.rows, key, strict=True)}
        row.update(dict(zip(cell["_col"], cell["value_printed"].astype(str), strict=True)))
        out.append(row)
    return pd.DataFrame(out).fillna("")


def mq_published(rows: pd.DataFrame) -> pd.DataFrame:
    """Context Overloading §5.3 as the paper counts it: per K, Q and strategy, its questions and counts."""
    from components.report.multiq import published

    paper = published(rows)
    out = []
    for r in paper.itertuples(index=False):
        out.append(
            {
                "K": int(r.contexts),
                "Q": int(r.questions_per_context),
                "strategy": r.strategy,
                "method": r.method,
                "questions": int(r.questions),
                "incorrect": None if pd.isna(r.incorrect) else int(r.incorrect),
                "partially correct": None if pd.isna(r.partially_correct) else int(r.partially_correct),
                "in the paper's words": r.what,
            }
        )
    out = pd.DataFrame(out)
    if out.empty:
        return out
    from components.report.multiq import ORDER

    for col in ("incorrect", "partially correct"):
        out[col] = out[col].astype("Int64")
    out["_o"] = out["strategy"].map(lambda s: ORDER.index(s) if s in ORDER else len(ORDER))
    return out.sort_values(["K", "Q", "_o"], kind="stable").drop(columns="_o").reset_index(drop=True)


# --- ours ---------------------------------------------------------------------------------------------------


def run_path(exp: Experiment):
    return sample_path("runs", f"{exp.run}.sqlite") if exp.run else None


@lru_cache(maxsize=16)
def _trials(name: str, stamp: tuple) -> pd.DataFrame:
    from components.run.store import RunStore

    with RunStore.for_reading(sample_path("runs", f"{name}.sqlite")) as store:
        return store.trials_frame(name)


def shipped_trials(exp: Experiment) -> pd.DataFrame:
    """The shipped run's trials (read-only; read again when the store's file changes), or an empty frame."""
    path = run_path(exp)
    if path is None or not path.is_file():
        return pd.DataFrame()
    from components.run.reader import store_version

    return _trials(exp.run, store_version(path)).copy()


def _pct(x) -> str:
    return f"{100 * x:.0f}%"


def cell_text(n: int, hits: int, lo: float, hi: float) -> str:
    """'24/50 = 48% (35–61%)': the count, the share and its Wilson 95% interval."""
    if not n:
        return "not measured"
    return f"{hits}/{n} = {_pct(hits / n)} ({_pct(lo)}–{_pct(hi)})"


def setting(strategy: str, params) -> str:
    """'Reprompt · r=500': the strategy's display name and its parameters (report.sweeps.setting_label,
    the one name of a setting)."""
    from components.report.sweeps import setting_label

    return setting_label({"strategy": strategy, "params": params})


def ours_table(exp: Experiment, trials: pd.DataFrame | None = None) -> pd.DataFrame:
    """Our shipped run: a row per cell, a column per setting, each 'hits/n = p% (lo–hi%)' (Wilson 95%)."""
    trials = shipped_trials(exp) if trials is None else trials
    if trials.empty:
        return pd.DataFrame()
    if exp.paper == "context_overloading_2025":
        return mq_ours(trials)
    part = where(trials, exp.ours_where)
    if exp.arms:
        part = pd.concat([part, other_arms(exp, set(part.get("strategy", ())))], ignore_index=True)
    series = list(exp.ours_columns)
    by = [*exp.ours_rows, *series, *(["params"] if series == ["strategy"] else [])]
    if not is_accuracy(exp.ours_metric):
        return means_table(exp, part)
    stats = accuracy(part, by, exp.ours_metric)
    if stats.empty:
        return pd.DataFrame()
    if series == ["strategy"]:
        stats["series"] = [setting(s, p) for s, p in zip(stats["strategy"], stats["params"], strict=True)]
    else:
        stats["series"] = stats[series].astype(str).agg(" · ".join, axis=1) if series else "ours"
    out = []
    for key, group in stats.groupby(list(exp.ours_rows), sort=True):
        key = key if isinstance(key, tuple) else (key,)
        row = {ROW_TITLES.get(c, c): _label(c, v) for c, v in zip(exp.ours_rows, key, strict=True)}
        for r in group.itertuples(index=False):
            row[r.series] = cell_text(int(r.n), int(round(r.successes)), r.lo, r.hi)
        for name in missing_arms(exp, stats):
            row[setting(name, {})] = NOT_RUN
        out.append(row)
    return pd.DataFrame(out).fillna("")


NOT_RUN = "not run yet"


def where(trials: pd.DataFrame, conditions: dict) -> pd.DataFrame:
    """The trials whose columns hold the numbers `conditions` names (column -> value)."""
    for col, value in conditions.items():
        trials = trials[pd.to_numeric(trials[col], errors="coerce") == value]
    return trials


def is_accuracy(column: str) -> bool:
    """A 0/1 accuracy (hits/n with a Wilson interval), else a mean (the attention measure's share)."""
    from components.core.metrics import BY_COLUMN

    found = BY_COLUMN.get(column)
    return found is None or found.accuracy


def other_arms(exp: Experiment, have: set) -> pd.DataFrame:
    """The trials of `exp.arms` that its shipped run lacks, from every other shipped run that holds them
    (in the cells `exp.ours_where` names): the arms are shown as far as their runs exist."""
    from components.run.reader import store_version
    from components.run.store import shipped_paths

    wanted = [a for a in exp.arms if a not in have]
    frames = []
    for path in shipped_paths() if wanted else ():
        if path.stem == exp.run:
            continue
        try:
            trials = _trials(path.stem, store_version(path))
        except Exception:  # a store that cannot be read holds no arm
            continue
        if "strategy" in trials:
            frames.append(where(trials[trials["strategy"].isin(wanted)], exp.ours_where))
    frames = [f for f in frames if not f.empty]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def missing_arms(exp: Experiment, stats: pd.DataFrame) -> list[str]:
    """The arms no shipped run has measured yet."""
    have = set(stats["strategy"]) if "strategy" in stats else set()
    return [a for a in exp.arms if a not in have]


def mean_cell(n: int, mean: float, lo: float, hi: float) -> str:
    """'5.5% (4.8–6.3%), n=17': a share's mean over n trials and its 95% interval."""
    if not n:
        return "not measured"
    if math.isnan(lo) or math.isnan(hi):
        return f"{100 * mean:.1f}%, n={n}"
    return f"{100 * mean:.1f}% ({100 * lo:.1f}–{100 * hi:.1f}%), n={n}"


def means_table(exp: Experiment, part: pd.DataFrame) -> pd.DataFrame:
    """A measure that is not an accuracy (the attention share) by gold index, one column per setting: the
    mean and its 95% interval as `litm results --json --metric M` gives them (report.shape.curves)."""
    from components.report.shape import curves

    if part.empty or exp.ours_metric not in part:
        return pd.DataFrame()
    rows: dict[str, dict] = {}
    for curve in curves(part, part[exp.ours_metric]):
        name = setting(curve["strategy"], curve["params"])
        for p in curve["points"]:
            x = p.get("gold_index")
            label = _label("gold_index", x)
            rows.setdefault(label, {ROW_TITLES["gold_index"]: label, "_x": x})[name] = mean_cell(
                int(p["n"]), float(p["mean"]), float(p["lo"]), float(p["hi"])
            )
    out = pd.DataFrame(sorted(rows.values(), key=lambda r: r["_x"]))
    return out.drop(columns="_x").fillna("") if not out.empty else out


def planned_questions(exp: Experiment) -> int | None:
    """The questions the shipped run's config asks for (its n_tasks), None when it does not say."""
    import json

    path = run_path(exp)
    if path is None or not path.is_file():
        return None
    from components.run.store import RunStore

    with RunStore.for_reading(path) as store:
        sweeps = store.sweeps_frame()
    row = sweeps[sweeps["name"] == exp.run]
    try:
        return int(json.loads(row["config"].iloc[0]).get("n_tasks")) if len(row) else None
    except (TypeError, ValueError):
        return None


def mq_ours(trials: pd.DataFrame) -> pd.DataFrame:
    """Our multi-question run per K, Q and strategy: correct with its interval, and the paper's categories."""
    from components.report import multiq

    tab = multiq.table(multiq.trials(trials), "mq_match")
    out = []
    for r in tab.itertuples(index=False):
        out.append(
            {
                "K": int(getattr(r, multiq.K)),
                "Q": int(getattr(r, multiq.Q)),
                "strategy": r.setting,
                "questions": int(r.questions),
                "correct (95% CI)": cell_text(int(r.n), int(r.hits), r.lo, r.hi),
                "incorrect as the paper counts it": int(r.wrong + r.not_specified),
                "partially correct": int(r.partial),
            }
        )
    return pd.DataFrame(out)


def ours_n(exp: Experiment, trials: pd.DataFrame | None = None) -> int:
    """Questions of the shipped run (distinct tasks), 0 without one."""
    trials = shipped_trials(exp) if trials is None else trials
    return 0 if trials.empty or "task" not in trials else int(trials["task"].nunique())
