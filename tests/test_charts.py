import pandas as pd

from components.report import analysis, charts, colours, overlays
from tests.test_analysis import PUB, grid


def test_u_curve_has_band_line_and_n_in_legend():
    fig = charts.u_curve(analysis.u_curve(grid()))
    names = [t.name for t in fig.data]
    assert "Baseline (n=12)" in names and "R&amp;R (n=12)" in names  # display names (plotly shows "&")
    bands = [t for t in fig.data if t.fill == "toself"]
    assert len(bands) == 2
    assert fig.layout.yaxis.tickformat == ".0%"
    assert fig.layout.xaxis.title.text == "answer position (tokens)"


def test_same_strategy_same_colour_everywhere():
    fig = charts.u_curve(analysis.u_curve(grid()))
    line = next(t for t in fig.data if t.name.startswith("R&amp;R") and t.fill is None)
    assert line.line.color == colours.STRATEGY_COLOURS["rr"] == colours.colour_for("R&R")
    assert colours.colour_for("some-model") == colours.colour_for("some-model")


def test_colours_cover_every_registered_strategy():
    """Every strategy of the registry has its own colour, and a chart of its trials draws it."""
    from components.strategies import STRATEGIES

    assert set(colours.STRATEGY_COLOURS) == set(STRATEGIES)
    assert len(set(colours.STRATEGY_COLOURS.values())) == len(STRATEGIES)  # no two alike
    for name in STRATEGIES:
        fig = charts.u_curve(analysis.u_curve(grid().assign(strategy=name)))
        line = next(t for t in fig.data if t.fill is None)
        assert line.line.color == colours.STRATEGY_COLOURS[name], name


def test_published_curves_share_their_strategys_colour():
    """Every method name the published tables print stands for a registered strategy, and its curve
    takes that strategy's colour: the shipped LITM run and LITM's published curve are one colour."""
    from components.report.published import CURRENT_SOURCES, NEWER_SOURCES, load_published
    from components.strategies import STRATEGIES

    assert set(colours.PAPER_NAMES.values()) <= set(STRATEGIES)
    pub = load_published()
    # current models' benchmarks (NoLiMa, RULER, LongPiBench) compare models, not prompt strategies
    for method in pub.loc[~pub["source"].isin(NEWER_SOURCES + CURRENT_SOURCES), "method"].unique():
        assert colours.strategy_of(method) is not None, method
    # the later papers' methods change the model (attention calibration, distillation), not the prompt:
    # no strategy stands for them, and their curves take colours of their own
    assert colours.strategy_of("Calibrated attention") is None and colours.strategy_of("Pos2Distill") is None
    assert colours.colour_for("DA") == colours.STRATEGY_COLOURS["direct-answer"]
    assert colours.colour_for("multi-document QA") == colours.STRATEGY_COLOURS["litm"]
    assert colours.colour_for("Reprompt (r=10k)") == colours.STRATEGY_COLOURS["reprompt"]
    runs = grid().assign(
        strategy="litm", documents=20, gold_index=grid()["position"].rank(method="dense") - 1
    )
    over = overlays.published_index_curves(load_published())
    over = over[over["n_documents"] == 20].assign(x=lambda d: d["position"])
    fig = charts.accuracy_lines(
        analysis.u_curve(runs, x="gold_index"),
        "gold_index",
        title="t",
        x_title="x",
        metric_label="m",
        overlays=over,
    )
    ours = next(t for t in fig.data if t.name.startswith("LITM QA") and t.fill is None)
    theirs = [
        t
        for t in fig.data
        if t.name.startswith("published (liu2023") and "closed" not in t.name and "oracle" not in t.name
    ]
    assert theirs and all(t.line.color == ours.line.color == colours.STRATEGY_COLOURS["litm"] for t in theirs)
    # a strategy's published variants share its colour and differ by dash
    rows = pd.DataFrame(
        {
            "method": ["Reprompt (r=5k)"] * 2 + ["Reprompt (r=10k)"] * 2,
            "x": [1, 2, 1, 2],
            "value": [50, 60, 55, 65],
        }
    )
    fig = charts.published_lines(rows, "x", "method", title="t", x_title="x", y_title="y")
    assert {t.line.color for t in fig.data} == {colours.STRATEGY_COLOURS["reprompt"]}
    assert len({t.line.dash for t in fig.data}) == 2


def test_overlay_is_labelled_published():
    over = overlays.overlay_candidates(PUB, grid())
    fig = charts.u_curve(analysis.u_curve(grid()), overlays=over)
    assert any(t.name.startswith("published (rr2024, Table 7") for t in fig.data)


def test_single_point_series_uses_error_bars():
    df = grid()
    df = df[df.position == 0]
    fig = charts.u_curve(analysis.u_curve(df))
    assert not [t for t in fig.data if t.fill == "toself"]
    assert all(t.error_y.array is not None for t in fig.data)


def test_heatmap_prints_accuracy_and_n():
    mean, n = analysis.heatmap(grid())
    fig = charts.heatmap(mean, n)
    assert fig.data[0].text[0][0] == "75%<br>n=8"


def test_accuracy_vs_cost_points_per_setting():
    fig = charts.accuracy_vs_cost(analysis.cost_table(grid()), "calls")
    assert len(fig.data) == 2
    assert fig.layout.xaxis.title.text == "LLM calls per question"


def test_empty_inputs_give_a_note_not_an_error():
    empty = pd.DataFrame(columns=grid().columns)
    for fig in (
        charts.u_curve(analysis.u_curve(empty)),
        charts.heatmap(*analysis.heatmap(empty)),
        charts.accuracy_vs_cost(analysis.cost_table(empty)),
        charts.accuracy_vs_length(analysis.by_length(empty)),
    ):
        assert fig.layout.annotations and "No" in fig.layout.annotations[0].text


def test_published_lines_with_reference_lines():
    rows = PUB[PUB.source == "rr2024"]
    refs = pd.DataFrame({"label": ["closed-book"], "value": [35.0]})
    fig = charts.published_lines(
        rows,
        "answer_position_tokens",
        "method",
        title="t",
        x_title="x",
        y_title="fuzzy match (%) as published",
        references=refs,
    )
    assert fig.data[0].name == "Baseline"
    assert fig.layout.shapes and fig.layout.annotations[0].text == "closed-book: 35.0"


def test_published_bars():
    fig = charts.published_bars(PUB, "dataset", "method", title="t", x_title="x", y_title="y")
    assert {t.name for t in fig.data} == {"Baseline", "multi-document QA"}
