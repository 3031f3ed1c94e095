"""services/views.py: how a kept result is keyed, copied and written to the cache folder."""

from __future__ import annotations

import pandas as pd
import pytest

from webapp.services import views


@pytest.fixture(autouse=True)
def empty_keep(monkeypatch, tmp_path):
    monkeypatch.setenv("LITM_CACHE", str(tmp_path / "cache"))
    views.clear()
    yield
    views.clear()


def frame(n=300, settled=True):
    df = pd.DataFrame({"a": range(n), "b": [i % 3 for i in range(n)]})
    views.stamp(df, ("runs", ("store", 1)), settled)
    return df


def test_rows_and_columns_of_a_stamped_frame_are_its_key_and_results_are_copies():
    calls = []

    @views.kept
    def total(df, column):
        calls.append(column)
        return df[[column]].assign(twice=df[column] * 2)

    df = frame()
    one = total(df[df["b"] == 1], "a")
    one.loc[one.index[0], "twice"] = -1  # a caller's change to its copy ...
    two = total(df[df["b"] == 1], "a")
    assert calls == ["a"] and two["twice"].iloc[0] != -1  # ... reaches no other caller
    total(df[df["b"] == 2], "a")  # other rows
    total(df[df["b"] == 1], "b")  # another argument
    assert calls == ["a", "a", "b"]
    renamed = df[["b"]].set_axis(["a"], axis=1)  # other values under the same name: keyed by content
    assert views.key_of(views.fresh(renamed)) != views.key_of(df[["a"]])


def test_a_kept_record_holds_copies_of_its_frames_and_stamps_them():
    """A result record (report.compare.Comparison is one) is copied as a dict is: its frames shallowly,
    so a page's change to one reaches no other caller; and they carry the result's key."""
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class Result:
        table: pd.DataFrame
        name: str

    @views.kept
    def result(df):
        return Result(df.assign(c=df["a"] + 1), "n")

    df = frame()
    one = result(df)
    one.table.loc[one.table.index[0], "c"] = -1
    two = result(df)
    assert two.table["c"].iloc[0] == 1 and two.name == "n" and two.table is not one.table
    assert views.key_of(two.table) == views.key_of(one.table)  # stamped: keyed by the result's key


def test_a_large_frame_without_a_version_is_computed_every_time():
    calls = []

    @views.kept
    def count(df):
        calls.append(1)
        return len(df)

    big = pd.DataFrame({"a": range(views.SMALL + 1)})
    assert count(big) == count(big) == views.SMALL + 1 and len(calls) == 2


def test_statistics_of_settled_stores_go_to_the_cache_folder_and_a_sweep_in_progress_does_not(tmp_path):
    @views.kept(disk=True)
    def mean(df):
        return float(df["a"].mean())

    assert mean(frame(settled=False)) == 149.5
    assert not (tmp_path / "cache").exists()  # a store being written: not worth a file per version
    views.clear()  # (kept in memory meanwhile)
    assert mean(frame()) == 149.5
    assert len(list((tmp_path / "cache").glob("*.pickle"))) == 1
    views.clear()  # a new process reads it
    assert mean(frame()) == 149.5 and views.counts()["read"] == 1 and views.counts()["computed"] == 0


def test_the_cache_folder_keeps_the_newest_files(monkeypatch, tmp_path):
    monkeypatch.setattr(views, "KEEP_FILES", 3)

    @views.kept(disk=True)
    def first(df, n):
        return int(df["a"].iloc[0]) + n

    for n in range(6):
        first(frame(), n)
    assert len(list((tmp_path / "cache").glob("*.pickle"))) == 3
