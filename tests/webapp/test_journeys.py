"""The three journeys, as AppTests: every curve says whose it is; a browser's own sweep comes first in
Compare and the planner talks about the recommendation's pair; sweeps take lists and leave the app as
TOML and a command; app sweeps never write into a name someone else owns; the local model's speed is
measured, not assumed."""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from components.providers.base import ModelSpec
from tests.webapp.runs_fixture import fill
from webapp.services import jobs, sharing
from webapp.services.models import Choice, local_status

ROOT = Path(__file__).resolve().parents[2]
PAGE = {p: str(ROOT / "webapp" / p / "page.py") for p in ("results", "compare", "experiments")}
APP = str(ROOT / "webapp" / "app.py")
SHIPPED = ROOT / "sample_docs" / "runs"
COOKIE = "browser-of-test-journeys"


@pytest.fixture
def db(tmp_path, monkeypatch):
    path = tmp_path / "runs" / "litm.sqlite"
    monkeypatch.setenv("LITM_DB", str(path))
    monkeypatch.setenv("LITM_SHIPPED_RUNS", str(tmp_path / "none"))
    monkeypatch.setattr(
        sharing, "_cookie", lambda: COOKIE
    )  # a browser of its own: adopts no other test's work
    yield path
    jobs.stop_all(10)


def run(page: str, at: AppTest | None = None) -> AppTest:
    at = AppTest.from_file(PAGE[page], default_timeout=120) if at is None else at
    at.run()
    assert not at.exception, at.exception
    return at


def legend_names(at: AppTest) -> list[list[str]]:
    out = []
    for chart in at.get("plotly_chart"):
        data = json.loads(chart.proto.spec)["data"]
        out.append([t.get("name", "") for t in data if t.get("showlegend") is not False and t.get("name")])
    return out


def test_every_shipped_run_series_in_results_names_its_model(tmp_path, monkeypatch):
    monkeypatch.setenv("LITM_DB", str(tmp_path / "runs.sqlite"))
    monkeypatch.setenv("LITM_SHIPPED_RUNS", str(SHIPPED))
    at = run("results")
    assert at.radio(key="res_u_axis").value == "gold_index"  # opens on the shipped LITM runs
    for axis in ("gold_index", "position"):
        if axis == "position":  # every shipped run: the facts run has token positions
            at.multiselect(key="res_sweeps").set_value([]).run()
            at.radio(key="res_u_axis").set_value(axis).run()
        assert not at.exception
        # the U-curve tab's chart (the multi-question view of the shipped run, folded, has charts of its own)
        u = [
            i
            for i, c in enumerate(at.get("plotly_chart"))
            if re.search(
                r"by answer position|by the gold document", json.dumps(json.loads(c.proto.spec)["layout"])
            )
        ]
        assert u, "no U-curve chart"
        names = legend_names(at)[u[0]]
        ours = [n for n in names if not re.search(r"\((19|20)\d\d\)", n)]  # the papers' end in their year
        assert ours, names
        assert all("Qwen2.5 Coder 0.5B" in n and "this app" in n and "per point" in n for n in ours), names
        spec = json.loads(at.get("plotly_chart")[u[0]].proto.spec)["layout"]
        assert "Qwen2.5 Coder 0.5B" in spec["title"]["subtitle"]["text"]  # the note, inside the figure


def test_app_sweeps_never_take_a_name_someone_else_owns(db):
    fill(db, name="teacher's run")  # made with `litm sweep`: no owner
    fill(db, name="their run", seed=1)
    with sqlite3.connect(db) as c:
        c.execute("UPDATE sweeps SET owner = 'aaaaaaaaaaaaaaaa.bbbbbbbbbbbbbbbb' WHERE name = 'their run'")
    for name in ("teacher's run", "their run"):
        with pytest.raises(ValueError, match="exists and is"):
            jobs.check_name(db, name, "cccccccccccccccc.dddddddddddddddd")
    jobs.check_name(db, "a new name", "cccccccccccccccc.dddddddddddddddd")
    jobs.check_name(db, "their run", "eeeeeeeeeeeeeeee.bbbbbbbbbbbbbbbb")  # the same browser, another tab
    at = AppTest.from_file(PAGE["experiments"], default_timeout=120)
    at.session_state["choice"] = Choice(ModelSpec("fake", "fake-model"), None)
    at.session_state["exp_source"] = "Generated"
    at.session_state["exp_kind"] = "kv"
    at.session_state["exp_gen_n"] = 2
    at.session_state["exp_strategies"] = ["baseline"]
    at.session_state["exp_name"] = "teacher's run"
    run("experiments", at)
    at.button(key="exp_run").click().run()
    assert any("exists and is the command line" in e.value.replace("\\", "") for e in at.error), at.error
    assert len(sqlite3.connect(db).execute("SELECT * FROM trials").fetchall()) == 2 * 108  # nothing added


def test_parameters_take_lists_and_a_sweep_leaves_as_toml_and_a_command(db):
    at = AppTest.from_file(PAGE["experiments"], default_timeout=120)
    at.session_state["exp_source"] = "Generated"
    at.session_state["exp_kind"] = "kv"
    at.session_state["exp_gen_n"] = 3
    at.session_state["exp_n_tasks"] = 3
    at.session_state["exp_lengths"] = [1000]
    at.session_state["exp_positions"] = [0.0, 1.0]
    at.session_state["exp_strategies"] = ["reprompt"]
    at.session_state["exp_param_r"] = [200]
    run("experiments", at)
    one = {m.label: m.value for m in at.metric}["Trials"]
    at.multiselect(key="exp_param_r").set_value([200, 500]).run()
    assert {m.label: m.value for m in at.metric}["Trials"] == str(2 * int(one))  # r swept: twice the trials
    codes = [c.value for c in at.code]
    toml = next(c for c in codes if c.startswith("# "))
    assert "[sweep]" in toml and "r = [" in toml and "200" in toml and "500" in toml
    import tomllib

    parsed = tomllib.loads(toml)["sweep"]
    assert parsed["params"]["r"] == [200, 500] and parsed["strategies"] == ["reprompt"]
    assert any(c.startswith("litm sweep ") and c.endswith(str(db)) for c in codes), codes


def test_past_sweeps_are_formatted_and_give_their_toml(db):
    fill(db, name="cli sweep")
    at = run("experiments")
    past = next(d.value for d in at.dataframe if "state" in d.value.columns)
    assert list(past["trials"]) == ["108"] and list(past["dollars"])[0].startswith("$")
    assert "None" not in past.to_string() and "nan" not in past.to_string()


def my_sweep(db: Path, name: str, model: str, seed: int) -> None:
    fill(db, name=name, model=model, seed=seed)
    browser = hashlib.sha256(b"litm-browser:" + COOKIE.encode()).hexdigest()[:16]
    with sqlite3.connect(db) as c:
        c.execute(
            "UPDATE sweeps SET owner = ?, created = created + 100 WHERE name = ?",
            (f"{'f' * 16}.{browser}", name),
        )


def test_compare_opens_on_this_browsers_latest_sweep_and_keeps_arms(db):
    fill(db, name="cli sweep")  # someone's, listed first
    my_sweep(db, "my sweep", "my-model", seed=3)
    at = run("compare")  # a new tab: no ?run= link
    assert at.multiselect(key="cmp_sweeps").value == ["your runs#2"]
    arms = at.multiselect(key="cmp_arms").value
    assert len(arms) >= 2 and all(a.endswith("my-model") for a in arms)
    at.multiselect(key="cmp_sweeps").set_value(["your runs#1"]).run()
    arms = at.multiselect(key="cmp_arms").value
    assert len(arms) >= 2 and all(a.endswith("fake-model") for a in arms)  # its own arms, not an empty list
    # the planner's pair is the one the recommendation names
    rec = at.info[0].value.replace("\\", "")
    pair = at.selectbox(key="cmp_pair").value.split("  vs  ")
    assert all(a in rec for a in pair), (pair, rec)


@pytest.mark.skipif(not local_status()[0], reason="the bundled local model is not installed")
def test_the_sidebar_gives_the_local_models_measured_speed(tmp_path, monkeypatch):
    monkeypatch.setenv("LITM_DB", str(tmp_path / "runs.sqlite"))
    monkeypatch.setenv("LITM_WORKER_DIR", str(tmp_path / "own-worker"))  # no earlier test's timing
    monkeypatch.setenv("LITM_SHIPPED_RUNS", str(SHIPPED))
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert not at.exception
    caption = " ".join(c.value for c in at.sidebar.caption).replace("\\", "")
    # measured on another machine (the shipped runs): said so, never "on this machine it reads"
    assert "not measured yet" in caption and "on the machine that made them" in caption
    assert "On this machine it reads" not in caption
    assert "10-20 s" not in caption
