"""Lesson: a guided path in nine short steps (services.lesson: components/report/lesson.py), one live
widget each, a "try this", a question for the room, and a link into the other pages with settings
filled in. The step is in the URL (?step=N), so a teacher can bookmark or share any step; in presenter
mode each step fits one 1024x576 projector screen."""

from __future__ import annotations

import streamlit as st

from webapp import session
from webapp.lesson.widgets import ASIDE, WIDGETS
from webapp.services import shipped
from webapp.services.lesson import STEPS, step
from webapp.session import State, url
from webapp.ui.render import guard

PAGES = {
    "playground": "playground/page.py",
    "results": "results/page.py",
    "papers": "papers/page.py",
    "experiments": "experiments/page.py",
}


def go(delta: int) -> None:
    state = State()
    state.lesson_step = min(max(1, int(state.lesson_step) + delta), len(STEPS))


def buttons(c1, c3, n: int) -> None:
    c1.button(
        "← Previous",
        key=State.lesson_prev.key,
        on_click=go,
        args=(-1,),
        disabled=n <= 1,
        use_container_width=True,
    )
    c3.button(
        "Next →",
        key=State.lesson_next.key,
        on_click=go,
        args=(1,),
        disabled=n >= len(STEPS),
        type="primary",
        use_container_width=True,
    )


def head(n: int, title: str, present: bool) -> None:
    """The title and the step buttons: one row on a projector (every pixel of 576 counts)."""
    if present:
        c0, c1, c2, c3 = st.columns([6, 1.3, 0.9, 1.3], vertical_alignment="center")
        c0.title(title)
        buttons(c1, c3, n)
        c2.markdown(f"**{n} / {len(STEPS)}**")
        return
    st.title(title)
    c1, c2, c3 = st.columns([1, 4, 1], vertical_alignment="center")
    buttons(c1, c3, n)
    c2.progress(n / len(STEPS), text=f"Step {n} of {len(STEPS)}")


def link(s) -> None:
    query = {k: str(v) for k, v in s.link.query.items()}
    key = shipped.sweep_key(s.link.run) if s.link.run else None
    if key:  # the shipped run, not whichever sweep ran last
        query["sweep"] = key
    if State().present:
        query["present"] = "1"
    try:
        st.page_link(
            PAGES[s.link.page], label=s.link.label, icon=":material/open_in_new:", query_params=query
        )
    except Exception:  # not inside the app's navigation (the page run on its own)
        st.caption(f"{s.link.label}: the {s.link.page.capitalize()} page.")


def main() -> None:
    state = session.start("lesson")
    s = step(state.lesson_step)
    state.lesson_step = n = STEPS.index(s) + 1
    url.link("lesson")  # ?step=N follows the buttons
    head(n, f"Lesson · {n}. {s.title}", state.present)
    words, widget = st.columns([2, 3], gap="medium")  # side by side: one screen
    with words:
        st.markdown(s.text)
        st.markdown(f"**Try this:** {s.try_this}")
        st.markdown(f"**Question for the room:** {s.question}")
        link(s)
        st.caption(f"Source: {s.source}.")
        if n == 1 and not state.present:
            st.caption(
                "Projecting? Turn on **Presenter mode** in the sidebar (or add ?present=1 to the URL)."
            )
    with widget, guard(f"step {n}'s widget"):
        if s.widget in ASIDE:
            WIDGETS[s.widget](words)
        else:
            WIDGETS[s.widget]()


main()
