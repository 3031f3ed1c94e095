"""The published numbers of "Context Overloading in RAG Based Systems" (seed 004, §5.3), beside ours.

components/data/published_004.csv ships with the app (read-only). One number per row; columns: source,
table (section and figure), page (empty: the text the numbers were read from carries no page numbers),
model, dataset, method (as the paper names it), strategy (ours that runs it), contexts (K),
questions_per_context (Q), prompt_tokens (as the paper counts them, Mistral's tokenizer), questions
(K x Q asked; 157 at K = 32, where some paragraphs had fewer than 5), metric (a count of answers:
incorrect, partially_correct, answered, correct_or_partial), value, note (the sentence it is read from).
The paper counts answers of one run per setting (n = 1 document), sorted into its categories by hand.
"""

from __future__ import annotations

from functools import lru_cache

import pandas as pd

from components.core.resources import package_path

PUBLISHED_004_PATH = package_path("data", "published_004.csv")
CITATION_004 = (
    'Muhammad Affan Naved, Hassan Ali and Talha Tariq. "Context Overloading in RAG Based '
    'Systems". 2025 (a student project, LUMS).'
)
INT_COLUMNS = ("contexts", "questions_per_context", "prompt_tokens", "questions", "value")


@lru_cache(maxsize=1)
def _load() -> pd.DataFrame:
    df = pd.read_csv(PUBLISHED_004_PATH, dtype=str, keep_default_na=False)
    for col in INT_COLUMNS:
        df[col] = pd.to_numeric(df[col]).astype("Int64")
    df["citation"] = CITATION_004
    return df


def load_published_004() -> pd.DataFrame:
    """The paper's §5.3 rows (a fresh copy), with its citation."""
    return _load().copy()
