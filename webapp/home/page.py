"""Home: what the app shows, in one sentence and one chart (the published U of "Lost in the Middle" beside
the curve this app measured with its bundled model), and three doors: teach (Lesson), try it on your
own text (Playground), decide (Compare). Fits one screen at 1024x576 and at 1440x900."""

from __future__ import annotations

import streamlit as st

from webapp import session
from webapp.home import curve
from webapp.ui import charts
from webapp.ui.render import guard

DOORS = (
    ("lesson/page.py", "Teach it", ":material/school:",
     "A guided lesson in eight steps, one screen each on a projector."),
    ("playground/page.py", "Try it on your text", ":material/science:",
     "Paste a document, say where the answer is, move it, and see the prompt a model reads."),
    ("compare/page.py", "Decide", ":material/compare_arrows:",
     "Strategies side by side: accuracy with intervals against dollars per 1,000 questions."),
)
SENTENCE = ("Language models find an answer best at the **start** or the **end** of a long prompt and worst in "
            "the **middle**: *lost in the middle*. This app shows where the answer sits in the prompt a model "
            "reads, measures the effect, and tests the prompt strategies that win it back.")


def doors() -> None:
    for page, label, icon, text in DOORS:
        try:
            st.page_link(page, label=f"**{label}**", icon=icon)
        except Exception:  # noqa: BLE001 - the page runs outside the app's navigation
            st.markdown(f"**{label}**")
        st.caption(text)


def main() -> None:
    state = session.start("home")
    st.title("Lost in the middle, seen and measured")
    words, chart = st.columns([2, 3], gap="medium")
    with words:
        st.markdown(SENTENCE)
        doors()
    with chart, guard("the chart"):
        fig, note, names = curve.figure()
        charts.show(fig, "home-u-curve", "accuracy (y) against where the answer document sits among 20 "
                    "(x): both curves are highest at the first place and lower in the middle.", note=note,
                    names=names, height=380 if state.present else 400)


main()
