"""AppTest: Experiments sets repeated samples (temperature and seed) and an LLM judge; the config holds
them and the estimate counts every sample's call and one judge call per trial."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from components.providers.base import ModelSpec
from webapp.services.models import Choice

PAGE = str(Path(__file__).resolve().parents[2] / "webapp" / "experiments" / "page.py")


def calls(at: AppTest) -> int:
    return int(next(m.value for m in at.metric if m.label == "LLM calls").replace(",", ""))


def toml(at: AppTest) -> str:
    return next(c.value for c in at.code if "[sweep]" in c.value)


def test_samples_and_a_judge_reach_the_config_and_the_estimate(tmp_path, monkeypatch):
    monkeypatch.setenv("LITM_DB", str(tmp_path / "runs" / "litm.sqlite"))
    at = AppTest.from_file(PAGE, default_timeout=120)
    for k, v in {
        "exp_source": "Generated",
        "exp_kind": "kv",
        "exp_gen_n": 3,
        "exp_n_tasks": 3,
        "exp_lengths": [1000],
        "exp_positions": [0.0, 1.0],
        "exp_strategies": ["baseline"],
        "choice": Choice(ModelSpec("openai", "gpt-4o-mini"), "sk-test-not-a-key"),
    }.items():
        at.session_state[k] = v
    at.run()
    assert not at.exception and calls(at) == 6  # 3 tasks x 2 positions
    assert "samples = " not in toml(at) and "[sweep.judge]" not in toml(at)
    at.number_input(key="exp_samples").set_value(3).run()
    assert calls(at) == 18 and "samples = 3" in toml(at) and "temperature = 0.7" in toml(at)
    at.toggle(key="exp_judge").set_value(True).run()
    at.text_input(key="exp_judge_model").set_value("gpt-4.1-mini").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    text = toml(at)
    assert 'metric = "judge"' in text and 'model = "gpt-4.1-mini"' in text, text
    assert calls(at) == 36  # 18 answers and 18 judgements
    assert any("18 of the calls are the judge's" in c.value for c in at.caption)
    from components.run.config_rules import RULE

    box = at.number_input(key="exp_samples")
    assert (box.min, box.max) == (RULE["samples"].low, RULE["samples"].high)  # the config's bounds
