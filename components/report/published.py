"""Published results of the papers, as tidy rows, to overlay on our own curves.

Two tables ship with the app (read-only; copies of the transcriptions in shared/reference, whose README
explains every judgement call), with the same columns:
- components/data/published_results.csv: the method papers (Lost in the Middle, R&R, ALR2);
- components/data/published_newer.csv: later papers' curves of LITM's NQ multi-document QA (gold
  document at index 0..19 of 10 or 20), on open models with and without their own fixes;
- components/data/published_current.csv: current models on harder tasks (NoLiMa: accuracy by context
  length when question and needle share no words; RULER: its 13 tasks by length; LongPiBench: recall
  by absolute position level 1-16 at 32k tokens, `gold_index` being the level, not a document index).
  Numbers read from the authors' tables, cited; none of the benchmarks' data ships.
components/data/published_sources.csv says, per source: the paper's short name, its year, the file
its rows are in, what was transcribed (tables, pages), and the full citation.

One number per row; columns: source, table, model, dataset, method, doc_length_tokens, n_documents,
chunk_size_tokens, answer_position_tokens, gold_index, metric, value. Token counts are the papers'
"k" labels x 1000. ALR2 rows with an empty doc_length_tokens are its "Overall" column (a mean over
lengths): filter them out before plotting against length.
"""

from __future__ import annotations

from functools import lru_cache

import pandas as pd

from components.core.resources import package_path

PUBLISHED_PATH = package_path("data", "published_results.csv")
NEWER_PATH = package_path("data", "published_newer.csv")
CURRENT_PATH = package_path("data", "published_current.csv")
SOURCES_PATH = package_path("data", "published_sources.csv")
PUBLISHED_FILES = (PUBLISHED_PATH, NEWER_PATH, CURRENT_PATH)

COLUMNS = (
    "source",
    "table",
    "model",
    "dataset",
    "method",
    "doc_length_tokens",
    "n_documents",
    "chunk_size_tokens",
    "answer_position_tokens",
    "gold_index",
    "metric",
    "value",
)
INT_COLUMNS = (
    "doc_length_tokens",
    "n_documents",
    "chunk_size_tokens",
    "answer_position_tokens",
    "gold_index",
)
TEXT_COLUMNS = ("source", "table", "model", "dataset", "method", "metric")


@lru_cache(maxsize=1)
def sources() -> pd.DataFrame:
    """The source -> citation table: source, paper (short name), year, file, transcribed, citation."""
    table = pd.read_csv(SOURCES_PATH, dtype=str, keep_default_na=False)
    table["year"] = table["year"].astype(int)
    return table


CITATIONS: dict[str, str] = dict(zip(sources()["source"], sources()["citation"], strict=True))
SHORT_NAMES: dict[str, str] = dict(zip(sources()["source"], sources()["paper"], strict=True))
NEWER_SOURCES: tuple[str, ...] = tuple(sources().loc[sources()["file"] == NEWER_PATH.name, "source"])
CURRENT_SOURCES: tuple[str, ...] = tuple(sources().loc[sources()["file"] == CURRENT_PATH.name, "source"])


def _read(path) -> pd.DataFrame:
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    if tuple(df.columns) != COLUMNS:
        raise ValueError(f"{path.name}: columns {', '.join(df.columns)}; expected {', '.join(COLUMNS)}")
    listed = set(sources().loc[sources()["file"] == path.name, "source"])
    unknown = set(df["source"]) - listed
    if unknown:
        raise ValueError(
            f"{path.name}: published results from unknown source(s): {', '.join(sorted(unknown))}"
        )
    return df


@lru_cache(maxsize=1)
def _load() -> pd.DataFrame:
    df = pd.concat([_read(p) for p in PUBLISHED_FILES], ignore_index=True)
    df["value_printed"] = df["value"]
    df["value"] = df["value"].astype(float)
    for col in INT_COLUMNS:
        df[col] = pd.to_numeric(df[col].replace("", None)).astype("Int64")
    df["citation"] = df["source"].map(CITATIONS)
    df["paper"] = df["source"].map(SHORT_NAMES)
    return df


def load_published() -> pd.DataFrame:
    """All published rows, of every shipped file (a fresh copy): the CSVs' columns (value as float, the
    integer columns as nullable Int64, the printed text in value_printed) plus citation and a short
    paper name. The later papers' rows are those whose source is in NEWER_SOURCES; current models' rows
    (NoLiMa, RULER, LongPiBench) those in CURRENT_SOURCES."""
    return _load().copy()
