"""theme.theme (normal and presenter mode) and export_config (the toolbar's image export)."""

import pandas as pd

from components.core.documents import make_document
from components.report import charts, colours, promptmap, theme
from components.strategies import get_strategy


def curve_table() -> pd.DataFrame:
    rows = []
    for s in ("baseline", "reprompt", "rr"):
        for x, m in ((0, 0.8), (0.5, 0.5), (1, 0.7)):
            rows.append(
                {"series": s, "position": x, "n": 10, "mean": m, "lo": m - 0.2, "hi": m + 0.1, "errors": 0}
            )
    return pd.DataFrame(rows)


def test_presenter_mode_gives_large_text_and_distinct_series():
    """Presenter mode draws the registries' colours (the same as normal mode: a strategy keeps its colour
    in both), thicker lines and larger markers; every series its own marker."""
    fig = theme.theme(charts.u_curve(curve_table()), presenter=True)
    assert fig.layout.xaxis.tickfont.size >= 16 and fig.layout.legend.font.size >= 16
    assert fig.layout.font.size >= 16 and fig.layout.font.color == theme.INK
    lines = [t for t in fig.data if t.mode == "lines+markers"]
    assert len(lines) == 3
    assert [t.line.color for t in lines] == [
        colours.STRATEGY_COLOURS[s] for s in ("baseline", "reprompt", "rr")
    ]
    assert all(t.line.width == theme.PRESENTER["line"] and t.marker.size >= 12 for t in lines)
    assert len({t.marker.symbol for t in lines}) == 3
    bands = [t for t in fig.data if t.fill == "toself"]
    for band in bands:  # each band follows its line's colour
        line = next(t for t in lines if t.legendgroup == band.legendgroup)
        assert band.fillcolor == colours.rgba(line.line.color, 0.15)


def test_normal_mode_keeps_strategy_colours_and_readable_text():
    fig = theme.theme(charts.u_curve(curve_table()), presenter=False)
    assert fig.layout.xaxis.tickfont.size >= 13
    rr = next(t for t in fig.data if t.mode == "lines+markers" and t.legendgroup == "rr")
    assert rr.line.color == colours.STRATEGY_COLOURS["rr"]


def test_the_prompt_map_keeps_its_region_colours_in_presenter_mode():
    doc = make_document(["one two three " * 20] * 6, gold=[3])
    prompts = get_strategy("reprompt").first_prompts(doc, "What?", {"r": 100})
    fig = theme.theme(promptmap.figure(prompts, doc), presenter=True, series=False)
    gold = next(t for t in fig.data if t.name == "gold page" and t.type == "bar")
    assert gold.marker.color == promptmap.COLORS["gold"]
    assert fig.layout.font.size >= 16


def test_export_config_names_the_file_and_picks_the_format():
    cfg = theme.export_config("u-curve gold/index", "svg")
    assert cfg["toImageButtonOptions"] == {"format": "svg", "filename": "litm-u-curve-gold-index", "scale": 1}
    assert theme.export_config("x", "gif")["toImageButtonOptions"]["format"] == "png"
    assert cfg["displaylogo"] is False


def test_mini_curve_escapes_answers_and_marks_first_pages():
    rows = [
        {
            "x": 0.0,
            "label": "start",
            "gold_token": 0,
            "correct": True,
            "answer": "<b>x</b>",
            "first_pages": True,
        },
        {"x": 1.0, "label": "end", "gold_token": 900, "correct": False, "answer": "y", "first_pages": False},
    ]
    fig = charts.mini_curve(rows, x_title="position")
    t = fig.data[0]
    assert list(t.y) == [1, 0] and list(t.marker.symbol) == ["circle-open", "circle"]
    assert t.customdata[0][1] == "&lt;b&gt;x&lt;/b&gt;"


def test_the_chart_toolbar_keeps_three_buttons_a_tab_stop_each():
    """Each toolbar button is a Tab stop: the camera and reset axes stay (plus Streamlit's full screen)."""
    removed = set(theme.export_config("x")["modeBarButtonsToRemove"])
    assert {"zoom2d", "pan2d", "zoomIn2d", "zoomOut2d", "autoScale2d", "lasso2d", "select2d"} <= removed
    assert not removed & {"toImage", "resetScale2d"}
