"""AppTest of what current models show: the Papers page's "Later results" tab (each table with what it
measured, its source and its numbers as published) and Home's second view (one sentence, one chart),
their numbers read from components/data/published_current.csv."""

from __future__ import annotations

import json
from pathlib import Path

from streamlit.testing.v1 import AppTest

from components.report.published import load_published
from tests.webapp.test_app_papers import arr

ROOT = Path(__file__).resolve().parents[2] / "webapp"


def run(page: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / page / "page.py"), default_timeout=90)
    at.run()
    assert not at.exception, at.exception
    return at


def by_title(at, start: str) -> list[dict]:
    figs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    return [f for f in figs if f["layout"]["title"]["text"].startswith(start)]


def printed(source: str, model: str, dataset: str) -> list[float]:
    pub = load_published()
    part = pub[
        (pub["source"] == source)
        & (pub["model"] == model)
        & (pub["dataset"] == dataset)
        & (pub["metric"] == "accuracy_pct")
    ]
    return part.sort_values("doc_length_tokens")["value"].tolist()


def trace(fig: dict, name: str) -> dict:
    (t,) = [t for t in fig["data"] if t["name"] == name]
    return t


def test_later_results_draws_each_table_with_its_source():
    at = run("papers")
    tab = at.tabs[-1]
    assert tab.label == "Later results"
    heads = [h.value for h in tab.subheader]
    assert heads == [
        "NoLiMa: accuracy by context length, no literal match",
        "NoLiMa-Hard: the hardest questions, with and without reasoning",
        "RULER: the mean of 13 tasks by sequence length",
        "LongPiBench: recall by where the relevant text sits",
        "LongPiBench: where the query is placed",
    ]
    text = " ".join(m.value for m in tab.markdown)
    assert text.count("**What it measured.**") == 5
    captions = " ".join(c.value for c in tab.caption).replace("\\", "")
    for cite in ("arXiv:2502.05167", "arXiv:2404.06654", "arXiv:2410.14641"):
        assert cite in captions
    (nolima,) = by_title(at, "NoLiMa, README: Results")
    gpt = trace(nolima, "GPT-4o")
    assert arr(gpt["y"]) == printed("nolima2025", "GPT-4o", "NoLiMa") == [98.1, 98.0, 95.7, 89.2, 81.6, 69.7]
    assert arr(gpt["x"]) == [1000, 2000, 4000, 8000, 16000, 32000]
    assert nolima["layout"]["xaxis"]["ticktext"] == ["1k", "2k", "4k", "8k", "16k", "32k"]
    assert len(nolima["data"]) == 5  # the five models drawn first; the others can be added
    (ruler,) = by_title(at, "RULER, README: main results")
    assert ruler["layout"]["xaxis"]["ticktext"] == ["4k", "8k", "16k", "32k", "64k", "128k"]
    (levels,) = by_title(at, "LongPiBench, Table 1 (App. D)")
    assert arr(trace(levels, "GPT-4o-mini")["x"]) == list(range(1, 17))
    (query,) = by_title(at, "LongPiBench, Table 3 (App. D)")
    assert len(query["data"]) == 6  # two models x three query placements


def test_home_shows_what_current_models_show():
    at = run("home")
    assert "What current models show" in [h.value for h in at.subheader]
    words = " ".join(m.value for m in at.markdown)
    assert "GPT-4o finds the answer 98.1% of the time at 1K tokens and 69.7% at 32K" in words
    (fig,) = by_title(at, "Current models, no literal match")
    assert [t["name"] for t in fig["data"]] == ["GPT-4o", "Gemini 1.5 Pro", "Llama 3.3 70B"]
    assert arr(trace(fig, "Gemini 1.5 Pro")["y"]) == printed("nolima2025", "Gemini 1.5 Pro", "NoLiMa")
