"""One frame and one theme for every chart: the frame a figure is built in (`set_layout`: title, axes,
legend under the plot), the app's theme in normal and presenter mode (`theme`), the toolbar's image
export (`export_config`), and `esc`, which makes a data-controlled string inert for plotly.

Plotly renders a subset of HTML in legend names, hover and point texts (links and styles work): every
label that comes from data (task sets, sweep names, model names, params) goes through `esc` first, so
it shows as the characters it is.
"""

from __future__ import annotations

import html

import plotly.graph_objects as go

FONT = dict(size=14)
PERCENT_RANGE = (-0.02, 1.02)  # a share's axis: 0% and 100% a little inside the frame


def esc(text) -> str:
    """A data-controlled string made inert for plotly's HTML subset (legend, hover, text)."""
    return html.escape(str(text), quote=False)


def set_layout(
    fig: go.Figure,
    title: str,
    x_title: str,
    y_title: str,
    percent: bool = True,
    *,
    percent_range: tuple[float, float] = PERCENT_RANGE,
) -> go.Figure:
    """Every chart's frame: title, axis titles, font, legend under the plot; a percent y axis (over
    `percent_range`) unless told."""
    fig.update_layout(
        title=dict(text=title, x=0, xanchor="left"),
        font=FONT,
        template="plotly_white",
        legend=dict(orientation="h", yref="container", yanchor="bottom", y=0, xanchor="left", x=0),
        margin=dict(l=70, r=20, t=60, b=40),
        hovermode="closest",
        height=520,
    )
    fig.update_xaxes(title_text=x_title, showline=True, linecolor="#888", zeroline=False)
    fig.update_yaxes(title_text=y_title, showline=True, linecolor="#888", zeroline=False)
    if percent:
        fig.update_yaxes(tickformat=".0%", range=list(percent_range))
    return fig


def empty_note(fig: go.Figure, text: str) -> None:
    """A chart with nothing to draw says so in its middle."""
    fig.add_annotation(
        text=text, x=0.5, y=0.5, xref="paper", yref="paper", showarrow=False, font=dict(size=16, color="#555")
    )


# --- the app's theme: normal and presenter mode, and the toolbar's image export ---------------------------

PRESENTER = dict(font=18, ticks=16, legend=16, title=22, line=3.5, marker=12)
NORMAL = dict(font=14, ticks=13, legend=13, title=17, line=None, marker=None)
INK = "#1f1f1f"  # dark text: grey text on white is hard to read on a projector


def _group(trace) -> str:
    return str(getattr(trace, "legendgroup", None) or getattr(trace, "name", None) or "")


def theme(fig: go.Figure, presenter: bool = False, series: bool = True) -> go.Figure:
    """The app's chart theme, in place: dark text of at least 13 px (presenter: 16 px ticks and
    legend, 18 px labels). Colours, dashes and markers are the builders' (report.colours: the same in
    both modes); presenter mode with `series` draws the lines thicker and the markers larger, so they
    stay apart on a projector. The prompt map passes series=False (its colours name region kinds)."""
    size = PRESENTER if presenter else NORMAL
    fig.update_layout(
        font=dict(size=size["font"], color=INK),
        title_font=dict(size=size["title"], color=INK),
        legend_font=dict(size=size["legend"], color=INK),
        hoverlabel=dict(font_size=size["ticks"]),
        paper_bgcolor="white",
    )
    fig.update_xaxes(
        tickfont=dict(size=size["ticks"], color=INK), title_font=dict(size=size["font"], color=INK)
    )
    fig.update_yaxes(
        tickfont=dict(size=size["ticks"], color=INK), title_font=dict(size=size["font"], color=INK)
    )
    fig.update_annotations(font_size=size["ticks"])
    if presenter:
        fig.update_layout(
            margin=dict(l=80, r=max(30, fig.layout.margin.r or 0), t=70, b=60)
        )  # keeps a wider right
    if not (presenter and series):
        return fig
    line, marker = float(PRESENTER["line"]), float(PRESENTER["marker"])
    for t in fig.data:
        if getattr(t, "type", "") != "scatter" or _group(t).startswith("ref:"):
            continue  # reference lines keep their look
        if getattr(t, "fill", None) == "toself" or "lines" not in str(t.mode or "lines"):
            if "markers" in str(t.mode or "") and isinstance(t.marker.size, int | float):
                t.marker.size = max(float(t.marker.size), marker)
            continue
        published = str(t.line.dash or "") == "dot" or str(t.name or "").startswith("published")
        t.line.width = 2.5 if published else line
        if "markers" in str(t.mode or "lines+markers"):
            t.marker.size = max(float(t.marker.size or 0), marker)
    return fig


MODEBAR_REMOVED = ["lasso2d", "select2d", "zoom2d", "pan2d", "zoomIn2d", "zoomOut2d", "autoScale2d"]


def export_config(name: str, fmt: str = "png") -> dict:
    """Plotly config for a chart: the toolbar's camera button saves `<name>.<fmt>` (png or svg),
    drawn in the browser (no server-side image library needed)."""
    safe = "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in str(name)).strip("-") or "chart"
    fmt = fmt if fmt in ("png", "svg") else "png"
    return {
        "displaylogo": False,
        "toImageButtonOptions": {
            "format": fmt,
            "filename": f"litm-{safe}",
            "scale": 2 if fmt == "png" else 1,
        },
        # the toolbar shows on hover; each of its buttons is a Tab stop (eight a chart): the camera and
        # reset axes stay (drag to zoom, double-click to reset still work), and Streamlit's full screen
        "modeBarButtonsToRemove": MODEBAR_REMOVED,
    }
