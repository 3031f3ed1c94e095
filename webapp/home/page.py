"""Home: what the app shows, in one sentence and one chart (the published U of "Lost in the Middle" beside
the curve this app measured with its bundled model), and three doors: teach (Lesson), try it on your
own text (Playground), decide (Compare). Fits one screen at 1024x576 and at 1440x900. Under the chart,
small: the same prompts measured by how likely the model finds the right answer (ours, not the papers').
Below the fold, a second view: what current models show (home/current.py)."""

from __future__ import annotations

import streamlit as st

from webapp import session
from webapp.home.current import current_view
from webapp.services import logprob, shipped
from webapp.services.names import metric_label
from webapp.ui import charts
from webapp.ui.render import guard

DOORS = (
    (
        "lesson/page.py",
        "Teach it",
        ":material/school:",
        "A guided lesson in nine steps, one screen each on a projector.",
    ),
    (
        "playground/page.py",
        "Try it on your text",
        ":material/science:",
        "Paste a document, say where the answer is, move it, and see the prompt a model reads.",
    ),
    (
        "compare/page.py",
        "Decide",
        ":material/compare_arrows:",
        "Strategies side by side: accuracy with intervals against dollars per 1,000 questions.",
    ),
)
SENTENCE = (
    "Language models find an answer best at the **start** or the **end** of a long prompt and worst in "
    "the **middle**: *lost in the middle*. This app shows where the answer sits in the prompt a model "
    "reads, measures the effect, and tests the prompt strategies that win it back."
)


OURS_LINE = (
    ":material/insights: Under the chart: the same prompts, measured by how likely the model finds the "
    "right answer. That view is ours, not the papers'."
)


# The chart column is about 320 px wide at 1024 with the sidebar open: plotly does not wrap a title, a
# note or a legend entry, so each is short or broken into lines that fit it.
ACCURACY_TITLE = "Accuracy by where the answer sits"
LIKELIHOOD_TITLE = "How likely the right answer is"
NOTE_WIDTH = 52  # characters of the 12 px note per line
PRESENTER_NOTE_WIDTH = 92  # presenter mode (sidebar collapsed, a 570 px column): 69 characters of 16 px


def two_lines(name: str) -> str:
    """A legend entry on two lines, broken at its last ' · ': 'GPT-3.5-Turbo · 20 documents<br>LITM
    Table 6 (2023)'."""
    head, sep, tail = name.rpartition(" · ")
    return f"{head}<br>{tail}" if sep else name


# a door that opens its page on a shipped run: Decide opens Compare on Baseline, Reprompt and R&R
OPENS_ON = {"compare/page.py": shipped.DECISION_RUN}


def doors(present: bool = False) -> None:
    for page, label, icon, text in DOORS:
        query = {"present": "1"} if present else {}
        key = shipped.sweep_key(OPENS_ON[page]) if page in OPENS_ON else None
        if key:
            query["sweep"] = key
        try:
            st.page_link(page, label=f"**{label}**", icon=icon, query_params=query or None)
        except Exception:  # the page runs outside the app's navigation
            st.markdown(f"**{label}**")
        st.caption(text)


def main() -> None:
    state = session.start("home")
    st.title("Lost in the middle, seen and measured")
    words, chart = st.columns([2, 3], gap="medium")
    with words:
        st.markdown(SENTENCE)
        doors(state.present)
        st.caption(OURS_LINE)
    with chart, guard("the chart"):
        fig, note, names = shipped.accuracy_figure(title=ACCURACY_TITLE)
        s = shipped.shipped_accuracy()
        if s is not None:  # three lines in the narrow column, the same facts
            note = (
                f"Solid: this app, {s.model} {shipped.made(shipped.ACCURACY_RUN)}, n={s.questions} NQ-open questions, "
                f"{metric_label('subspan_em')}, 95% intervals. Dotted: {shipped.PUBLISHED_MODEL}, "
                "Lost in the Middle (2023), Table 6."
            )
        charts.show(
            fig,
            "home-u-curve",
            "accuracy (y) against where the answer document sits among 20 "
            "(x): both curves are highest at the first place and lower in the middle.",
            note=note,
            names=names if state.present else {k: two_lines(v) for k, v in names.items()},
            note_width=PRESENTER_NOTE_WIDTH if state.present else NOTE_WIDTH,
            height=380 if state.present else 420,
        )
    with (
        chart,
        guard("the likelihood chart"),
    ):  # under it, on the same x axis (a projector: just below the fold)
        likelihood_chart(state.present)
    with guard("the current models' chart"):
        current_view(state.present, PRESENTER_NOTE_WIDTH if state.present else NOTE_WIDTH)


def likelihood_chart(present: bool) -> None:
    """The likelihood run, small: the same 20-document prompts, scored instead of answered."""
    s = shipped.shipped_likelihood()
    if s is None:
        return
    fig = shipped.likelihood_figure(s, title=LIKELIHOOD_TITLE, legend=False)
    charts.show(
        fig,
        "home-likelihood",
        "the mean log-probability the model gives the right answer (y; "
        "closer to 0 is more likely) against where the answer document sits (x), with its 95% band over "
        "questions. " + logprob.brief(s.shape),
        note=f"The same prompts, scored instead of answered: this app, {s.model}, n={s.questions} questions"
        f"{'' if s.finished else ' so far'}. Ours, not the papers'.",
        note_width=PRESENTER_NOTE_WIDTH if present else NOTE_WIDTH,
        height=300 if present else 290,
    )


main()
