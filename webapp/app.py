"""LITM Explorer: `streamlit run webapp/app.py`. Six pages: Playground, Lesson, Experiments, Results, Compare, Papers.

Every page runs inside render.guard(), so an unexpected error shows one short line, never a
traceback; the sidebar (model and key, this session only) is drawn once here for every page.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import streamlit as st  # noqa: E402

from webapp.session.state import State  # noqa: E402
from webapp.ui import presenter, render, sidebar  # noqa: E402

# One package per page, each with its page.py (never a folder named "pages/": that name switches
# Streamlit to its old pages mode). (package, title, icon); the first is the default page.
PAGE_FILES = (
    ("playground", "Playground", ":material/science:"),
    ("lesson", "Lesson", ":material/school:"),
    ("experiments", "Experiments", ":material/tune:"),
    ("results", "Results", ":material/monitoring:"),
    ("compare", "Compare", ":material/compare_arrows:"),
    ("papers", "Papers", ":material/menu_book:"),
)


def pages() -> list:
    return [st.Page(f"{package}/page.py", title=title, icon=icon, default=i == 0, url_path=package)
            for i, (package, title, icon) in enumerate(PAGE_FILES)]


@st.cache_resource(show_spinner=False)
def warm_up() -> bool:
    """Once per server process: import the statistics modules (scipy.stats: about a second; already
    loaded when the server was started by `litm app`, webapp/serve.py) and read the run stores into the
    page cache (a store of 100k trials: about a second) in the background while the first visitor is on
    the Playground, so Results and Compare open faster. A store that cannot be read is left for the page
    to report."""
    import threading

    def imports() -> None:
        import components.report.analysis  # noqa: F401
        import components.report.compare  # noqa: F401
        from webapp.services import stores as runs

        for _label, shipped, path in runs.sources():
            try:
                runs.load_store(str(path), runs.stamp(path), shipped)
            except Exception:  # noqa: BLE001, S112 - the Results page says what is wrong with it
                continue

    import pandas  # noqa: F401 - loaded whole before the thread, which plotly needs (webapp/serve.py main)

    threading.Thread(target=imports, name="litm-warm-up", daemon=True).start()
    return True


st.set_page_config(page_title="LITM Explorer", page_icon=":material/search_insights:", layout="wide",
                   initial_sidebar_state="collapsed" if presenter.from_url() else "auto")
State.init(provider=sidebar.default_provider(), model=sidebar.DEFAULT_MODELS[sidebar.default_provider()])
presenter.sync_from_url()
page = st.navigation(pages())
with st.sidebar:
    st.markdown("**LITM Explorer** · see, teach and measure *lost in the middle*")
with render.guard("the sidebar"):
    State().choice = sidebar.render()
with st.sidebar, render.guard("presenter mode"):
    presenter.controls()
presenter.apply()
warm_up()
with render.guard(page.title):
    page.run()
