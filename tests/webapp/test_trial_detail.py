"""The trial drill-down speaks of retrieved pages only for strategies that pick pages: a strategy that reads
the whole document stores no retrieved pages, and its page recall (stored as 0) is not shown as a score."""

from __future__ import annotations

import pandas as pd

from webapp.results.trial import retrieves, score_line


def row(**kw) -> pd.Series:
    base = {"metric": "best-subspan-em", "subspan_em": 1.0, "page_recall": 0.0, "page_precision": 0.0}
    return pd.Series({**base, **kw})


def test_whole_document_strategies_show_no_page_scores():
    litm = row(retrieved_pages=None, cited_pages=[])
    assert not retrieves(litm)
    line = score_line(litm)
    assert "subspan" in line.lower() and "page recall" not in line and "page precision" not in line
    assert not retrieves(row(retrieved_pages=float("nan"), cited_pages=float("nan")))


def test_retrieval_strategies_show_their_page_scores_even_when_none_was_picked():
    rr = row(retrieved_pages=[1, 2, 3], cited_pages=[], page_recall=1.0, page_precision=1 / 3)
    assert retrieves(rr) and "page recall 1" in score_line(rr)
    picked_none = row(retrieved_pages=[], cited_pages=[])
    assert retrieves(picked_none) and "page recall 0" in score_line(picked_none)
    quotes = row(retrieved_pages=None, cited_pages=[4])
    assert retrieves(quotes)
