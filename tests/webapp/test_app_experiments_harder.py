"""AppTest of the Experiments page with a harder generated kind: its swept parameter (hops, distance,
near-miss distractors) and its literal control are offered, and the sweep's task file is named by them."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from components.providers.base import ModelSpec
from webapp.services.models import Choice

PAGE = str(Path(__file__).resolve().parents[2] / "webapp" / "experiments" / "page.py")


def page(tmp_path, monkeypatch, kind: str, **state) -> AppTest:
    monkeypatch.setenv("LITM_DB", str(tmp_path / "runs" / "litm.sqlite"))
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.session_state["choice"] = Choice(ModelSpec("local", "qwen2.5-coder-0.5b-instruct"), None)
    for k, v in {
        "exp_source": "Generated",
        "exp_kind": kind,
        "exp_gen_n": 3,
        "exp_n_tasks": 3,
        "exp_positions": [0.0, 1.0],
        "exp_strategies": ["baseline"],
        **state,
    }.items():
        at.session_state[k] = v
    at.run()
    assert not at.exception, at.exception
    return at


def tasks_line(at) -> str:
    (line,) = [x for c in at.code for x in c.value.splitlines() if x.startswith("tasks = ")]
    return line


@pytest.mark.parametrize(
    "kind,state,named",
    [
        ("latent", {"exp_gen_param_hops": 2, "exp_gen_literal": True}, "latent-literal-hops2-n3-seed0-"),
        ("spaced", {"exp_gen_param_distance": 300}, "spaced-distance300-n3-seed0-"),
        ("near-miss", {}, "near-miss-nearmisses4-n3-seed0-"),  # the generator's default
    ],
)
def test_a_harder_kind_offers_its_parameter_and_control(tmp_path, monkeypatch, kind, state, named):
    at = page(tmp_path, monkeypatch, kind, **state)
    assert not at.error, [e.value for e in at.error]
    assert [t.label for t in at.toggle if t.label == "Its literal control"]
    (param,) = [n for n in at.number_input if n.label.startswith(("hops:", "distance:", "near_misses:"))]
    assert param.value == {"latent": 2, "spaced": 300, "near-miss": 4}[kind]
    assert f"/tasks/{named}" in tasks_line(at)


def test_another_kind_offers_none(tmp_path, monkeypatch):
    at = page(tmp_path, monkeypatch, "kv")
    assert not [t for t in at.toggle if t.label == "Its literal control"]
    assert "/tasks/kv-n3-seed0-" in tasks_line(at)
