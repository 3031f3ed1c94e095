"""Published curves start their y axis at 0, as the app's measured curves do, so a dip of a few points
is not drawn as a fall to the floor; a table with negative values keeps its own range."""

from __future__ import annotations

import pandas as pd

from components.report.charts import published_lines


def lines(values) -> dict:
    rows = pd.DataFrame({"gold_index": [0, 9, 19], "value": values, "series": "GPT-3.5-Turbo · LITM"})
    fig = published_lines(rows, "gold_index", "series", title="t", x_title="x", y_title="accuracy")
    return fig.layout.yaxis.to_plotly_json()


def test_published_lines_start_at_zero():
    assert lines([75.8, 53.8, 63.2]).get("rangemode") == "tozero"


def test_negative_values_keep_their_own_range():
    assert lines([-2.0, 1.0, 3.0]).get("rangemode") != "tozero"
