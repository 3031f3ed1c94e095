"""`python -m webapp.serve run webapp/app.py ...`: Streamlit's own command line (streamlit.web.cli.main,
what the `streamlit` command runs), after starting a thread that imports what the first pages need.

Streamlit runs no app code until the first visitor opens a page, so that visitor used to wait for
pandas, plotly, scipy.stats and the tokenizer to load. Started with the server, the thread has them
loaded (or half loaded: Python's import locks make a page wait for the rest, never load twice) by
the time someone comes. Modules that other code looks up in sys.modules without importing them
(pandas, for plotly) are loaded before the thread starts (see main). Then the thread reads the run
stores (components.run.reader.browse_kept, about a second for 100k trials, about 45 MB kept): the
first visit's read (webapp/app.py warm_up, services/stores.py) finds them read, unless a store changed
since."""

from __future__ import annotations

import sys
import threading


def preload() -> None:
    import plotly.graph_objects  # noqa: F401

    import components.report.analysis  # noqa: F401  (pandas, scipy.stats)
    import components.report.compare  # noqa: F401
    from components.core.tokens import tokenizer

    tokenizer().count("preload")
    from components.run.reader import browse_kept, store_version
    from components.run.store import store_paths

    for shipped, path in store_paths():  # outside a Streamlit session: the reader's own keep, no st.cache
        try:
            browse_kept(str(path), store_version(path), shipped)
        except Exception:  # noqa: BLE001, S112 - the Results page says what is wrong with the store
            continue


def main() -> int:
    # Streamlit and pandas are loaded whole before the thread starts. Plotly (which Streamlit loads) looks
    # pandas up in sys.modules without importing it: with the thread halfway through importing pandas,
    # it found a half-loaded module and the server failed to start (1 start in about 8, measured).
    import pandas  # noqa: F401
    from streamlit.web.cli import main as streamlit_main

    threading.Thread(target=preload, name="litm-preload", daemon=True).start()
    return streamlit_main(prog_name="streamlit")


if __name__ == "__main__":
    sys.exit(main())
