"""Results opens on the shipped LITM-style run (a small fixture store named like the real one): the
gold-index axis, best-subspan EM, the published GPT-3.5-Turbo curves overlaid, the closed-book and
oracle bounds, and the note on what a small model shows. The position axis still works."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from components.run.store import RunStore
from tests.webapp.runs_fixture import fill

PAGE = str(Path(__file__).resolve().parents[2] / "webapp" / "results" / "page.py")
HITS = {0: 5, 4: 2, 9: 4}  # of 6 tasks: a U over the gold index


def litm_store(path: Path, *, bounds: bool) -> Path:
    store = RunStore(path)
    if bounds:
        config = {"name": "nq bounds", "strategies": ["closed-book", "oracle"], "n_tasks": 6}
        cells = [("closed-book", None, None, 1), ("oracle", None, None, 5)]
    else:
        config = {
            "name": "nq litm",
            "strategies": ["litm"],
            "documents": [10],
            "gold_index": [0, 4, 9],
            "n_tasks": 6,
        }
        cells = [("litm", 10, i, h) for i, h in HITS.items()]
    sid = store.open_sweep(config["name"], config)
    for strategy, docs, index, hits in cells:
        for t in range(6):
            hit = float(t < hits)
            store.put_trial(
                sid,
                {
                    "trial_key": f"{strategy}-{index}-{t}",
                    "task": f"nq-{t}",
                    "question": "who?",
                    "answers": ["x"],
                    "strategy": strategy,
                    "params": "{}",
                    "model": "local:qwen",
                    "documents": docs,
                    "gold_index": index,
                    "answer": "x" if hit else "y",
                    "score": hit,
                    "subspan_em": hit,
                    "metric": "subspan_em",
                    "calls": 1,
                    "input_tokens": 100,
                    "output_tokens": 5,
                    "cost_usd": 0.0,
                    "latency_s": 0.1,
                },
            )
    store.finish_sweep(sid, "done")
    store.close()
    return path


@pytest.fixture
def shipped(tmp_path, monkeypatch):
    folder = tmp_path / "shipped"
    folder.mkdir()
    monkeypatch.setenv("LITM_DB", str(tmp_path / "runs" / "litm.sqlite"))
    monkeypatch.setenv("LITM_SHIPPED_RUNS", str(folder))
    litm_store(folder / "local-qwen-nq-litm.sqlite", bounds=False)
    litm_store(folder / "local-qwen-nq-bounds.sqlite", bounds=True)
    fill(folder / "local-qwen-facts.sqlite")  # a token-position run too
    return folder


def run() -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    return at


def test_results_open_on_the_litm_curve_with_published_overlay_bounds_and_note(shipped):
    at = run()
    assert not at.error, [e.value for e in at.error]
    assert at.radio(key="res_u_axis").value == "gold_index"
    assert at.selectbox(key="res_metric").value == "subspan_em"
    assert len(at.multiselect(key="res_sweeps").value) == 2  # the LITM run and its bounds
    overlay = at.multiselect(key="res_u_overlay_idx").value
    assert overlay and all("GPT-3.5-Turbo" in v and "10 documents" in v for v in overlay)
    spec = at.get("plotly_chart")[0].proto.spec
    assert "published (liu2023, Table 5, GPT-3.5-Turbo" in spec
    import json

    notes = " ".join(a.get("text", "") for a in json.loads(spec)["layout"].get("annotations", []))
    notes = notes.replace("<br>", " ")
    assert "closed-book 17% (n=6)" in notes and "oracle 83% (n=6)" in notes  # named beside the plot
    read = " ".join(c.value for c in [*at.caption, *at.markdown])  # the line under the chart names the model
    assert "closed-book (Qwen2.5 Coder 0.5B · this app): 17% (n=6" in read
    assert "oracle (Qwen2.5 Coder 0.5B · this app): 83% (n=6" in read
    names = [t.get("name", "") for t in json.loads(spec)["data"] if t.get("showlegend") is not False]
    assert names and all("Qwen2.5 Coder 0.5B" in n and "this app" in n for n in names if "LITM" not in n), (
        names
    )
    assert any("GPT-3.5-Turbo · 10 documents · LITM Table 5 (2023)" in n for n in names), names
    curve = next(d.value for d in at.dataframe if "95% CI low" in d.value.columns)
    assert list(curve["position"]) == [0, 4, 9]
    assert list(curve["accuracy"]) == ["83.3%", "33.3%", "66.7%"]
    assert list(curve["n"]) == [6, 6, 6]
    assert any("What a small model shows" in i.value for i in at.info)
    assert any("How to read this chart" in c.value for c in at.caption)
    from tests.webapp.runs_fixture import open_tab

    open_tab(at, "Length × position")  # the heatmap: N documents across, gold index down
    heat = next(c.proto.spec for c in at.get("plotly_chart") if "gold document's index" in c.proto.spec)
    assert "documents in the context (N)" in heat and "gold document's index" in heat and "n=6" in heat


def test_results_offer_the_later_papers_curves_and_draw_one(shipped):
    """Beside LITM's curves, the later papers' curves of the same experiment (published_newer.csv) are
    offered for these N; one chosen is drawn, its legend naming model, method and paper."""
    import json

    at = run()
    picker = at.multiselect(key="res_u_overlay_idx")
    title = "Vicuna-7B-v1.5-16k · Calibrated attention · 10 documents · Found in the Middle Table 5 (2024)"
    newer = [o for o in picker.options if "Found in the Middle" in o]  # the options as shown
    assert title in newer and len(newer) == 6 and all("10 documents" in o for o in newer)
    assert not any("Pos2Distill" in o for o in picker.options)  # its curves are at 20 documents only
    calibrated = "published (hsieh2024, Table 5, Vicuna-7B-v1.5-16k, Calibrated attention, 10 documents)"
    picker.set_value([*picker.value, calibrated]).run()
    assert not at.exception and not at.error
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    names = [t.get("name", "") for t in spec["data"] if t.get("showlegend") is not False]
    assert title in names, names
    drawn = next(t for t in spec["data"] if t.get("name") == title)
    from tests.webapp.test_app_results_shape import arr

    assert arr(drawn["x"]) == [0, 4, 9]
    assert arr(drawn["y"]) == pytest.approx([0.7084, 0.6261, 0.5578])  # Table 5 as published, over 100
    note = json.dumps(spec["layout"]["title"], ensure_ascii=False).replace("<br>", " ")
    assert "Found in the Middle Table 5 (2024)" in " ".join(note.split())  # the chart's note names it too


def test_the_position_axis_still_draws_token_sweeps(shipped):
    at = run()
    at.multiselect(key="res_sweeps").set_value([]).run()
    at.radio(key="res_u_axis").set_value("position").run()
    assert not at.exception and not at.error
    curve = next(d.value for d in at.dataframe if "95% CI low" in d.value.columns)
    assert set(curve["series"]) == {f"{s} · fake-model · this app" for s in ("Baseline", "Reprompt", "R&R")}
    assert not any("What a small model shows" in i.value for i in at.info)


def test_a_link_picks_the_axis_and_first_page_retrievals_are_counted_apart(shipped):
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.query_params["axis"] = "position"
    at.run()
    assert not at.exception
    assert at.multiselect(key="res_sweeps").value == []  # not opened on the LITM run
    assert at.radio(key="res_u_axis").value == "position"
    warnings = [w.value for w in at.warning if "first pages in order" in w.value]
    assert not warnings  # the fixture's rr trials retrieve the gold page or page 2


def test_first_pages_trials_are_flagged(tmp_path, monkeypatch):
    import pandas as pd

    from components.report.analysis import first_pages_mask

    df = pd.DataFrame({"retrieved_pages": [[1, 2, 3], [3, 1], None, [1, 2], [2]]})
    assert first_pages_mask(df).tolist() == [True, False, False, True, False]


def test_the_shipped_rr_run_shows_its_first_pages_retrievals(tmp_path, monkeypatch):
    import shutil

    folder = tmp_path / "shipped"
    folder.mkdir()
    shutil.copy(Path(PAGE).parents[2] / "sample_docs" / "runs" / "local-qwen-facts.sqlite", folder)
    monkeypatch.setenv("LITM_DB", str(tmp_path / "runs" / "litm.sqlite"))
    monkeypatch.setenv("LITM_SHIPPED_RUNS", str(folder))
    at = run()
    warning = next(w.value for w in at.warning if "first pages in order" in w.value)
    assert warning.startswith("100 of 100 retrieval trials")  # the 0.5B model's "Pages: 1, 2, 3"
    assert "20 of them count as a page hit" in warning  # gold at page 1 (position 0) or among the first three


def test_the_trial_picker_names_the_gold_document_of_litm_trials(shipped):
    from tests.webapp.runs_fixture import open_tab

    at = run()
    open_tab(at, "Trials")
    options = at.selectbox(key="res_trial").options
    litm = [o for o in options if "· litm ·" in o]
    assert litm and all("of 10 documents" in o and "None" not in o for o in litm), options[:3]
    assert any("gold 4 of 10 documents" in o for o in litm)
    closed = [o for o in options if "· closed-book ·" in o]
    assert closed and all(o.endswith("· closed-book · no document") for o in closed), closed[:3]
