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

from webapp import presenter, render, sidebar  # noqa: E402
from webapp.state import State  # noqa: E402

PAGES = Path(__file__).parent / "views"  # not "pages/": that name switches Streamlit to its old pages mode
# (file, title, icon); the first is the default page.
PAGE_FILES = (
    ("playground.py", "Playground", ":material/science:"),
    ("lesson.py", "Lesson", ":material/school:"),
    ("experiments.py", "Experiments", ":material/tune:"),
    ("results.py", "Results", ":material/monitoring:"),
    ("compare.py", "Compare", ":material/compare_arrows:"),
    ("papers.py", "Papers", ":material/menu_book:"),
)


def pages() -> list:
    return [st.Page(f"views/{file}", title=title, icon=icon, default=i == 0, url_path=title.lower())
            for i, (file, title, icon) in enumerate(PAGE_FILES)]


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
        from webapp import runs

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
