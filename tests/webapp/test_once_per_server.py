"""What every student of a classroom sees the same is computed once per server process, not per session:
the shipped run stores read and labelled once (services/stores.py), a shared figure built once and
copied for each caller (services/figures.py once), a chart themed once per content and theme settings
(ui/charts.py themed). Each caller still gets objects of its own: changing them changes nothing kept.
The classroom bench (`python -m bench classroom`) measures what this saves."""

from __future__ import annotations

import plotly.graph_objects as go
import pytest

from components.report import sweeps as sweep_labels
from webapp.services import figures, stores
from webapp.ui import charts


@pytest.fixture(autouse=True)
def fresh_caches():
    for f in (stores._labelled, stores._shipped, charts._themed):
        f.clear()
    yield
    for f in (stores._labelled, stores._shipped, charts._themed):
        f.clear()


def test_shipped_stores_are_labelled_once_for_every_viewer(monkeypatch, tmp_path):
    monkeypatch.setenv("LITM_DB", str(tmp_path / "none.sqlite"))  # no user store: the shipped runs only
    calls = []
    real = sweep_labels.combine_stores

    def counting(loaded):
        calls.append(len(loaded))
        return real(loaded)

    monkeypatch.setattr(stores, "combine_stores", counting)
    n_stores = sum(shipped for _, shipped, _ in stores.sources())
    assert n_stores >= 2
    first, sweeps1, problems = stores.load_all(stores.Viewer("aaaaaaaa", "b1"))
    assert problems == [] and len(first) and len(sweeps1) >= n_stores
    assert len(calls) == n_stores  # one labelling per store, for the first viewer
    second, sweeps2, _ = stores.load_all(stores.Viewer("cccccccc", "b2"))
    third, _, _ = stores.load_all(stores.Viewer("dddddddd", "b3"))
    assert len(calls) == n_stores  # the next viewers read nothing again
    before = first["sweep_key"].tolist()
    second["sweep_key"] = "changed"  # a page's change to its frame (copy-on-write) ...
    second.loc[second.index[0], "store"] = "changed too"
    assert third["sweep_key"].tolist() == before  # ... reaches no other visitor
    assert "changed too" not in set(stores.load_all(stores.Viewer("eeeeeeee"))[0]["store"])


def test_a_shared_figure_is_built_once_and_each_caller_gets_a_copy_of_its_own():
    built = []

    @figures.once
    def curve(n: int):
        built.append(n)
        fig = go.Figure(go.Scatter(x=list(range(n)), y=list(range(n)), name="published"))
        return fig, "note", {"published": "a paper"}

    a, note, names = curve(3)
    a.update_layout(title_text="mine")  # what a page does to its copy (presenter mode)
    names["published"] = "changed"
    b, _, names_b = curve(3)
    assert built == [3]
    assert b is not a and b.layout.title.text is None and names_b == {"published": "a paper"}
    assert list(b.data[0].x) == [0, 1, 2]
    curve(4)
    assert built == [3, 4]


def test_a_chart_is_themed_once_per_content_and_theme_settings(monkeypatch):
    themed = []
    real = figures.theme

    def counting(fig, presenter=False, series=True):
        themed.append(presenter)
        return real(fig, presenter=presenter, series=series)

    monkeypatch.setattr(figures, "theme", counting)

    def fig():
        return go.Figure(go.Scatter(x=[0, 1, 2], y=[0.5, 0.3, 0.6], name="litm"))

    one = charts.themed(fig(), False, True, "measured by this app", {"litm": "litm · n=50"}, None)
    two = charts.themed(fig(), False, True, "measured by this app", {"litm": "litm · n=50"}, None)
    assert themed == [False] and two is one  # the second visitor draws the kept figure
    assert one.data[0].name == "litm · n=50" and "measured by this app" in one.layout.title.subtitle.text
    big = charts.themed(fig(), True, True, "measured by this app", {"litm": "litm · n=50"}, None)
    assert themed == [False, True] and big is not one and big.layout.font.size > one.layout.font.size
    other = fig()
    other.data[0].y = [0.1, 0.2, 0.3]  # another figure: themed on its own
    charts.themed(other, False, True, "measured by this app", {"litm": "litm · n=50"}, None)
    assert themed == [False, True, False]


def test_sessions_asking_at_once_theme_a_chart_once(monkeypatch):
    """A class arriving at a server that has just started: the first session themes, the others wait."""
    import threading
    import time

    themed = []
    real = figures.theme

    def slow(fig, presenter=False, series=True):
        themed.append(1)
        time.sleep(0.3)
        return real(fig, presenter=presenter, series=series)

    monkeypatch.setattr(figures, "theme", slow)
    out = []

    def student():
        fig = go.Figure(go.Scatter(x=[0, 1], y=[0.4, 0.6], name="litm"))
        out.append(charts.themed(fig, False, True, "note", {}, None))

    threads = [threading.Thread(target=student) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(themed) == 1 and len(out) == 6 and all(o is out[0] for o in out)


def test_the_texts_of_a_page_of_trials_are_read_once(monkeypatch, tmp_path):
    """Every student opening Results sees the same first page of the trial table: its texts are read from
    the store once, and each student's rows are its own."""
    from components.run import reader

    monkeypatch.setenv("LITM_DB", str(tmp_path / "none.sqlite"))
    stores._texts.clear()
    reads = []
    real = reader.whole_trials

    def counting(path, ids, readonly=True):
        reads.append(len(list(ids)))
        return real(path, ids, readonly=readonly)

    monkeypatch.setattr(reader, "whole_trials", counting)
    trials, _, _ = stores.load_all(stores.Viewer("aaaaaaaa"))
    page = trials.head(20)
    one, two = stores.whole(page), stores.whole(page)
    assert reads and sum(reads) <= 20 and len(reads) == page["store_path"].nunique()
    assert len(one) == 20 and "question" in one and one["question"].notna().all()
    one.loc[one.index[0], "question"] = "changed"
    assert stores.whole(page).loc[page.index[0], "question"] != "changed"
    assert two["question"].tolist() == stores.whole(page)["question"].tolist()


# ------------------------------------------------------------------ Results and Compare (services/views.py)


def _visit(page: str):
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(
        str(Path(__file__).resolve().parents[2] / "webapp" / page / "page.py"), default_timeout=120
    )
    at.run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    return at


@pytest.mark.parametrize("page", ["results", "compare"])
def test_a_second_session_s_default_view_rebuilds_no_figure_and_no_statistic(page, monkeypatch, tmp_path):
    """Every student's default Results and Compare view is the same: the first session computes its
    statistics (curves, shapes, McNemar and Holm, the verdict) and builds and themes its figures; the
    second gets them all kept: nothing computed, no figure built or themed."""
    from plotly.basedatatypes import BaseFigure

    from webapp.services import views

    monkeypatch.setenv(
        "LITM_DB", str(tmp_path / "none.sqlite")
    )  # the shipped runs only, as a class sees them
    monkeypatch.setenv("LITM_CACHE", str(tmp_path / "cache"))
    views.clear()
    themed, built = [], []
    real_theme, real_init = figures.theme, BaseFigure.__init__

    def theme(fig, presenter=False, series=True):
        themed.append(1)
        return real_theme(fig, presenter=presenter, series=series)

    def init(self, *args, **kwargs):
        built.append(type(self).__name__)
        return real_init(self, *args, **kwargs)

    monkeypatch.setattr(figures, "theme", theme)
    monkeypatch.setattr(BaseFigure, "__init__", init)
    first = _visit(page)
    computed = views.counts()["computed"]
    assert computed > 5 and themed and built  # the first session did the work
    assert first.get("plotly_chart")
    themed.clear(), built.clear()
    second = _visit(page)
    assert views.counts()["computed"] == computed  # no statistic, table or figure computed again
    assert themed == [] and built == []  # no figure built, copied or themed
    assert [c.proto.spec for c in second.get("plotly_chart")] == [
        c.proto.spec for c in first.get("plotly_chart")
    ]


def test_a_new_server_process_reads_the_heavy_statistics_from_the_cache_folder(monkeypatch, tmp_path):
    """Bootstrap bands, shape tests, McNemar and Holm are written beside the stores' other caches (never
    under sample_docs/) and read, not computed, by the next server process (its in-memory keep empty)."""
    from components.report import compare as report_compare
    from components.report import shape as report_shape
    from webapp.services import views

    monkeypatch.setenv("LITM_DB", str(tmp_path / "none.sqlite"))
    monkeypatch.setenv("LITM_CACHE", str(tmp_path / "cache"))
    views.clear()
    _visit("compare")
    _visit("results")
    files = sorted(p.name for p in (tmp_path / "cache").iterdir())
    assert any(f.startswith("compare.compare-") for f in files) and any(
        f.startswith("shape.by_series-") for f in files
    )
    views.clear()  # a new server process: nothing kept in memory
    ran = []
    monkeypatch.setattr(report_shape, "curve_shape", lambda *a, **k: ran.append("shape"))
    monkeypatch.setattr(report_compare, "pairs", lambda *a, **k: ran.append("pairs"))
    _visit("compare")
    _visit("results")
    assert ran == [] and views.counts()["read"] >= 2  # read from the cache folder, not computed
