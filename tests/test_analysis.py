import math

import pandas as pd
import pytest

from components.core import stats
from components.report import analysis, overlays, sweeps


def trials(rows):
    cols = [
        "sweep",
        "task",
        "strategy",
        "model",
        "length",
        "position",
        "score",
        "error",
        "calls",
        "input_tokens",
        "output_tokens",
        "cost_usd",
        "params",
    ]
    return pd.DataFrame([dict(zip(cols, r, strict=True)) for r in rows], columns=cols)


def grid():
    rows = []
    for strategy, hits in (("baseline", [1, 0, 1]), ("rr", [1, 1, 1])):
        for pos, hit in zip((0, 5000, 10000), hits, strict=True):
            for i in range(4):
                rows.append(
                    (
                        1,
                        f"t{i}",
                        strategy,
                        "fake",
                        10000,
                        pos,
                        hit if i else 0,
                        None,
                        1 if strategy == "baseline" else 2,
                        1000,
                        10,
                        0.01,
                        "{}",
                    )
                )
    rows.append((1, "t9", "rr", "fake", 10000, 0, None, "RateLimited: slow down", 1, 0, 0, None, "{}"))
    return trials(rows)


def test_errors_are_counted_not_scored():
    df = grid()
    table = analysis.accuracy(df, ["strategy"], "score")
    rr = table[table.strategy == "rr"].iloc[0]
    assert rr.n == 12 and rr.errors == 1
    assert rr["mean"] == pytest.approx(9 / 12)


def test_wilson_interval_matches_scipy():
    from scipy.stats import binomtest

    lo, hi = stats.proportion_ci(3, 4)
    ci = binomtest(3, 4).proportion_ci(method="wilson")
    assert lo == pytest.approx(ci.low, abs=1e-6) and hi == pytest.approx(ci.high, abs=1e-6)
    assert all(math.isnan(v) for v in stats.proportion_ci(0, 0, empty=stats.NO_INTERVAL))


def test_fractional_metric_uses_mean_interval():
    df = pd.DataFrame({"strategy": ["a"] * 4, "page_recall": [0.5, 1.0, 0.5, 1.0], "error": [None] * 4})
    row = analysis.accuracy(df, ["strategy"], "page_recall").iloc[0]
    assert row["mean"] == pytest.approx(0.75) and 0 <= row.lo < 0.75 < row.hi <= 1


def test_u_curve_one_row_per_series_and_position():
    table = analysis.u_curve(grid())
    assert len(table) == 6
    assert set(table.series) == {"Baseline", "R&R"}  # display names
    base = table[table.series == "Baseline"].set_index("position")["mean"]
    assert base[5000] == 0 and base[0] == pytest.approx(0.75)


def test_u_curve_series_from_two_columns():
    table = analysis.u_curve(grid(), series=("strategy", "model"))
    assert set(table.series) == {"Baseline · fake", "R&R · fake"}


def test_heatmap_matrix_and_counts():
    df = grid()
    df2 = df.assign(length=20000)
    mean, n = analysis.heatmap(pd.concat([df, df2]))
    assert list(mean.index) == [10000, 20000] and list(mean.columns) == [0, 5000, 10000]
    assert n.loc[10000, 0] == 8


def test_cost_table_per_setting():
    df = grid()
    df.loc[df.strategy == "rr", "params"] = '{"k": 5, "r": 10000}'
    table = analysis.cost_table(df)
    rr = table[table.setting == "R&R · r=10,000, k=5"].iloc[0]
    assert rr.calls_per_trial == pytest.approx(25 / 13)
    assert not rr.usd_known  # the failed trial has no price
    base = table[table.setting == "Baseline"].iloc[0]
    assert base.cost_usd_total == pytest.approx(0.12) and base.usd_known


def test_error_summary_and_filter():
    df = grid()
    errs = analysis.error_summary(df)
    assert errs.iloc[0].errors == 1 and "RateLimited" in errs.iloc[0].example
    assert len(analysis.filter_trials(df, strategy=["rr"])) == 13
    assert len(analysis.filter_trials(df, strategy=[])) == len(df)


def test_empty_frames():
    empty = trials([])
    assert analysis.u_curve(empty).empty
    assert analysis.heatmap(empty)[0].empty
    assert analysis.cost_table(empty).empty


PUB = pd.DataFrame(
    [
        (
            "rr2024",
            "Table 7",
            "GPT-4 Turbo",
            "NQ",
            "Baseline",
            10000,
            None,
            None,
            0,
            None,
            "fuzzy_match_pct",
            60.0,
        ),
        (
            "rr2024",
            "Table 7",
            "GPT-4 Turbo",
            "NQ",
            "Baseline",
            10000,
            None,
            None,
            10000,
            None,
            "fuzzy_match_pct",
            68.0,
        ),
        (
            "rr2024",
            "Table 7",
            "GPT-4 Turbo",
            "NQ",
            "Baseline",
            20000,
            None,
            None,
            0,
            None,
            "fuzzy_match_pct",
            60.0,
        ),
        (
            "liu2023",
            "Table 5",
            "GPT-3.5-Turbo",
            "NaturalQuestions-Open",
            "multi-document QA",
            None,
            10,
            None,
            None,
            0,
            "accuracy_pct",
            76.8,
        ),
    ],
    columns=[
        "source",
        "table",
        "model",
        "dataset",
        "method",
        "doc_length_tokens",
        "n_documents",
        "chunk_size_tokens",
        "answer_position_tokens",
        "gold_index",
        "metric",
        "value",
    ],
)


def test_published_overlay_tokens_and_fraction():
    over = overlays.overlay_candidates(PUB, grid())
    assert set(over.length) == {10000}
    assert list(over.x) == [0, 10000]
    assert over.label.iloc[0].startswith("published (rr2024, Table 7, GPT-4 Turbo")
    frac = grid().assign(position=lambda d: d.position / 10000)
    assert list(overlays.overlay_candidates(PUB, frac).x) == [0.0, 1.0]


def test_published_index_curves():
    curves = overlays.published_index_curves(PUB)
    assert curves.iloc[0]["mean"] == pytest.approx(0.768)
    assert curves.iloc[0].label == "published (liu2023, Table 5, GPT-3.5-Turbo, 10 documents)"


def test_with_setting_labels_each_row_as_setting_label_does():
    """with_setting labels once per distinct strategy and params: the same labels as row by row, for
    params as JSON text, dicts, empty, broken JSON, None and NaN, and strategies of other types."""
    rows = [
        ("rr", '{"r": 500, "k": 3}'),
        ("rr", '{"k": 3, "r": 500}'),
        ("rr", {"r": 500, "k": 3}),
        ("baseline", "{}"),
        ("baseline", ""),
        ("baseline", None),
        ("baseline", float("nan")),
        ("reprompt", "{not json"),
        ("chunked-rr", {"c": 20000, "k": [1, 2]}),
        (7, '{"x": 1}'),
        ("rr", '{"r": 500, "k": 3}'),
        ("rr", {"r": 1000, "k": 3}),
    ]
    df = pd.DataFrame(rows * 3, columns=["strategy", "params"])
    got = sweeps.with_setting(df)["setting"].tolist()
    assert got == [sweeps.setting_label(r) for _, r in df.iterrows()]
    assert got[:3] == ["R&R · r=500, k=3"] * 3 and got[11] == "R&R · r=1,000, k=3"
    assert sweeps.with_setting(df.iloc[0:0])["setting"].tolist() == []
