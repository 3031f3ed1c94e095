"""Results says in one sentence what each drawn curve's shape is (report.shape: position-bias index with
its bootstrap interval, a label only when the interval excludes zero), on the gold-index and the
position axis, and draws the likelihood measure (answer_logprob) as its own curve with a bootstrap
band, under accuracy or on its own, with the questions scored at every position counted honestly."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from components.core.metrics import LIKELIHOOD
from components.report import shape
from components.run.store import RunStore
from tests.webapp.runs_fixture import fill

PAGE = str(Path(__file__).resolve().parents[2] / "webapp" / "results" / "page.py")
INDEX = (0, 9, 19)
LINE = "LITM QA · Qwen2.5 Coder 0.5B · 20 documents · this app"


def litm_store(
    path: Path,
    hits: dict[int, int],
    n: int,
    *,
    logprob=None,
    measure_only: bool = False,
    name: str = "nq litm",
) -> Path:
    """A LITM-style sweep: n tasks at each gold index, the first hits[i] answered right; `logprob(task,
    index)` gives answer_logprob (None: not scored there); `measure_only`: likelihood trials, no answer."""
    store = RunStore(path)
    sid = store.open_sweep(
        name,
        {"name": name, "strategies": ["litm"], "documents": [20], "gold_index": list(INDEX), "n_tasks": n},
    )
    for index in INDEX:
        for t in range(n):
            lp = logprob(t, index) if logprob else None
            if measure_only and lp is None:
                continue
            hit = None if measure_only else float(t < hits[index])
            store.put_trial(
                sid,
                {
                    "trial_key": f"litm-{index}-{t}",
                    "task": f"nq-{t}",
                    "question": "who?",
                    "answers": ["x"],
                    "strategy": "litm",
                    "params": "{}",
                    "model": "local:qwen2.5-coder-0.5b-instruct",
                    "documents": 20,
                    "gold_index": index,
                    "answer": None if measure_only else ("x" if hit else "y"),
                    "score": hit,
                    "subspan_em": hit,
                    "metric": "subspan_em",
                    "calls": 1,
                    "input_tokens": 100,
                    "output_tokens": 5,
                    "cost_usd": 0.0,
                    "latency_s": 0.1,
                    "answer_logprob": lp,
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
    return folder


def run(at: AppTest | None = None) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=120) if at is None else at
    at.run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    return at


def shape_lines(at: AppTest) -> list[str]:
    """The shape sentences under the charts, markdown escapes removed, one per drawn line."""
    out = []
    for m in at.markdown:
        if m.value.startswith("**Shape of each curve**"):
            out += [line.strip().replace("\\", "") for line in m.value.split("  \n")[1:]]
    return out


def arr(v) -> list[float]:
    """A plotly JSON array: a list, or a typed array {"dtype", "bdata" (base64)}."""
    if isinstance(v, dict):
        import base64

        return list(np.frombuffer(base64.b64decode(v["bdata"]), dtype=v["dtype"]).astype(float))
    return [float(x) for x in v]


def matrix(hits: dict[int, int], n: int) -> pd.DataFrame:
    return pd.DataFrame(
        {i: [float(t < hits[i]) for t in range(n)] for i in INDEX}, index=[f"nq-{t}" for t in range(n)]
    ).sort_index()  # the store's order: by task id


@pytest.mark.parametrize(
    "hits, n, label",
    [
        ({0: 36, 9: 8, 19: 34}, 40, "A U shape (lost in the middle)"),
        ({0: 5, 9: 4, 19: 5}, 10, "No clear shape at this n"),
    ],
)
def test_the_shape_sentence_is_the_data_s(shipped, hits, n, label):
    litm_store(shipped / "local-qwen-nq-litm.sqlite", hits, n)
    at = run()
    assert at.radio(key="res_u_axis").value == "gold_index"
    lines = shape_lines(at)
    expected = shape.curve_shape(matrix(hits, n), x_name="gold_index", binary=True).sentence
    assert lines == [f"**{LINE}.** {expected}"]
    assert expected.startswith(label)
    if label.startswith("No clear"):
        assert (
            f"about {shape.curve_shape(matrix(hits, n), binary=True).questions_needed:,} questions"
            in lines[0]
        )
    else:
        assert "95% interval +" in lines[0]  # the index's interval excludes zero


def test_the_position_axis_tests_each_length_apart(shipped):
    fill(shipped / "local-qwen-facts.sqlite")  # baseline, reprompt, rr at 2,000 and 4,000 tokens
    at = run()
    at.radio(key="res_u_axis").set_value("position").run()
    at.selectbox(key="res_u_length").set_value("all lengths").run()
    lines = shape_lines(at)
    assert len(lines) == 6, lines  # three strategies x two lengths: one place per length, never mixed
    assert any(line.startswith("**R&R · fake-model · this app · 4,000 tokens.**") for line in lines), lines
    assert all("questions" in line for line in lines)
    at.selectbox(key="res_u_length").set_value(2000).run()
    assert len(shape_lines(at)) == 3 and not any("tokens.**" in line for line in shape_lines(at))


def lp(t: int, index: int):
    """A likelihood U: the middle about 1.5 nats below the edges, question 7 not yet scored at index 0."""
    if t == 7 and index == 0:
        return None
    return -5.0 - 0.1 * t - (1.5 if index == 9 else 0.2 * (index == 19)) + 0.3 * ((t * index) % 3 - 1)


def test_results_opens_on_a_likelihood_run_with_its_curve_band_and_n(shipped):
    litm_store(shipped / "local-qwen-nq-litm.sqlite", {0: 5, 9: 3, 19: 4}, 8)
    litm_store(
        shipped / "local-qwen-nq-likelihood20.sqlite",
        {},
        8,
        logprob=lp,
        measure_only=True,
        name="nq likelihood",
    )
    at = run()
    assert LIKELIHOOD.label in at.selectbox(key="res_metric").options
    charts = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    titles = [c["layout"]["yaxis"]["title"]["text"].replace("<br>", " ") for c in charts]
    assert titles[:2] == ["best subspan EM", LIKELIHOOD.label]  # beside accuracy
    lik = charts[1]
    line = next(t for t in lik["data"] if t.get("mode") == "lines+markers")
    full = pd.DataFrame({i: [lp(t, i) for t in range(8) if t != 7] for i in INDEX})  # question 7: left out
    assert arr(line["y"]) == pytest.approx(list(full.mean()))
    assert line["name"].endswith("· 7 questions")
    band = next(t for t in lik["data"] if t.get("fill") == "toself")
    lo, hi = arr(band["y"])[3:][::-1], arr(band["y"])[:3]
    assert all(a < m < b for a, m, b in zip(lo, arr(line["y"]), hi, strict=True))
    lines = shape_lines(at)
    assert len(lines) == 2  # accuracy's line, then the likelihood's
    expected = shape.curve_shape(
        full.set_axis([f"nq-{t}" for t in range(8) if t != 7]).sort_index(),
        x_name="gold_index",
        binary=False,
        unit="nats",
    ).sentence
    assert lines[1].startswith(f"**{LINE}.** {expected}")
    assert "1 question not scored at every position of this line is left out" in lines[1]
    assert "nats" in lines[1] and "points" not in lines[1]
    # the likelihood on its own: accuracy's views say they show accuracy
    at.selectbox(key="res_metric").set_value(LIKELIHOOD.column).run()
    assert not at.exception and not at.error
    charts = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    assert charts[0]["layout"]["yaxis"]["title"]["text"].replace("<br>", " ") == LIKELIHOOD.label
    assert len(shape_lines(at)) == 1 and shape_lines(at)[0].startswith(f"**{LINE}.** {expected}")
    from tests.webapp.runs_fixture import open_tab

    for label in ("Length × position", "Accuracy vs cost", "Accuracy vs length"):
        assert any("This view shows accuracy" in i.value for i in open_tab(at, label).info), label
    assert np.isfinite(arr(line["y"])).all()


def test_a_link_opens_the_likelihood_on_its_own(shipped):
    litm_store(shipped / "local-qwen-nq-litm.sqlite", {0: 5, 9: 3, 19: 4}, 8)
    litm_store(
        shipped / "local-qwen-nq-likelihood20.sqlite",
        {},
        8,
        logprob=lp,
        measure_only=True,
        name="nq likelihood",
    )
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.query_params["metric"] = LIKELIHOOD.column
    run(at)
    assert at.selectbox(key="res_metric").value == LIKELIHOOD.column
    assert len(at.multiselect(key="res_sweeps").value) == 2  # still opened on the shipped runs
    first = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert first["layout"]["yaxis"]["title"]["text"].replace("<br>", " ") == LIKELIHOOD.label
