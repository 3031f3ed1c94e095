"""One name and one colour per model and strategy on every page: Home, the Lesson, Results and Compare
drawn as AppTests on the shipped runs (the bundled Qwen model's LITM runs), each chart's series read
from the figure the page sends to the browser. A series is named by the registries' display names
(never a raw id such as 'litm' or 'qwen2.5-coder-0.5b-instruct') and coloured by its strategy when its
name starts with one, else by its model (a published curve beside measured strategies: their colour,
dotted), in normal and in presenter mode. A chart whose lines are all one strategy (Results' LITM QA at
10 and 20 documents) draws them in distinct colours instead, by what tells them apart, and each
published curve in the colour of its N's line (colours.series_style)."""

from __future__ import annotations

import html
import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from components.report import colours
from components.report.sweeps import model_title, strategy_label

ROOT = Path(__file__).resolve().parents[2]
PAGE = {p: str(ROOT / "webapp" / p / "page.py") for p in ("home", "lesson", "results", "compare")}
SHIPPED = ROOT / "sample_docs" / "runs"
QWEN = model_title("local:qwen2.5-coder-0.5b-instruct")
LITM = strategy_label("litm")
RAW = ("qwen2.5-coder-0.5b-instruct", "local:", "litm ·", "litm-qac", "rr ·", "reprompt r=")


@pytest.fixture
def shipped(tmp_path, monkeypatch):
    monkeypatch.setenv("LITM_DB", str(tmp_path / "runs.sqlite"))
    monkeypatch.setenv("LITM_SHIPPED_RUNS", str(SHIPPED))


def series(at: AppTest) -> list[tuple[str, str]]:
    """(legend name as shown, colour) of every line, point and bar the page draws; a published curve
    (dotted) on a chart whose measured lines are strategies as ('published: <its strategy>', colour)."""
    out = []
    for chart in at.get("plotly_chart"):
        traces = []
        for t in json.loads(chart.proto.spec)["data"]:
            name = html.unescape(str(t.get("name") or ""))
            if not name or t.get("fill") == "toself" or t.get("type") not in ("scatter", "bar"):
                continue
            colour = (t.get("line") or {}).get("color") or (t.get("marker") or {}).get("color")
            if isinstance(colour, str):
                traces.append((name, colour.upper(), (t.get("line") or {}).get("dash") == "dot"))
        measured = [(n, c) for n, c, dotted in traces if not dotted]
        parts = colours.differing_parts([n for n, _ in measured])
        if parts is not None:  # every line one strategy: distinct colours by what tells them apart
            by_part = dict(zip(parts, (c for _, c in measured), strict=True))
            assert len(set(by_part.values())) == len(by_part) == len({c for _, c in measured}), measured
            for name, colour, dotted in traces:  # a published curve: the colour of its N's line
                if dotted:
                    assert colour in by_part.values(), (name, colour)
            continue
        strategies = {colours.strategy_of(head(n)) for n, _ in measured} - {None}
        for name, colour, dotted in traces:
            if (
                dotted and strategies and colours.model_colour(head(name))
            ):  # the measured strategy's colour, drawn dotted
                assert colour in {colours.STRATEGY_COLOURS[k].upper() for k in strategies}, (name, colour)
                continue
            out.append((name, colour))
    return out


def head(name: str) -> str:
    """A series' first part: 'LITM QA' of 'LITM QA · Qwen2.5 Coder 0.5B · this app (n=500)'; an arm's
    number on the accuracy-cost chart dropped ('1 LITM QA · ...')."""
    first = name.split(" · ")[0].split(" (n=")[0]
    number, _, rest = first.partition(" ")
    return rest if number.isdigit() and rest else first


def pages(present: bool) -> dict[str, list[tuple[str, str]]]:
    drawn = {}
    for page, step, view in (
        ("home", "", ""),
        ("lesson", "1", ""),  # the papers' curves, one per model
        ("lesson", "3", "accuracy"),  # the shipped run beside the paper's
        ("lesson", "3", "likelihood"),
        ("results", "", ""),
        ("compare", "", ""),
    ):
        sweeps = ["shipped local-qwen-nq-litm#1", "shipped local-qwen-nq-bounds#1"]  # LITM QA and its bounds
        at = AppTest.from_file(PAGE[page], default_timeout=240)
        at.session_state["present"] = present
        if step:
            at.query_params["step"] = step
        if view:
            at.session_state["lesson_view"] = view
        if page == "compare":
            at.query_params["sweep"] = sweeps
            at.query_params["arm"] = [
                f"{strategy_label(s)} · {QWEN}" for s in ("litm", "closed-book", "oracle")
            ]
        at.run()
        assert not at.exception, (page, at.exception)
        drawn.setdefault(page, []).extend(series(at))
    return drawn


@pytest.mark.parametrize("present", [False, True])
def test_one_name_and_one_colour_per_model_and_strategy_on_every_page(shipped, present):
    drawn = pages(present)
    seen: dict[str, set[str]] = {}
    for page, found in drawn.items():
        assert found, f"{page} draws no series"
        for name, colour in found:
            assert not any(raw in name for raw in RAW), (page, name)  # display names, not ids
            if name.endswith("(dominated)"):
                assert colour == colours.DOMINATED.upper(), (page, name)  # another arm beats it: grey
                continue
            h = head(name)
            key = colours.strategy_of(h)
            if key is not None:  # a strategy's series: its colour
                assert colour == colours.STRATEGY_COLOURS[key].upper(), (page, name, colour)
                seen.setdefault(h, set()).add(colour)
            elif colours.model_colour(h) is not None:  # a model's series
                assert colour == colours.model_colour(h).upper(), (page, name, colour)
                seen.setdefault(h, set()).add(colour)
    # the bundled model is named alike on every page, and LITM QA too where its arms are drawn
    for page in ("home", "lesson", "results", "compare"):
        assert any(QWEN in name for name, _ in drawn[page]), (page, drawn[page])
    for page in ("results", "compare"):
        assert any(head(name) == LITM for name, _ in drawn[page]), (page, drawn[page])
    # one colour each, across the pages
    assert seen[QWEN] == {colours.model_colour(QWEN).upper()}
    assert seen[LITM] == {colours.STRATEGY_COLOURS["litm"].upper()}
    assert all(len(c) == 1 for c in seen.values()), seen
