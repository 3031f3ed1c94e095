"""Every chart of the app goes through `show()`: the chart theme (presenter mode or not), the note that
says whose numbers these are (drawn into the figure as its subtitle, so an exported PNG or SVG keeps
it and a slide stands alone), the toolbar's image export with a file name, and one line under the
chart that says how to read it.

Theming a figure costs plotly a few hundred milliseconds (its update calls), the same for every
visitor of a classroom who sees the same chart: `show` keeps the themed figure once per server process,
by what the figure holds before the theme (its JSON, about 20 ms to make) and the settings of the theme,
and draws the kept one."""

from __future__ import annotations

import hashlib
import textwrap
import threading
from collections import OrderedDict

import plotly.io as pio
import streamlit as st

from webapp.services import figures, views
from webapp.session import State


def present() -> bool:
    try:
        return bool(State().present)
    except Exception:  # no session (bare mode)
        return False


NOTE_SIZE = 12  # px, the note under a chart's title; presenter mode: PRESENTER_NOTE_SIZE
PRESENTER_NOTE_SIZE = 16  # no chart text under 16 px on a projector
PRESENTER_WIDE_NOTE = 100  # characters of a 16 px note across a page-wide chart at 1024 px


def with_note(fig, note: str, width: int = 90, size: int = NOTE_SIZE) -> None:
    """The note as the figure's subtitle (wrapped at `width` characters, `size` px), under its title:
    part of every export."""
    if not note:
        return
    lines = textwrap.wrap(note, width) or [note]
    fig.update_layout(
        title_subtitle_text="<br>".join(figures.esc(x) for x in lines),
        title_subtitle_font=dict(size=size, color="#333"),
    )
    # the title at the top edge, the note's lines under it, the plot right below them (a title left at
    # plotly's "auto" place sinks as the margin grows, and a note of four lines ran into the plot)
    top = fig.layout.margin.t if fig.layout.margin and fig.layout.margin.t is not None else 60
    title_px = fig.layout.title.font.size if fig.layout.title and fig.layout.title.font.size else None
    lines_px = round(size * 1.35) * len(lines)
    if size == NOTE_SIZE:
        fig.update_layout(
            title=dict(yref="container", y=1, yanchor="top", pad=dict(t=10)),
            margin=dict(t=max(top, 46 + (title_px or 17) - 17 + lines_px + 14)),
        )
        return
    fig.update_layout(
        title=dict(yref="container", y=1, yanchor="top", pad=dict(t=4)),
        margin=dict(t=44 + lines_px),
    )


def legend_beside(fig) -> None:
    """The legend in one column right of the plot, top-aligned (presenter mode: the plot keeps the height
    a legend of several rows under it would take)."""
    fig.update_layout(
        legend=dict(
            orientation="v",
            yref="paper",
            y=1,
            yanchor="top",
            xref="paper",
            x=1.02,
            xanchor="left",
            entrywidth=0,
            tracegroupgap=2,
        )
    )


def rename(fig, names: dict[str, str]) -> None:
    """Legend names by series (a trace's legend group, else its name): after the theme, which styles
    the papers' curves by their engine names."""
    for t in fig.data:
        group = getattr(t, "legendgroup", None) or getattr(t, "name", None)
        if group in names and getattr(t, "showlegend", None) is not False:
            t.name = names[group]


KEPT = 128  # themed figures kept per server process
KEPT_BYTES = 2_000_000  # a bigger figure (a prompt map of a long document) is themed for each visit


@st.cache_resource(show_spinner=False)
def _themed() -> tuple[OrderedDict, threading.Lock, dict]:
    """Themed figures by (figure before the theme, theme settings), least recently used dropped; the lock
    of the dict; one lock per key being themed (the first session themes, the others wait for it)."""
    return OrderedDict(), threading.Lock(), {}


def themed(
    fig,
    presenter: bool,
    series: bool,
    note: str,
    names: dict[str, str],
    height: int | None,
    note_width: int = 90,
    legend: str = "",
    layout: dict | None = None,
):
    """`fig` themed for the mode, legend `names` and `note` applied, `height` set: the kept figure when the
    same figure was themed the same way before in this server process, else `fig` itself, changed in
    place and kept. The kept figure is only read from then on (st.plotly_chart serializes it). Sessions
    asking for the same figure at once theme it once: a class arriving at a server that has just started
    would otherwise theme it once per student, each slower for the others."""
    kept_as = views.figure_key(fig)  # a kept figure (services/views.py): its key, without serializing it
    spec = "" if kept_as else pio.to_json(fig, validate=False, engine="json")
    key = (
        kept_as or hashlib.blake2b(spec.encode(), digest_size=16).digest(),
        presenter,
        series,
        note,
        tuple(sorted(names.items())),
        height,
        note_width,
        legend,
        repr(layout),
    )
    kept, lock, theming = _themed()
    keep = len(spec) <= KEPT_BYTES
    with lock:
        found = kept.get(key)
        if found is not None:
            kept.move_to_end(key)
            return found
        mine = theming.setdefault(key, threading.Lock()) if keep else threading.Lock()
    with mine:
        with lock:
            found = kept.get(key)  # themed by another session while this one waited
            if found is not None:
                return found
        figures.theme(fig, presenter=presenter, series=series)
        rename(fig, names)
        with_note(fig, note, note_width, PRESENTER_NOTE_SIZE if presenter else NOTE_SIZE)
        if presenter and legend == "side":
            legend_beside(fig)
        if presenter and layout:
            fig.update_layout(layout)
        if height:
            fig.update_layout(height=height)
        if keep:
            with lock:
                kept[key] = fig
                theming.pop(key, None)
                while len(kept) > KEPT:
                    kept.popitem(last=False)
    return fig


def show(
    fig,
    name: str,
    how_to_read: str,
    *,
    note: str = "",
    series: bool = True,
    alt: str | None = None,
    height: int | None = None,
    names: dict[str, str] | None = None,
    note_width: int = 90,
    legend: str = "",
    layout: dict | None = None,
    file_name: str | None = None,
    on_select: str = "ignore",
    wide: bool = False,
):
    """Draw `fig` themed for the current mode, `note` (who measured what) inside it, legend `names` by
    series; the camera button of its toolbar saves it as PNG or SVG (the sidebar's choice) named
    `file_name` or else `name`; `how_to_read` goes under it as one line. `note_width`: characters per line
    of the note (a narrow chart wraps it sooner; presenter mode wraps at three quarters of it, its notes
    being larger). `legend="side"`: in presenter mode the legend stands beside the plot in one column;
    `layout`: presenter mode's own layout changes, made after the theme (its margins). `file_name`: the
    saved file's name when it should say more than `name` (whose sweep, model, sizes, n and date).
    `on_select="rerun"`: a click on a point selects it; the chart's selection state is returned. `wide`: the
    chart spans the page, so in presenter mode (sidebar closed, 1024 px) its 16 px note wraps at
    PRESENTER_WIDE_NOTE characters, not sooner: a note of six short lines left a plot 90 px tall."""
    fmt = "png"
    try:
        fmt = State().export_format or "png"
    except Exception:
        pass
    if present():  # a 16 px note wraps sooner than a 12 px one on the same width
        note_width = PRESENTER_WIDE_NOTE if wide else note_width * NOTE_SIZE // PRESENTER_NOTE_SIZE
    fig = themed(fig, present(), series, note, names or {}, height, note_width, legend, layout)
    event = st.plotly_chart(
        fig,
        key=State.chart(name).key,
        theme=None,
        config=figures.export_config(file_name or name, fmt),
        alt=alt,
        on_select=on_select,
        selection_mode="points",
    )
    if present():  # on a projector the chart gets the room; the line is one click away
        with st.expander("How to read this chart"):
            st.caption(f"**How to read this chart:** {how_to_read}")
    else:
        st.caption(f"**How to read this chart:** {how_to_read}")
    return event
