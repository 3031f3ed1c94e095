"""Current models' published results (components/data/published_current.csv): each row loaded as
printed with its source's citation, and drawn against context length (NoLiMa, RULER) and against where
the relevant text sits (LongPiBench), on the axes of our own trials."""

from __future__ import annotations

import csv

import pytest

from components.report.overlays import published_index_curves, published_length_curves, published_level_curves
from components.report.published import CITATIONS, CURRENT_PATH, CURRENT_SOURCES, load_published


@pytest.fixture(scope="module")
def pub():
    return load_published()


def test_every_current_row_ships_as_printed_with_its_citation(pub):
    with open(CURRENT_PATH, newline="", encoding="utf-8") as f:
        raw = list(csv.DictReader(f))
    assert len(raw) == 684
    assert set(CURRENT_SOURCES) == {"nolima2025", "ruler2024", "longpibench2024"}
    cur = pub[pub["source"].isin(CURRENT_SOURCES)].reset_index(drop=True)
    assert len(cur) == 684
    for i, row in enumerate(raw):
        got = cur.iloc[i]
        assert (got["source"], got["table"], got["model"], got["metric"]) == (
            row["source"],
            row["table"],
            row["model"],
            row["metric"],
        )
        assert got["value_printed"] == row["value"] and got["citation"] == CITATIONS[row["source"]]
    assert "arXiv:2502.05167" in CITATIONS["nolima2025"] and "ICML 2025" in CITATIONS["nolima2025"]
    assert "arXiv:2404.06654" in CITATIONS["ruler2024"] and "arXiv:2410.14641" in CITATIONS["longpibench2024"]


def _curve(curves, model, source="nolima2025", dataset="NoLiMa"):
    part = curves[(curves["source"] == source) & (curves["model"] == model) & (curves["dataset"] == dataset)]
    return dict(zip(part["length"], part["value_printed"], strict=True))


def test_length_curves_are_the_papers_cells(pub):
    curves = published_length_curves(pub)
    # NoLiMa's README table, the survey's figures: GPT-4o 98.1% at 1K to 69.7% at 32K
    assert _curve(curves, "GPT-4o") == {
        1000: "98.1",
        2000: "98.0",
        4000: "95.7",
        8000: "89.2",
        16000: "81.6",
        32000: "69.7",
    }
    assert _curve(curves, "Gemini 1.5 Pro")[32000] == "48.2"
    assert _curve(curves, "Gemini Flash 2.0")[16000] == "48.2"
    assert set(curves["metric"]) == {"accuracy_pct", "score_avg13_pct"}  # no base scores, no positions
    assert set(curves["source"]) == {"nolima2025", "ruler2024"}
    ruler = curves[curves["source"] == "ruler2024"]
    assert sorted(set(ruler["length"])) == [4096, 8192, 16384, 32768, 65536, 131072]
    assert ruler["model"].nunique() == 45
    row = curves[(curves["model"] == "GPT-4o") & (curves["length"] == 32000)].iloc[0]
    assert row["mean"] == pytest.approx(0.697)
    assert row["label"] == "published (nolima2025, README: Results, GPT-4o, NoLiMa)"


def test_level_curves_sit_on_a_fraction_of_the_context(pub):
    curves = published_level_curves(pub)
    assert len(curves) == 272 and set(curves["source"]) == {"longpibench2024"}
    one = curves[(curves["model"] == "Claude-3-Haiku") & (curves["method"] == "Base")]
    assert one["level"].tolist() == list(range(1, 17))
    assert one["position"].iloc[0] == 0.0 and one["position"].iloc[-1] == 1.0
    assert one["position"].iloc[5] == pytest.approx(5 / 15)
    assert set(curves["length"]) == {32000}
    tail = curves[(curves["model"] == "GPT-4o-mini") & (curves["method"] == "query_tail")]
    assert len(tail) == 16 and tail["label"].iloc[0].endswith(
        "GPT-4o-mini, LongPiBench Table SQL (absolute position) query_tail)"
    )


def test_current_rows_stay_off_litms_gold_index_axis(pub):
    """LongPiBench's gold_index is a level of 16 segments, not a document index: not a LITM curve."""
    assert not set(published_index_curves(pub)["source"]) & set(CURRENT_SOURCES)
