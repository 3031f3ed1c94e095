"""Results shows the LLM judge's audit only where the selection has judge verdicts."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.webapp.judge_store import judged_store

PAGE = str(Path(__file__).resolve().parents[2] / "webapp" / "results" / "page.py")
TITLE = "LLM judge: its agreement with best subspan EM and fuzzy match"


@pytest.mark.parametrize("judged", [True, False])
def test_the_judge_audit_is_shown_only_for_judged_runs(tmp_path, monkeypatch, judged):
    shipped = tmp_path / "shipped"
    shipped.mkdir()
    monkeypatch.setenv("LITM_DB", str(tmp_path / "runs.sqlite"))
    monkeypatch.setenv("LITM_SHIPPED_RUNS", str(shipped))
    judged_store(tmp_path / "runs.sqlite", judged=judged)
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    titles = [e.label for e in at.expander if e.label.startswith(TITLE)]
    assert titles == ([f"{TITLE}, 3 disagreements to check"] if judged else [])
