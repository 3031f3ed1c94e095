"""The NIAH heatmap (components.report.heatmap) and the trials x settings grid (components.report.trialgrid)
on a small frame whose every number is known."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from plotly.colors import get_colorscale

from components.report import charts, heatmap, trialgrid


def frame() -> pd.DataFrame:
    """Two arms (baseline, rr r=500), two lengths, two positions (fractions), two tasks; one failed trial."""
    rows = []
    tid = 0
    hits = {  # (strategy, length, position) -> outcome of task a, task b
        ("baseline", 1000, 0.0): (1, 1),
        ("baseline", 1000, 1.0): (1, 0),
        ("baseline", 2000, 0.0): (1, 0),
        ("baseline", 2000, 1.0): (0, 0),
        ("rr", 1000, 0.0): (1, 1),
        ("rr", 1000, 1.0): (1, 1),
        ("rr", 2000, 0.0): (1, None),  # task b failed
        ("rr", 2000, 1.0): (0, 1),
    }
    for (strategy, length, position), outcome in hits.items():
        for task, hit in zip(("a", "b"), outcome, strict=True):
            tid += 1
            rows.append(
                {
                    "trial_id": tid,
                    "task": task,
                    "question": f"Question {task}?",
                    "strategy": strategy,
                    "params": '{"r": 500}' if strategy == "rr" else "{}",
                    "model": "openai:gpt-x",
                    "length": length,
                    "position": position,
                    "documents": None,
                    "gold_index": None,
                    "answer": None if hit is None else ("Paris" if hit else "Rome"),
                    "score": None if hit is None else float(hit),
                    "error": "Transient: boom" if hit is None else None,
                }
            )
    return pd.DataFrame(rows)


def test_heatmap_cells_exact():
    table = heatmap.cells(frame(), "score")
    assert list(table["arm"].unique()) == ["Baseline", "R&R · r=500"]  # display names (report.sweeps)
    assert set(table["model"]) == {"gpt-x"}
    cell = table[(table["arm"] == "Baseline") & (table["x"] == 1000) & (table["depth"] == 100)].iloc[0]
    assert cell["n"] == 2 and cell["mean"] == 0.5 and cell["errors"] == 0
    assert cell["lo"] == pytest.approx(0.0945, abs=1e-3) and cell["hi"] == pytest.approx(0.9055, abs=1e-3)
    failed = table[(table["arm"] == "R&R · r=500") & (table["x"] == 2000) & (table["depth"] == 0)].iloc[0]
    assert failed["n"] == 1 and failed["mean"] == 1.0 and failed["errors"] == 1
    assert len(table) == 8 and table["n"].sum() == 15


def test_heatmap_figure_follows_niah_convention():
    fig = heatmap.heatmap(frame(), "score", metric_label="fuzzy match")
    assert len(fig.data) == 2  # one panel per arm
    first = fig.data[0]
    assert list(first.x) == ["1,000", "2,000"]  # length on x
    assert list(first.y) == ["0%", "100%"]  # depth on y, 0% first ...
    assert fig.layout.yaxis.autorange == "reversed"  # ... and drawn at the top
    assert list(first.z[1]) == [0.5, 0.0]
    assert list(first.z[0]) == [1.0, 0.5]
    assert first.zmin == 0 and first.zmax == 1
    assert first.text[1][0] == "50%<br>n=2"
    assert "gpt-x" in fig.layout.title.text  # the model in the title
    assert [a.text for a in fig.layout.annotations][:2] == [
        "Baseline",
        "R&amp;R · r=500",
    ]  # escaped for plotly


def test_heatmap_depth_in_tokens_and_documents():
    tokens = frame().assign(position=lambda d: d["position"] * d["length"] / 2)  # 0 and half the length
    assert sorted(heatmap.cells(tokens, "score")["depth"].unique()) == [0.0, 50.0]
    litm = frame().assign(
        documents=lambda d: d["length"] // 100, gold_index=lambda d: d["position"] * 9, length=None
    )
    table = heatmap.cells(litm, "score")
    assert sorted(table["x"].unique()) == [10, 20] and sorted(table["depth"].unique()) == [0.0, 9.0]
    fig = heatmap.heatmap(litm, "score")
    assert list(fig.data[0].y) == ["0", "9"] and "documents" in fig.layout.xaxis.title.text


def test_heatmap_empty():
    fig = heatmap.heatmap(frame().iloc[0:0], "score")
    assert not fig.data and "No scored trials" in fig.layout.annotations[0].text


def test_grid_exact():
    grid = trialgrid.build(frame(), "score")
    assert list(grid.outcome.index) == ["a", "b"]
    assert len(grid.columns) == 8
    labels = [c.label for c in grid.columns]
    assert labels[0] == "Baseline · 1,000 tokens · at 0 · 100% (2/2)"
    assert labels[3] == "Baseline · 2,000 tokens · at 1 · 0% (0/2)"
    assert labels[6] == "R&R · r=500 · 2,000 tokens · at 0 · 100% (1/1) · 1 failed"
    assert list(grid.outcome.loc["b"]) == ["pass", "fail", "fail", "fail", "pass", "pass", "error", "pass"]
    assert grid.answer.loc["a", labels[3]] == "Rome" and grid.answer.loc["b", labels[6]] == ""
    assert grid.trial.loc["a", labels[0]] == 1 and grid.trial.loc["b", labels[7]] == 16
    assert grid.columns[1].rate == 0.5 and math.isnan(trialgrid.Column(("x",), "x", 0, 0, 1).rate)
    assert grid.questions == {"a": "Question a?", "b": "Question b?"}
    page = grid.page(1, 2)
    assert list(page.outcome.index) == ["b"] and page.questions == {"b": "Question b?"}


def test_grid_later_trial_counts_and_missing_cells_are_empty():
    df = frame()
    again = df.iloc[[3]].assign(trial_id=99, score=1.0, answer="Paris")  # task b again at baseline 1000/1.0
    grid = trialgrid.build(pd.concat([df, again]).iloc[1:], "score")  # task a's first trial left out
    assert grid.outcome.loc["a", grid.columns[0].label] == ""  # not run
    assert grid.outcome.loc["b", grid.columns[1].label] == "pass" and grid.columns[1].label.endswith("(2/2)")
    assert grid.trial.loc["b", grid.columns[1].label] == 99


def test_grid_empty_and_litm_layout():
    assert trialgrid.build(frame().iloc[0:0], "score").columns == []
    litm = frame().assign(
        documents=lambda d: d["length"] // 100, gold_index=lambda d: d["position"] * 9, length=None
    )
    grid = trialgrid.build(litm, "score")
    assert grid.columns[0].label == "Baseline · 10 documents · gold 0 · 100% (2/2)"


CIVIDIS = [colour for _, colour in get_colorscale("cividis")]


def test_every_heatmap_draws_the_colour_blind_safe_scale():
    """Both heatmaps (the NIAH panels, Results' length x position) draw cividis, not red to green."""
    panels = heatmap.heatmap(frame(), "score")
    mean = pd.DataFrame([[0.5, 1.0]], index=[1000], columns=[0.0, 1.0])
    grid = charts.heatmap(mean, pd.DataFrame([[2, 2]], index=[1000], columns=[0.0, 1.0]))
    for fig in (panels, grid):
        traces = [t for t in fig.data if t.type == "heatmap"]
        assert traces and all([c for _, c in t.colorscale] == CIVIDIS for t in traces)
