"""How a trial is named in the Results trial picker (webapp.trialview.trial_label)."""

from __future__ import annotations

import pandas as pd

from webapp.results.trial import trial_label


def row(**kw):
    base = {
        "trial_id": 7,
        "task": "nq-3",
        "strategy": "litm",
        "length": None,
        "position": None,
        "documents": None,
        "gold_index": None,
    }
    return next(pd.DataFrame([{**base, **kw}]).itertuples())


def test_litm_trials_name_their_gold_document():
    assert trial_label(row(documents=20, gold_index=4)) == "#7 · nq-3 · litm · gold 4 of 20 documents"
    assert trial_label(row(strategy="oracle", documents=1, gold_index=0)) == "#7 · nq-3 · oracle · 1 document"
    assert trial_label(row(strategy="closed-book", documents=1, gold_index=0)).endswith(
        "· closed-book · no document"
    )


def test_token_trials_name_length_and_position_and_never_none():
    assert (
        trial_label(row(strategy="baseline", length=20000.0, position=0.5))
        == "#7 · nq-3 · baseline · length 20,000 · position 0.5"
    )
    assert trial_label(row(strategy="baseline", length=2000, position=1500.0)).endswith(
        "length 2,000 · position 1500"
    )
    assert trial_label(row(strategy="baseline")) == "#7 · nq-3 · baseline"  # an import with neither
