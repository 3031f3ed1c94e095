"""Presenter mode: large type, a colour-blind-safe palette with distinct markers and dashes on every
chart (components.report.charts.theme), the sidebar collapsed, charts full width. Remembered in the
URL (?present=1), so a bookmarked or shared link opens in the same mode."""

from __future__ import annotations

import streamlit as st

from webapp.session.state import State

# Larger text and dark captions; narrower page margins so charts get the width (readable at 1024x576).
PRESENTER_CSS = """
<style>
.stMainBlockContainer, .block-container {padding-top: 2.2rem; padding-left: 1.5rem; padding-right: 1.5rem;
  max-width: 100%;}
.stApp p, .stApp li, .stApp label, .stApp [data-testid="stMarkdownContainer"] {font-size: 1.2rem;}
.stApp [data-testid="stCaptionContainer"], .stApp [data-testid="stCaptionContainer"] p {font-size: 1.05rem;
  color: #262626;}
.stApp h1 {font-size: 2.2rem;} .stApp h2 {font-size: 1.7rem;} .stApp h3 {font-size: 1.4rem;}
.stApp [data-testid="stMetricValue"], .stApp [data-testid="stMetricValue"] * {font-size: 2rem;}
.stApp [data-baseweb="select"] div, .stApp [data-baseweb="tag"] span, .stApp input, .stApp textarea
  {font-size: 1.1rem;}
.stApp [data-testid="stTab"] p {font-size: 1.2rem;}
</style>
"""
NORMAL_CSS = """
<style>
.stMainBlockContainer, .block-container {padding-top: 2.5rem;}
.stApp [data-testid="stCaptionContainer"], .stApp [data-testid="stCaptionContainer"] p {color: #4a4a4a;}
</style>
"""


def from_url() -> bool:
    return st.query_params.get("present") == "1"


def sync_from_url() -> None:
    """A link with ?present=1 (or 0) sets the mode once; after that the toggle rules."""
    q = st.query_params.get("present")
    if q is not None and q != st.session_state.get("_present_url"):
        st.session_state["_present_url"] = q
        State().present = q == "1"


def keep_in_url() -> None:
    """Page switches drop query parameters: write the mode back on every run."""
    if State().present:
        if st.query_params.get("present") != "1":
            st.query_params["present"] = "1"
        st.session_state["_present_url"] = "1"
    elif "present" in st.query_params:
        del st.query_params["present"]
        st.session_state["_present_url"] = None


def controls() -> None:
    """The sidebar's presenter toggle and chart export format."""
    st.toggle("Presenter mode", key=State.present.key,
              help="Large type, colour-blind-safe charts with distinct markers and dashes, sidebar collapsed. "
                   "Remembered in the URL (?present=1).")
    st.radio("Chart export (camera button)", ["png", "svg"], key=State.export_format.key, horizontal=True,
             format_func=str.upper, help="The camera button in each chart's toolbar saves it in this format.")


def apply() -> None:
    keep_in_url()
    st.html(PRESENTER_CSS if State().present else NORMAL_CSS)
