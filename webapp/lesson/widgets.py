"""The live widget of each Lesson step (components/report/lesson.py names them): published curves,
prompt maps built by the engine, and the engine's cost estimates. Every chart goes through
ui/charts.py (theme, note, export, how to read)."""

from __future__ import annotations

import html

import streamlit as st

from webapp.services import engine, figures, lesson, logprob, shipped
from webapp.services.engine import NQ_SET, Recipe
from webapp.services.names import count, metric_label, setting_label
from webapp.session import State
from webapp.ui import charts, looks

SAMPLE = "harrowmere_history"
N_DOCS = 20
# Presenter mode: one 1024x576 screen per step, the chart in the wider column beside the step's text, under
# the step's title row, above its "how to read" line.
HEIGHT = 400
MAP_HEIGHT = 320
MOVE_MAP_HEIGHT = 285  # the move step has the view switch and the slider above its map


def height() -> int:
    return HEIGHT if State().present else 460


def sample_recipe() -> tuple[Recipe, str]:
    """The lesson's sample document with its first question: (recipe, question)."""
    samples = engine.samples()
    s = next((x for x in samples if x.name == SAMPLE), samples[0])
    question, answers = s.questions[0]
    gold = tuple(engine.gold_pages(s.text, "paragraph", s.name, tuple(answers)))
    return Recipe.of_text(s.text, "paragraph", s.name, gold), question


def nq_recipe(index: int) -> tuple[Recipe, str]:
    info = engine.task_sets()[NQ_SET]
    tasks = engine.task_set(info.path)
    return Recipe.of_task(info.path, 0, documents=N_DOCS, gold_index=index), tasks[0].question


def prompt_map(
    recipe: Recipe,
    strategy: str,
    params: tuple,
    question: str,
    name: str,
    how: str,
    above=None,
    height: int = MAP_HEIGHT,
) -> list:
    """The prompt map; `above(prompts)` draws a line about them first (where the gold page starts)."""
    prompts = engine.prompts(recipe, strategy, params, question)
    if above is not None:
        above(prompts)
    fig = engine.figure(recipe, strategy, params, question)
    layout = None
    if State().present:
        layout = present_map(fig, height)
    charts.show(fig, name, how, series=False, height=height if State().present else None, layout=layout)
    return prompts


def present_map(fig, height: int) -> dict:
    """A prompt map for a projector: two round ticks on the low distance panel (never one over another),
    its title in one word; the legend over the map, or none when the map is too low for one (the line
    under the chart names the colours). Returns the margins to set after the theme."""
    fig.update_layout(
        yaxis2=dict(nticks=2, title_text="distance", title_standoff=8),  # the lower panel
        xaxis2=dict(nticks=5),
    )
    if height < MAP_HEIGHT:
        fig.update_layout(showlegend=False)
        return {"margin": {"t": 14, "b": 10, "l": 10, "r": 20}}
    fig.update_layout(legend=dict(orientation="h", yanchor="bottom", y=1.04, x=0, entrywidth=0))
    return {"margin": {"t": 80, "b": 10, "l": 10, "r": 20}}


MAP_HOW = (
    f"each row is a prompt along its tokens: {figures.colour_key()}; below, each page's distance in tokens to the "
    "nearest instruction."
)
# Short legend names beside the published curves (presenter mode): the plot keeps its width.
LITM_SHORT = {
    "GPT-3.5-Turbo (16K)": "GPT-3.5 (16K)",
    "LongChat-13B (16K)": "LongChat-13B",
    "MPT-30B-Instruct": "MPT-30B",
}


def published_litm() -> None:
    fig = lesson.litm_curves(N_DOCS)
    present = State().present
    if present:  # seven lines, their legend beside the plot in one column of short names
        fig.update_layout(title_text="Lost in the Middle, Table 6")
        fig.update_xaxes(title_text="gold document index")
        for t in fig.data:
            if str(t.legendgroup or "").startswith("ref:"):
                t.name = "GPT-3.5, no docs"
            elif t.name in LITM_SHORT:
                t.name = LITM_SHORT[t.name]
    charts.show(
        fig,
        "lesson-litm-20-documents",
        "one line per model, accuracy (y) against where the answer document sits among 20 (x); "
        "the dashed line is answering with no documents at all.",
        note="As published in Lost in the Middle (Liu et al., 2023), Table 6 and Table 1 (closed-book); "
        "not measured by this app."
        if not present
        else "As published in Lost in the Middle (2023), Tables 6 and 1; not measured by this app.",
        height=height(),
        legend="side",
    )


def one_prompt() -> None:
    recipe, question = sample_recipe()
    prompt_map(recipe, "baseline", (), question, "lesson-one-prompt", MAP_HOW, above=place_caption)


def ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def place_text(prompts, index: int | None = None) -> str:
    """Where the gold page starts; `index`: the gold document's index among the task's documents (counted
    from 0, as the slider counts), said with its place counted from 1 (the map's page number)."""
    places = engine.gold_places(prompts)
    if not places:
        return ""
    g = places[0]
    what = (
        f"Gold page {g.page}"
        if index is None
        else f"The gold document, index {index} (the {ordinal(index + 1)}),"
    )
    return (
        f"{what} starts at token {g.start:,} of {prompts[0].tokens:,}"
        + ("" if g.distance is None else f", {engine.n_tokens(g.distance)} from the nearest instruction")
        + "."
    )


def place_caption(prompts) -> None:
    if text := place_text(prompts):
        st.caption(text)


VIEWS = {"prompt": "The prompt", "accuracy": "Accuracy", "likelihood": "Likelihood (ours)"}


def beside(aside):
    """Where a widget's line of text goes: in presenter mode the step's text column (`aside`), so the chart
    keeps its height on a 1024x576 screen; else right here, under the chart."""
    return aside if aside is not None and State().present else st.container()


def move(aside=None) -> None:
    """Move the answer through 20 documents (the prompt map), then what this app measured on that grid:
    accuracy beside the published curve, and how likely the model finds the right answer (ours).
    `aside`: where the question and the gold document's place go in presenter mode (under the step's
    text, so the map keeps its height on a 1024x576 screen)."""
    state = State()
    if state.lesson_view not in VIEWS:
        state.lesson_view = "prompt"
    st.segmented_control(
        "Show",
        list(VIEWS),
        key=State.lesson_view.key,
        format_func=lambda v: VIEWS[v],
        label_visibility="collapsed",
    )
    view = state.lesson_view or "prompt"
    if view == "accuracy":
        accuracy_view(aside)
    elif view == "likelihood":
        likelihood_view(aside)
    else:
        st.slider(
            f"Gold document index (0 = first, {N_DOCS - 1} = last)", 0, N_DOCS - 1, key=State.lesson_move.key
        )
        index = int(state.lesson_move)
        recipe, question = nq_recipe(index)

        def above(prompts) -> None:  # the question, then where its gold document is
            with beside(aside):
                st.html(f"<div style='font-size:1.05rem'><b>Question:</b> {html.escape(question)}</div>")
                st.caption(place_text(prompts, index))

        prompt_map(
            recipe,
            "litm",
            (),
            question,
            "lesson-move-the-answer",
            MAP_HOW,
            above=above,
            height=MOVE_MAP_HEIGHT,
        )


CURVE_HEIGHT = 340  # presenter mode: the view switch and the chart on a 1024x576 screen (the sentence beside)
CURVE_X = "gold document index"  # presenter mode: the x title that fits the half-width chart
# presenter mode: the accuracy legend in the plot's empty top band (the curves stay under 80%), so the plot
# keeps the height a legend row under the axis title would take
INSIDE_LEGEND = {
    "legend": {
        "orientation": "h",
        "yref": "paper",
        "y": 1,
        "yanchor": "top",
        "xref": "paper",
        "x": 0.01,
        "xanchor": "left",
        "bgcolor": "rgba(255,255,255,0.85)",
    },
    "margin": {"b": 10},
}


def shape_caption(s) -> None:
    st.caption(logprob.brief(s.shape))


def accuracy_view(aside=None) -> None:
    present = State().present
    s = shipped.shipped_accuracy()
    fig, note, names = shipped.accuracy_figure(title="Accuracy: this app and the paper")
    if present and s is not None:  # a narrower chart on a projector: short note, names and x title
        note = f"Solid: measured by this app, n={s.questions}. Dotted: LITM Table 6."
        names = {
            k: ("GPT-3.5, published" if "LITM" in v else f"{s.model} (this app)") for k, v in names.items()
        }
        fig.update_xaxes(title_text=CURVE_X)
    charts.show(
        fig,
        "lesson-accuracy-20-documents",
        "accuracy (y) against where the answer document sits among "
        "20 (x); the solid line is this app's bundled model, the dotted one GPT-3.5 as published.",
        note=note,
        names=names,
        height=CURVE_HEIGHT if present else 420,
        layout=INSIDE_LEGEND,
    )
    if s is not None:
        with beside(aside):
            shape_caption(s)


def likelihood_view(aside=None) -> None:
    present = State().present
    s = shipped.shipped_likelihood()
    if s is None:
        st.info("The shipped likelihood run is not installed.", icon=":material/info:")
        return
    fig = shipped.likelihood_figure(
        s, title="How likely the model finds the right answer", legend=not present
    )
    note = f"Measured by this app with {s.model} on {s.n_text()}. {logprob.OURS}"
    if present:  # the note names the model (no legend); the y title short, clear of the note above it
        more = "" if s.finished else " so far"
        note = f"This app, {s.model}, n={s.questions} questions{more}. Ours, not the papers'."
        fig.update_xaxes(title_text=CURVE_X)
        fig.update_yaxes(title_text="log-probability", title_standoff=6)
    charts.show(
        fig,
        "lesson-likelihood-20-documents",
        "the mean log-probability the model gives the right answer "
        "(y; closer to 0 is more likely) against where the answer document sits among 20 (x), with a 95% "
        "band over questions: the same prompts as the accuracy curve, scored instead of answered.",
        note=note,
        height=CURVE_HEIGHT if present else 420,
    )
    with beside(aside):
        shape_caption(s)


WHY_VIEWS = {"curves": "Attention and accuracy", "live": "One prompt, live"}
WHY_GOLD = [0, 4, 9, 14, 19]  # the shipped runs' gold indices
STRIP_HEIGHT = 250  # presenter mode: the switch, the slider, the button and the strip on one screen
WHY_HOW = (
    "left, the gold document's share of the attention of the prompt's last token (the one that writes the "
    "first word of the answer), over all layers and heads; right, how often the answer is right; both "
    "against where the gold document sits among 20 (x), with 95% intervals. Where both dip in the middle, "
    "the model looks less at the page it needs."
)


def at_edges(points, pct: bool = True) -> str:
    """'5.5% first, 2.1% at 9, 4.7% last' from a curve's points (first, middle index, last)."""
    p = points.sort_values("gold_index")
    rows = [p.iloc[0], p.iloc[len(p) // 2], p.iloc[-1]]
    words = ["first", f"at {int(rows[1]['gold_index'])}", "last"]
    return ", ".join(
        f"{100 * float(r['mean']):.{1 if pct else 0}f}% {w}" for r, w in zip(rows, words, strict=True)
    )


def why(aside=None) -> None:
    """The shipped attention curve beside the shipped accuracy U (Found in the Middle §2), or the live strip
    of where the bundled model looks in one prompt (the Playground's strip, ui/looks.py)."""
    state = State()
    if state.lesson_why_view not in WHY_VIEWS:
        state.lesson_why_view = "curves"
    st.segmented_control(
        "Show",
        list(WHY_VIEWS),
        key=State.lesson_why_view.key,
        format_func=lambda v: WHY_VIEWS[v],
        label_visibility="collapsed",
    )
    if (state.lesson_why_view or "curves") == "live":
        why_live(aside)
    else:
        why_curves(aside)


def why_curves(aside=None) -> None:
    present = State().present
    fig, att, acc = lesson.why_curves()
    said = []
    if att is not None:
        said.append(f"attention {att.model}, n={att.n_text()}")
    if acc is not None:
        said.append(f"accuracy n={acc.n_text()}")
    if present:
        note = "This app: " + "; ".join(said) + ". Ours, not the paper's." if said else ""
    else:
        note = (
            (
                f"Measured by this app with the bundled model: the attention run on {att.n_text()} "
                "(litm results --metric attention), "
                if att is not None
                else "The shipped attention run is not installed; "
            )
            + (
                f"the accuracy run on {acc.n_text()} ({metric_label('subspan_em')}). "
                if acc is not None
                else "the shipped accuracy run is not installed. "
            )
            + "Ours, not Found in the Middle's numbers."
        )
    if present:
        fig.update_layout(margin=dict(t=30, b=10))
        fig.update_xaxes(title_text=CURVE_X)
    charts.show(
        fig,
        "lesson-why-the-middle-is-lost",
        WHY_HOW,
        note=note,
        series=False,
        height=CURVE_HEIGHT if present else 420,
    )
    parts = []
    if att is not None:
        parts.append(f"Attention on the gold document: {at_edges(att.points)}")
    if acc is not None:
        parts.append(f"accuracy: {at_edges(acc.points, pct=False)}")
    if parts:
        with beside(aside):
            st.caption("; ".join(parts) + ".")


def why_live(aside=None) -> None:
    state = State()
    present = state.present
    st.select_slider("Gold document index (0 = first, 19 = last)", WHY_GOLD, key=State.lesson_why_gold.key)
    index = int(state.lesson_why_gold)
    recipe, question = nq_recipe(index)
    prompts = engine.prompts(recipe, "litm", (), question)
    with beside(aside):
        st.html(f"<div style='font-size:1.05rem'><b>Question:</b> {html.escape(question)}</div>")
        st.caption(place_text(prompts, index))
    looks.section(
        state,
        prompts,
        1,
        ("lesson-why", index),
        prompts[0].tokens,
        heading=False,
        height=STRIP_HEIGHT if present else None,
        name="lesson-where-the-model-looks",
    )


def reminders(aside=None) -> None:
    st.select_slider(
        "r: a reminder every … tokens",
        [200, 300, 500, 1000, 2000],
        key=State.lesson_r.key,
        format_func=lambda v: f"{v:,}",
    )
    recipe, question = sample_recipe()
    prompts = prompt_map(
        recipe, "reprompt", (("r", int(State().lesson_r)),), question, "lesson-reminders", MAP_HOW
    )
    n = sum(1 for s in prompts[0].spans if s.kind == "reminder")
    beside(aside).caption(f"{count(n, 'reminder')} in a {prompts[0].tokens:,}-token prompt.")


def icr(aside=None) -> None:
    st.slider("k: pages to retrieve", 1, 8, key=State.lesson_k.key)
    k = int(State().lesson_k)
    recipe, question = sample_recipe()
    prompt_map(recipe, "icr", (("k", k),), question, "lesson-icr-stage-1", MAP_HOW)
    doc = engine.built(recipe)
    biggest = sum(sorted((p.tokens for p in doc.pages), reverse=True)[:k])
    beside(aside).caption(
        f"Stage 1 reads all {doc.tokens:,} document tokens; stage 2 reads at most {count(k, 'page')}: "
        f"{biggest:,} tokens or fewer."
    )


def rr() -> None:
    charts.show(
        lesson.rr_positions(),
        "lesson-rr-table-7",
        "one line per method, fuzzy match (y) against where the answer sits in an 80k-token document "
        "(x); a line that stays high across x has beaten the lost-in-the-middle effect.",
        note="As published in R&R (Agrawal et al., 2024), Table 7, GPT-4 Turbo; not measured by this app.",
        height=height(),
    )


def chunking() -> None:
    charts.show(
        lesson.chunking(),
        "lesson-chunking-tables-2-3",
        "accuracy (y) against chunk size (x, with the calls m it costs); left is more calls, right is "
        "fewer; the gap between the lines is what reminders inside chunks buy.",
        note="As published in R&R (Agrawal et al., 2024), Tables 2-3, GPT-4 Turbo; not measured by this app.",
        height=height(),
    )


CHOICES = (
    ("baseline", ()),
    ("reprompt", (("r", 300),)),
    ("icr", (("k", 3),)),
    ("rr", (("k", 3), ("r", 300))),
    ("chunked-icr", (("c", 1000), ("k", 3))),
)


def choose() -> None:
    recipe, question = nq_recipe(9)
    rows = []
    for strategy, params in CHOICES:
        label = setting_label({"strategy": strategy, "params": dict(params)})  # 'ICR · k=3'
        try:
            calls, tin, _ = engine.usage(recipe, strategy, params, question)
        except ValueError:
            continue
        rows.append({"label": label, "calls": calls, "input_tokens": tin})
    fig = lesson.strategy_costs(rows)
    if State().present:
        present_costs(fig, rows)
    charts.show(
        fig,
        "lesson-what-it-costs",
        f"{figures.colour_word(figures.PALETTE['blue'])} bars: calls per question; {figures.colour_word(figures.PALETTE['red-orange'])} bars: input tokens "
        "(right axis), as the engine estimates "
        "them for the 20-document prompt of step 3 (later stages assume k pages come back).",
        note="Estimated by this app's engine for one NQ-open question with 20 documents; no model called.",
        height=height(),
    )


def present_costs(fig, rows: list[dict]) -> None:
    """The cost bars for a projector: names on two lines (not slanted), bar labels at 16 px that are never
    shrunk (tokens in thousands), and the token axis in round thousands."""
    top = max([r["input_tokens"] for r in rows] or [1000])
    step = 1000 if top <= 5000 else 2000 if top <= 10_000 else 5000
    fig.update_traces(textfont_size=16, constraintext="none", textangle=0)
    fig.update_traces(
        text=[f"{r['input_tokens'] / 1000:.1f}k" for r in rows], selector=dict(name="input tokens")
    )
    fig.update_xaxes(
        tickvals=[r["label"] for r in rows],
        tickangle=0,
        title_text="",
        ticktext=[figures.esc(r["label"]).replace(" · ", "<br>").replace(", ", "<br>") for r in rows],
    )
    fig.update_layout(
        bargap=0.25,
        yaxis2=dict(dtick=step, tickformat="~s", range=[0, (top // step + 1.4) * step], nticks=None),
    )


ASIDE = {
    "move",
    "why",
    "reminders",
    "icr",
}  # widgets that take the step's text column for a line of their own (presenter mode)
WIDGETS = {
    "published_litm": published_litm,
    "one_prompt": one_prompt,
    "move": move,
    "why": why,
    "reminders": reminders,
    "icr": icr,
    "rr": rr,
    "chunking": chunking,
    "choose": choose,
}
