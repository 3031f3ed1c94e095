"""LITM Explorer: `streamlit run webapp/app.py`. Seven pages: Home, Playground, Lesson, Experiments,
Results, Compare, Papers, one package each (webapp/<page>/page.py plus its own parts).

Every page runs inside render.guard(), so an unexpected error shows one short line, never a
traceback; the sidebar (model and key, this session only; this browser's sweeps) is drawn once here
for every page. Pages reach the engine only through webapp/services, the session only through
webapp/session (tests/test_architecture.py checks both).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# the app's own icon, served by the app: a ":material/...:" page icon makes the browser fetch it from a
# font server on every page (the icons of pages and buttons come with Streamlit's own font)
ICON = Path(__file__).resolve().parent / "assets" / "icon.png"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import streamlit as st  # noqa: E402

from webapp import session  # noqa: E402
from webapp.services import models, stores  # noqa: E402
from webapp.session import State, url  # noqa: E402
from webapp.ui import presenter, render, sidebar  # noqa: E402

# (package, title, icon); the first is the default page. Never a folder named "pages/": that name
# switches Streamlit to its old pages mode.
PAGE_FILES = (
    ("home", "Home", ":material/home:"),
    ("playground", "Playground", ":material/science:"),
    ("lesson", "Lesson", ":material/school:"),
    ("experiments", "Experiments", ":material/tune:"),
    ("results", "Results", ":material/monitoring:"),
    ("compare", "Compare", ":material/compare_arrows:"),
    ("papers", "Papers", ":material/menu_book:"),
)


def pages() -> list:
    return [
        st.Page(f"{package}/page.py", title=title, icon=icon, default=i == 0, url_path=package)
        for i, (package, title, icon) in enumerate(PAGE_FILES)
    ]


@st.cache_resource(show_spinner=False)
def warm_up() -> bool:
    """Once per server process: read the run stores into the page cache (a store of 100k trials: about a
    second) in the background while the first visitor is on Home, so Results and Compare open faster
    (webapp/serve.py has the statistics modules loaded when the server was started by `litm app`)."""
    import threading

    import pandas  # noqa: F401 - loaded whole before the thread, which plotly needs (webapp/serve.py main)

    threading.Thread(target=stores.preload, name="litm-warm-up", daemon=True).start()
    return True


st.set_page_config(
    page_title="LITM Explorer",
    page_icon=str(ICON),
    layout="wide",
    initial_sidebar_state="collapsed" if url.present_requested() else "auto",
)
session.in_app(True)
State.init(provider=models.default_provider(), model=models.DEFAULT_MODELS[models.default_provider()])
url.read()  # presenter mode and the workspace token, before the sidebar draws its toggle
page = st.navigation(pages())
with st.sidebar:
    st.markdown("**LITM Explorer** · see, teach and measure *lost in the middle*")
with render.guard("the sidebar"):
    State().choice = sidebar.render()
with st.sidebar, render.guard("presenter mode"):
    presenter.controls()
presenter.apply(page.url_path)
warm_up()
with render.guard(page.title):
    page.run()
