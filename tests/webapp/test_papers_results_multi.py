"""Results with multi-question trials (Context Overloading): the position, length and cost tabs say in one
line why they do not apply, instead of drawing empty charts; beside other sweeps they leave those trials out."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from tests.webapp.runs_fixture import fill
from tests.webapp.test_app_multiq import fill_mq, stores  # noqa: F401 - the fixture

RESULTS = str(Path(__file__).resolve().parents[2] / "webapp" / "results" / "page.py")
LINE = "Multi-question trials (many questions asked at once) have no answer position"


def run() -> AppTest:
    at = AppTest.from_file(RESULTS, default_timeout=120)
    at.run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    return at


def main_tabs(at):
    """The placed views, each opened in turn (only the open tab's view is computed)."""
    from tests.webapp.runs_fixture import open_tab

    labels = ["U-curve", "Length × position", "Accuracy vs cost", "Accuracy vs length"]
    return {label: open_tab(at, label) for label in labels}


def test_only_multi_question_trials_get_one_line_per_placed_view(stores):  # noqa: F811
    fill_mq(stores / "runs" / "litm.sqlite")
    at = run()
    tabs = main_tabs(at)
    assert len(tabs) == 4
    for label, tab in tabs.items():
        lines = [i.value for i in tab.info]
        assert len(lines) == 1 and lines[0].startswith(LINE), (label, lines)
        assert not tab.get("plotly_chart"), label


def test_beside_other_sweeps_they_are_left_out_of_those_views(stores):  # noqa: F811
    fill(stores / "runs" / "litm.sqlite")
    fill_mq(stores / "runs" / "litm.sqlite")
    at = run()  # opens on the newest sweep (the multi-question one): choose both
    at.multiselect(key="res_sweeps").set_value([]).run()
    assert not at.exception, at.exception
    tabs = main_tabs(at)
    for label, tab in tabs.items():
        assert not any(i.value.startswith(LINE) for i in tab.info), label
        assert any("multi-question trials left out of this view" in c.value for c in tab.caption), label
    assert tabs["U-curve"].get("plotly_chart")  # the other sweep's curve is drawn
