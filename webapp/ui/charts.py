"""Every chart of the app goes through `show()`: the chart theme (presenter mode or not, from
components.report.charts.theme), the toolbar's image export with a file name, and one line under
the chart that says how to read it."""

from __future__ import annotations

import streamlit as st

from components.report import charts
from webapp.session.state import State


def present() -> bool:
    try:
        return bool(State().present)
    except Exception:  # noqa: BLE001 - no session (bare mode)
        return False


def show(fig, name: str, how_to_read: str, *, key: str | None = None, series: bool = True,
         alt: str | None = None) -> None:
    """Draw `fig` themed for the current mode; the camera button of its toolbar saves it as PNG or
    SVG (the sidebar's choice) named `name`; `how_to_read` goes under it as one line."""
    fmt = "png"
    try:
        fmt = State().export_format or "png"
    except Exception:  # noqa: BLE001
        pass
    charts.theme(fig, presenter=present(), series=series)
    st.plotly_chart(fig, key=key, theme=None, config=charts.export_config(name, fmt), alt=alt)
    st.caption(f"**How to read this chart:** {how_to_read}")
