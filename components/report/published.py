"""Published results of the method papers, as tidy rows, to overlay on our own curves.

components/data/published_results.csv ships with the app (read-only; a copy of the transcription in
shared/reference, whose README explains every judgement call). One number per row; columns:
source, table, model, dataset, method, doc_length_tokens, n_documents, chunk_size_tokens,
answer_position_tokens, gold_index, metric, value. Token counts are the papers' "k" labels x 1000.
ALR2 rows with an empty doc_length_tokens are its "Overall" column (a mean over lengths): filter
them out before plotting against length.
"""

from __future__ import annotations

from functools import lru_cache

import pandas as pd

from components.core.resources import package_path

PUBLISHED_PATH = package_path("data", "published_results.csv")

INT_COLUMNS = ("doc_length_tokens", "n_documents", "chunk_size_tokens", "answer_position_tokens", "gold_index")
TEXT_COLUMNS = ("source", "table", "model", "dataset", "method", "metric")

CITATIONS = {
    "rr2024": ("Devanshu Agrawal, Shang Gao and Martin Gajek. \"Can't Remember Details in Long Documents? "
               "You Need Some R&R\". 2024. arXiv:2403.05004."),
    "liu2023": ("Nelson F. Liu, Kevin Lin, John Hewitt, Ashwin Paranjape, Michele Bevilacqua, Fabio Petroni "
                "and Percy Liang. \"Lost in the Middle: How Language Models Use Long Contexts\". 2023. "
                "arXiv:2307.03172."),
    "alr2_2024": ("Huayang Li, Pat Verga, Priyanka Sen, Bowen Yang, Vijay Viswanathan, Patrick Lewis, "
                  "Taro Watanabe and Yixuan Su. \"ALR2: A Retrieve-then-Reason Framework for Long-context "
                  "Question Answering\". 2024."),
}
SHORT_NAMES = {"rr2024": "R&R (Agrawal et al., 2024)", "liu2023": "Lost in the Middle (Liu et al., 2023)",
               "alr2_2024": "ALR2 (Li et al., 2024)"}


@lru_cache(maxsize=1)
def _load() -> pd.DataFrame:
    df = pd.read_csv(PUBLISHED_PATH, dtype=str, keep_default_na=False)
    df["value_printed"] = df["value"]
    df["value"] = df["value"].astype(float)
    for col in INT_COLUMNS:
        df[col] = pd.to_numeric(df[col].replace("", None)).astype("Int64")
    unknown = set(df["source"]) - set(CITATIONS)
    if unknown:
        raise ValueError(f"published results from unknown source(s): {', '.join(sorted(unknown))}")
    df["citation"] = df["source"].map(CITATIONS)
    df["paper"] = df["source"].map(SHORT_NAMES)
    return df


def load_published() -> pd.DataFrame:
    """All published rows (a fresh copy): the CSV's columns (value as float, the integer columns as
    nullable Int64, the printed text in value_printed) plus citation and a short paper name."""
    return _load().copy()
