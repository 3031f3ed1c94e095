"""AppTest of the Papers page: published curves by paper and table, labelled as published (the experiments to
rerun, above them: test_papers_rerun.py)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest

PAGE = str(Path(__file__).resolve().parents[2] / "webapp" / "papers" / "page.py")


def run() -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    return at


def arr(value) -> list:
    """A plotly array from a figure's JSON (plotly 6+ may encode it as typed binary)."""
    if isinstance(value, dict) and "bdata" in value:
        return np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"]).tolist()
    return list(value)


def all_figures(at) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def figures(at) -> list[dict]:
    """The published tables drawn as charts (the measured run's charts apart)."""
    return [f for f in all_figures(at) if "(as published)" in f["layout"]["title"]["text"]]


def test_three_papers_with_citations_and_charts():
    at = run()
    assert not at.error
    assert [t.label for t in at.tabs] == [
        "Lost in the Middle (Liu et al., 2023)",
        "R&R (Agrawal et al., 2024)",
        "ALR2 (Li et al., 2024)",
        "Context Overloading in RAG Based Systems (Naved et al., 2025)",
        "Found in the Middle (Hsieh et al., 2024)",
        "Pos2Distill (Wang et al., 2025)",
        "Later results",
    ]
    captions = " ".join(c.value for c in at.caption).replace("\\", "")  # markdown escapes dropped
    assert "arXiv:2307.03172" in captions and "arXiv:2403.05004" in captions and "ALR2" in captions
    assert "arXiv:2406.16008" in captions and "arXiv:2508.15709" in captions
    figs = figures(at)
    assert len(figs) == 5 + 5  # one per paper tab, and the five tables of Later results
    measured = [f for f in all_figures(at) if f not in figs]
    assert [f["layout"]["title"]["text"].split("<")[0] for f in measured] == [
        "Answers by category: ours and the paper's"
    ]
    for f in figs:
        assert "as published" in f["layout"]["yaxis"]["title"]["text"]
        assert "(as published)" in f["layout"]["title"]["text"]


def test_litm_u_curves_with_reference_lines():
    at = run()
    litm = figures(at)[0]
    names = {t["name"] for t in litm["data"]}
    assert "GPT-3.5-Turbo" in names and "Claude-1.3" in names
    assert litm["layout"]["xaxis"]["title"]["text"].startswith("position of the gold document")
    refs = [a["text"] for a in litm["layout"]["annotations"]]
    assert any(r.startswith("closed-book (") for r in refs) and any(r.startswith("oracle (") for r in refs)
    # 20 documents by default: gold index 0..19
    xs = arr(next(t["x"] for t in litm["data"] if t["name"] == "GPT-3.5-Turbo"))
    assert min(xs) == 0 and max(xs) == 19
    at.selectbox(key="papers_liu2023_0_n_documents").set_value(30).run()
    xs = arr(next(t["x"] for t in figures(at)[0]["data"] if t["name"] == "Claude-1.3"))
    assert max(xs) == 29


def test_rr_tables_by_position_and_each_table_renders():
    at = run()
    rr = figures(at)[1]
    # names are HTML-escaped for plotly's HTML subset (charts.esc); plotly shows "&amp;" as "&"
    assert {t["name"] for t in rr["data"]} == {"Baseline", "Reprompt", "R&amp;R"}
    assert rr["layout"]["yaxis"]["title"]["text"] == "fuzzy match (%), as published"
    view = at.selectbox(key="papers_rr2024_view")
    for option in view.options:
        at.selectbox(key="papers_rr2024_view").set_value(option).run()
        assert not at.exception and not at.error, option
        assert figures(at)[1]["data"], option


def test_alr2_overall_is_a_caption_not_a_point():
    at = run()
    alr2 = figures(at)[2]
    for trace in alr2["data"]:
        assert not any(x is None or x != x for x in arr(trace["x"]))
    assert any("Overall" in c.value and "as published" in c.value for c in at.caption)
    view = at.selectbox(key="papers_alr2_2024_view")
    for option in view.options:
        at.selectbox(key="papers_alr2_2024_view").set_value(option).run()
        assert not at.exception and not at.error, option


def test_printed_values_keep_trailing_zeros():
    at = run()
    at.selectbox(key="papers_rr2024_view").set_value(at.selectbox(key="papers_rr2024_view").options[5]).run()
    bars = figures(at)[1]["data"]
    texts = [t for trace in bars for t in trace["text"]]
    assert all(isinstance(t, str) for t in texts)


def test_the_later_papers_curves_name_model_and_method():
    at = run()
    hsieh, pos2 = figures(at)[3], figures(at)[4]
    names = {t["name"] for t in hsieh["data"]}
    assert "Vicuna-7B-v1.5-16k · Calibrated attention" in names and "Tulu-2-7B · Vanilla attention" in names
    xs = arr(next(t["x"] for t in hsieh["data"] if t["name"] == "Tulu-2-7B · Vanilla attention"))
    assert xs == [0, 9, 19]  # 20 documents by default: gold 1st, 10th, 20th
    assert "Found in the Middle" in hsieh["layout"]["title"]["text"]
    assert {t["name"] for t in pos2["data"]} >= {"Base", "Pos2Distill", "Ms-PoE"}
    assert "best subspan EM (%)" in pos2["layout"]["yaxis"]["title"]["text"]
