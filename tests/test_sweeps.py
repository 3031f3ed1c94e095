"""Sweep config validation, the plan (order and keys), and the estimate."""

import pytest

from components.run.config import SweepConfig
from components.run.estimate import estimate
from components.run.plan import plan
from tests.support import facts_file, sweep_toml


def cfg(tmp_path, **over):
    s = {"name": "demo", "tasks": str(facts_file(tmp_path, 3)), "lengths": [300, 600], "positions": [0.0, 1.0],
         "strategies": ["baseline", "icr"], "params": {"k": 2},
         "models": [{"provider": "fake", "model": "fake"}]}
    s.update(over)
    return SweepConfig.from_dict({"sweep": s}, base_dir=str(tmp_path))


def test_toml_example_parses(tmp_path):
    path = sweep_toml(tmp_path, base_url="http://127.0.0.1:9/v1",
                      budget="[sweep.budget]\nmax_calls = 1000\nmax_usd = 2.0", strategies=("baseline", "reprompt", "icr", "rr"),
                      params="{ r = 1000, k = 3 }", extra_model='api_key_env = "MY_KEY"\nrequests_per_minute = 600')
    c = SweepConfig.from_toml(path)
    assert c.name == "demo" and c.lengths == (600, 1200) and c.max_calls == 1000 and c.max_usd == 2.0
    assert c.models[0].api_key_env == "MY_KEY" and c.models[0].requests_per_minute == 600
    assert c.params_for("baseline") == {} and c.params_for("rr") == {"r": 1000, "k": 3}
    assert c.tasks_path.exists()
    assert "MY_KEY" in str(c.to_dict()) and "base_dir" not in c.to_dict()


@pytest.mark.parametrize("over, message", [
    ({"strategies": ["baseline", "nope"]}, "unknown strategy 'nope'"),
    ({"positions": [0.5, -1]}, "position must be 0 or more"),
    ({"lengths": []}, "lengths must be a non-empty list"),
    ({"lengths": [100, 0]}, "every length must be a positive whole number"),
    ({"params": {"k": 0}}, "k must be a positive whole number"),
    ({"params": {"kk": 1000}}, "no strategy takes kk"),
    ({"colour": "red"}, "unknown key(s) colour"),
    ({"models": [{"provider": "openai", "model": "gpt-4o", "api_key": "sk-x"}]}, "never put an API key"),
    ({"models": [{"provider": "openai-compatible", "model": "m"}]}, "needs base_url"),
    ({"models": [{"provider": "acme", "model": "m"}]}, "provider must be one of"),
    ({"models": []}, "at least one"),
    ({"concurrency": 0}, "concurrency must be a positive whole number"),
])
def test_validation_messages(tmp_path, over, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        cfg(tmp_path, **over)


def test_bad_toml_is_one_clear_error(tmp_path):
    p = tmp_path / "x.toml"
    p.write_text("[sweep\nname=")
    with pytest.raises(ValueError, match="not valid TOML"):
        SweepConfig.from_toml(p)


def test_plan_order_and_stable_keys(tmp_path):
    c = cfg(tmp_path)
    specs = plan(c)
    assert len(specs) == 3 * 2 * 2 * 2
    assert [s.strategy for s in specs[:12]] == ["baseline"] * 12
    assert [s.task.id for s in specs[:3]] == sorted(s.task.id for s in specs[:3])
    again = plan(cfg(tmp_path))
    assert [s.key for s in specs] == [s.key for s in again]
    assert len({s.key for s in specs}) == len(specs)
    changed = plan(cfg(tmp_path, params={"k": 3}))
    assert specs[0].key == changed[0].key  # baseline takes no k
    assert specs[-1].key != changed[-1].key


def test_estimate_counts_stages(tmp_path):
    c = cfg(tmp_path)
    est = estimate(c)
    assert est.trials == 24
    assert est.calls == 12 * 1 + 12 * 2  # ICR: retrieval + answer
    assert est.input_tokens > 12 * 300 and est.output_tokens > 0
    assert est.usd == 0.0 and "estimate" in est.note
    paid = estimate(cfg(tmp_path, models=[{"provider": "openai", "model": "gpt-4o"}]))
    assert paid.usd > 0
    unknown = estimate(cfg(tmp_path, models=[{"provider": "openai", "model": "gpt-unknown"}]))
    assert unknown.usd is None and unknown.unpriced == ("openai:gpt-unknown",)
    assert any("cost" in line for line in est.lines())
