"""Presenter mode: large type, a colour-blind-safe palette with distinct markers and dashes on every
chart (the chart theme), the sidebar collapsed, charts first, one screen per Lesson step at 1024x576.
Remembered in the URL (?present=1, session/url.py), so a bookmarked or shared link opens in the same
mode. Both modes keep text at 4.5:1 contrast or more and wrap long unbroken strings (a 2,000-character
task id never widens a page)."""

from __future__ import annotations

import secrets

import streamlit as st

from webapp.session import State, url

# Dark text everywhere (Streamlit's captions and widget hints are grey at about 4.2:1); long words break; a
# link or button reached by the keyboard has a 3 px dark-blue ring (Streamlit's is faint), 8:1 on white.
COMMON_CSS = """
.stApp [data-testid="stCaptionContainer"], .stApp [data-testid="stCaptionContainer"] p,
.stApp [data-testid="stWidgetLabel"] p, .stApp [data-testid="stMetricLabel"] p,
.stApp [data-testid="stTooltipHoverTarget"], .stApp small, .stApp [data-testid="stSliderTickBarMin"],
.stApp [data-testid="stSliderTickBarMax"] {color: #3d3d3d;}
.stApp [data-testid="stMarkdownContainer"], .stApp [data-testid="stCaptionContainer"], .stApp h1, .stApp h2,
.stApp h3, .stApp [data-testid="stAlertContainer"], .stApp [data-testid="stWidgetLabel"],
.stApp [data-testid="stCode"] pre {overflow-wrap: anywhere; word-break: break-word;}
.stApp [data-testid="stCode"] pre, .stApp [data-testid="stCode"] code {white-space: pre-wrap;}
.stApp [data-testid="stMetricLabel"], .stApp [data-testid="stMetricLabel"] * {white-space: normal;
  overflow: visible; text-overflow: clip;}
.stApp [data-testid="stMetricValue"] {white-space: normal; overflow-wrap: anywhere;}
.stApp a:focus-visible, .stApp button:focus-visible, .stApp [role="tab"]:focus-visible,
.stApp summary:focus-visible {outline: 3px solid #1f4e99; outline-offset: 2px; border-radius: 4px;}
"""
# Larger text and dark captions; narrow margins so charts get the width (readable at 1024x576). A title
# keeps Streamlit's bottom padding (its heading box has a negative bottom margin of the same size): without
# it the next element covers the title's lower edge.
PRESENTER_CSS = """
.stMainBlockContainer, .block-container {padding-top: 3.9rem; padding-bottom: 0; padding-left: 1.5rem;
  padding-right: 1.5rem; max-width: 100%;}
.stApp p, .stApp li, .stApp label, .stApp [data-testid="stMarkdownContainer"] {font-size: 1.05rem;
  line-height: 1.45;}
.stApp [data-testid="stExpander"] summary p {font-size: 1rem;}
.stApp [data-testid="stCaptionContainer"], .stApp [data-testid="stCaptionContainer"] p {font-size: 1rem;
  color: #262626;}
.stApp h1 {font-size: 1.7rem; padding: .9rem 0 1rem 0;} .stApp [data-testid="stColumn"] h1 {padding: 0;} .stApp h2 {font-size: 1.5rem;} .stApp h3 {font-size: 1.3rem;}
.stApp [data-testid="stMetricValue"], .stApp [data-testid="stMetricValue"] * {font-size: 1.8rem;}
.stApp [data-testid="stMetricLabel"], .stApp [data-testid="stMetricLabel"] p {font-size: 1rem;}
.stApp [data-baseweb="select"] div, .stApp [data-baseweb="tag"] span, .stApp input, .stApp textarea
  {font-size: 1.05rem;}
.stApp [data-testid="stSliderThumbValue"], .stApp [data-testid="stSliderThumbValue"] *,
.stApp [data-testid="stSliderTickBarMin"], .stApp [data-testid="stSliderTickBarMax"] {font-size: 1rem;}
.stApp [data-testid="stTab"] p {font-size: 1.1rem;}
.stApp [data-testid="stVerticalBlock"] {gap: .5rem;}
.stApp [data-testid="stPageLink"] p {font-size: 1.1rem;}
"""
NORMAL_CSS = """
.stMainBlockContainer, .block-container {padding-top: 2.5rem;}
.stApp [data-testid="stSliderThumbValue"], .stApp [data-testid="stSliderThumbValue"] * {font-size: 1rem;}
.stApp [data-testid="stMetricLabel"], .stApp [data-testid="stMetricLabel"] p {font-size: 1rem;}
"""


def controls() -> None:
    """The sidebar's presenter toggle and chart export format."""
    st.toggle(
        "Presenter mode",
        key=State.present.key,
        help="Large type, colour-blind-safe charts with distinct markers and dashes, sidebar collapsed, "
        "charts first. Remembered in the URL (?present=1).",
    )
    st.radio(
        "Chart export (camera button)",
        ["png", "svg"],
        key=State.export_format.key,
        horizontal=True,
        format_func=str.upper,
        help="The camera button in each chart's toolbar saves it in this format, "
        "with its title and the note on whose numbers they are.",
    )


# Closes the sidebar if it is open: Streamlit applies `initial_sidebar_state` on a first load only (and
# not at all once the visitor has opened or closed the sidebar in this browser), so presenter mode
# clicks the sidebar's own collapse button, once each time it is turned on and once on each page it
# opens, never on a rerun of the same page: a presenter who opens the sidebar keeps it open.
COLLAPSE_JS = """<script>
(() => {
  let tries = 0;
  const collapse = () => {
    const bar = document.querySelector('[data-testid="stSidebar"]');
    const button = document.querySelector('[data-testid="stSidebarCollapseButton"] button');
    if (bar && bar.getAttribute("data-collapsed") === "true") return;
    if (bar && button) { button.click(); return; }
    if (++tries < 50) setTimeout(collapse, 100);
  };
  collapse();
})();
</script>"""


def collapse_sidebar(page: str) -> None:
    """In presenter mode, collapse the sidebar when the mode was just turned on or `page` was just opened."""
    state = State()
    if not state.present:
        state.present_collapsed = ""
        return
    st.set_page_config(initial_sidebar_state="collapsed")  # a first load in presenter mode opens collapsed
    if state.present_collapsed == page:
        return
    state.present_collapsed = page
    with st.sidebar:  # the script's own element takes no room in the page
        # a body of its own each time: the same body as the last run's would not run its script again
        st.html(
            f'<span data-litm-collapse="{secrets.token_hex(4)}"></span>' + COLLAPSE_JS,
            unsafe_allow_javascript=True,
        )


def apply(page: str = "") -> None:
    url.keep_shared()
    st.html("<style>" + COMMON_CSS + (PRESENTER_CSS if State().present else NORMAL_CSS) + "</style>")
    collapse_sidebar(page or "page")
