"""Every chart of the app goes through `show()`: the chart theme (presenter mode or not), the note that
says whose numbers these are (drawn into the figure as its subtitle, so an exported PNG or SVG keeps
it and a slide stands alone), the toolbar's image export with a file name, and one line under the
chart that says how to read it."""

from __future__ import annotations

import textwrap

import streamlit as st

from webapp.services import figures
from webapp.session import State


def present() -> bool:
    try:
        return bool(State().present)
    except Exception:  # noqa: BLE001 - no session (bare mode)
        return False


def with_note(fig, note: str, width: int = 90) -> None:
    """The note as the figure's subtitle (wrapped), under its title: part of every export."""
    if not note:
        return
    lines = textwrap.wrap(note, width) or [note]
    fig.update_layout(title_subtitle_text="<br>".join(figures.esc(x) for x in lines),
                      title_subtitle_font=dict(size=12, color="#333"))
    top = fig.layout.margin.t if fig.layout.margin and fig.layout.margin.t is not None else 60
    fig.update_layout(margin=dict(t=max(top, 72 + 17 * len(lines))))


def rename(fig, names: dict[str, str]) -> None:
    """Legend names by series (a trace's legend group, else its name): after the theme, which styles
    the papers' curves by their engine names."""
    for t in fig.data:
        group = getattr(t, "legendgroup", None) or getattr(t, "name", None)
        if group in names and getattr(t, "showlegend", None) is not False:
            t.name = names[group]


def show(fig, name: str, how_to_read: str, *, note: str = "", series: bool = True, alt: str | None = None,
         height: int | None = None, names: dict[str, str] | None = None, note_width: int = 90) -> None:
    """Draw `fig` themed for the current mode, `note` (who measured what) inside it, legend `names` by
    series; the camera button of its toolbar saves it as PNG or SVG (the sidebar's choice) named
    `name`; `how_to_read` goes under it as one line. `note_width`: characters per line of the note (a
    narrow chart wraps it sooner)."""
    fmt = "png"
    try:
        fmt = State().export_format or "png"
    except Exception:  # noqa: BLE001
        pass
    figures.theme(fig, presenter=present(), series=series)
    rename(fig, names or {})
    with_note(fig, note, note_width)
    if height:
        fig.update_layout(height=height)
    st.plotly_chart(fig, key=State.chart(name).key, theme=None, config=figures.export_config(name, fmt), alt=alt)
    if present():  # on a projector the chart gets the room; the line is one click away
        with st.expander("How to read this chart"):
            st.caption(f"**How to read this chart:** {how_to_read}")
    else:
        st.caption(f"**How to read this chart:** {how_to_read}")
