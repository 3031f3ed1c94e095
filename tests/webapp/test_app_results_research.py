"""AppTest of the researcher's flow on Results: the NIAH heatmap tab, the trials x settings grid, the
clicked point's trials, the one-file HTML report, and a newer sweep followed when the store grows."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from tests.webapp.runs_fixture import fill, open_tab

PAGE = str(Path(__file__).resolve().parents[2] / "webapp" / "results" / "page.py")


@pytest.fixture
def db(tmp_path, monkeypatch):
    monkeypatch.setenv("LITM_DB", str(tmp_path / "runs" / "litm.sqlite"))
    monkeypatch.setenv("LITM_SHIPPED_RUNS", str(tmp_path / "shipped"))
    return fill(tmp_path / "runs" / "litm.sqlite", name="grid sweep")


def run() -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=90)
    at.run()
    assert not at.exception, at.exception
    return at


def specs(at) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def test_heatmap_is_niah_one_panel_per_arm(db):
    at = run()
    assert [t.label for t in at.tabs][:2] == ["U-curve", "Length × position"]
    open_tab(at, "Length × position")
    heat = next(s for s in specs(at) if s["data"] and s["data"][0]["type"] == "heatmap")
    assert [t["name"] for t in heat["data"]] == ["Baseline", "R&amp;R · r=1,000", "Reprompt · r=1,000"]
    first = heat["data"][0]
    assert first["x"] == ["2,000", "4,000"] and first["y"] == ["0%", "50%", "100%"]
    assert heat["layout"]["yaxis"]["autorange"] == "reversed"
    # cividis, colour-blind safe: dark blue at 0%, yellow at 100%
    assert first["colorscale"][0][1] == "#00224e" and first["colorscale"][-1][1] == "#fee838"
    assert "fake-model" in heat["layout"]["title"]["text"]
    assert all(len(t.split("<br>n=")) == 2 for row in first["text"] for t in row)  # accuracy and n


def test_grid_tab_lists_tasks_against_settings(db):
    at = run()
    assert "Trials × settings" in [t.label for t in at.tabs]
    open_tab(at, "Trials × settings")
    grid = next(d.value for d in at.dataframe if "question" in d.value.columns)
    assert len(grid) == 6  # six tasks
    settings = [c for c in grid.columns if c != "question"]
    assert len(settings) == 3 * 2 * 3  # arm x length x position
    assert settings[0].startswith("Baseline · 2,000 tokens · at 0 · ")
    assert all(c.rstrip().split(" · ")[-1].endswith(")") or "failed" in c for c in settings)  # pass rates
    cells = {str(v).split(" ", 1)[0] for v in grid[settings].to_numpy().ravel()}
    assert cells <= {"✓", "✗", "failed"} and {"✓", "✗", "failed"} <= cells
    failed = [c for c in settings if c.endswith("failed")]
    assert failed and failed[0].startswith("R&R · r=1,000")


def test_point_trials_are_the_clicked_cell(db):
    from webapp.results.research import clicked, point_trials
    from webapp.services import analysis

    at = run()
    assert "Click a point of a curve to list its trials here." in [c.value for c in at.caption]
    trials = pd.DataFrame(
        {
            "strategy": ["a", "a", "b", "a"],
            "position": [0.0, 0.5, 0.5, 0.5],
            "model": ["m"] * 4,
            "trial_id": [1, 2, 3, 4],
        }
    )
    labels = analysis.series_label(trials, ["strategy", "model"])
    event = {"selection": {"points": [{"legendgroup": labels.iloc[1], "x": 0.5, "curve_number": 1}]}}
    got = point_trials(clicked(event), trials, labels, "position")
    assert list(got["trial_id"]) == [2, 4]
    published = {"selection": {"points": [{"x": 0.5, "curve_number": 7}]}}  # no legend group: no trials
    assert point_trials(clicked(published), trials, labels, "position").empty
    assert clicked(None) == [] and clicked({"selection": {"points": []}}) == []


def test_report_has_title_curves_n_intervals_and_shapes(db):
    from components.report.sweeps import combine_stores
    from components.run.reader import browse
    from webapp.results.research import report, report_title

    trials, sweeps = browse(db)
    df, _ = combine_stores([("your runs", False, str(db), trials, sweeps)])
    title = report_title(df)
    assert title.startswith("LITM Explorer: results of grid sweep · fake-model · 20")
    html = report(df, "score", "fuzzy match", title)
    assert html.count("<h1>") == 1 and "grid sweep" in html.split("</h1>")[0]
    assert html.count("plotly.js") >= 1 and html.count('<script type="text/javascript">/**') <= 1
    assert "95% interval (Wilson)" in html and "Shape of each curve" in html
    assert "2,000 tokens" in html and "4,000 tokens" in html  # one line per length, never pooled
    assert "<script>alert" not in html


def test_a_newer_sweep_is_followed_while_the_filter_is_as_opened(db):
    at = run()
    assert at.multiselect(key="res_sweeps").value == ["your runs#1"]
    fill(db, name="newer sweep", model="other-model")  # a sweep from the command line lands in the store
    at.run()
    assert not at.exception
    assert at.multiselect(key="res_sweeps").value == ["your runs#2"]
    fill(db, name="third sweep")
    at.multiselect(key="res_sweeps").set_value(["your runs#1"]).run()  # the user's own choice stands
    assert at.multiselect(key="res_sweeps").value == ["your runs#1"]


SHIPPED = Path(__file__).resolve().parents[2] / "sample_docs" / "runs"


def grid_view(tmp_path, monkeypatch, shipped: Path) -> AppTest:
    monkeypatch.setenv("LITM_DB", str(tmp_path / "runs" / "litm.sqlite"))
    monkeypatch.setenv("LITM_SHIPPED_RUNS", str(shipped))
    at = AppTest.from_file(PAGE, default_timeout=180)
    at.run()
    assert not at.exception, at.exception
    open_tab(at, "Trials × settings")
    assert not at.exception, at.exception
    return at


def test_grid_tab_opens_on_a_sweep_it_can_draw(tmp_path, monkeypatch):
    """The shipped runs, the multi-question and the likelihood ones among them: the grid opens on a sweep
    with columns and scored cells."""
    at = grid_view(tmp_path, monkeypatch, SHIPPED)
    sweep = at.selectbox(key="res_grid_sweep").value
    name = at.selectbox(key="res_grid_sweep").format_func(sweep)
    assert "squad-mq" not in name and "likelihood" not in name, name  # no column, or no cell scored
    grid = next(d.value for d in at.dataframe if "question" in d.value.columns)
    cells = {str(v).split(" ", 1)[0] for c in grid.columns[1:] for v in grid[c]}
    assert cells & {"✓", "✗"}, cells


def test_grid_tab_says_in_one_line_why_no_sweep_can_be_drawn(tmp_path, monkeypatch):
    """Only sweeps without a place in the document (here the multi-question run): one line says why, no
    picker of sweeps it cannot draw."""
    from webapp.results.page import MULTI_LINE

    folder = tmp_path / "shipped"
    folder.mkdir()
    (folder / "local-qwen-squad-mq.sqlite").write_bytes((SHIPPED / "local-qwen-squad-mq.sqlite").read_bytes())
    at = grid_view(tmp_path, monkeypatch, folder)
    assert MULTI_LINE in [i.value for i in at.info]
    assert all(s.label != "Sweep" for s in at.selectbox)


def test_the_grid_places_only_trials_with_a_size_and_a_place():
    from components.report import trialgrid

    t = pd.DataFrame(
        {
            "task": ["a", "b", "c"],
            "length": [600, None, 600],
            "position": [0.0, 0.5, None],
            "strategy": "baseline",
        }
    )
    assert list(trialgrid.placed(t)["task"]) == ["a"]
    assert trialgrid.placed(t.drop(columns=["position"])).empty
