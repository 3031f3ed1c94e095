"""Sweep config validation, the plan (order and keys), and the estimate."""

import pytest

from components.run.config import SweepConfig
from components.run.estimate import estimate
from components.run.plan import plan
from tests.support import facts_file, sweep_toml


def cfg(tmp_path, **over):
    s = {
        "name": "demo",
        "tasks": str(facts_file(tmp_path, 3)),
        "lengths": [300, 600],
        "positions": [0.0, 1.0],
        "strategies": ["baseline", "icr"],
        "params": {"k": 2},
        "models": [{"provider": "fake", "model": "fake"}],
    }
    s.update(over)
    return SweepConfig.from_dict({"sweep": s}, base_dir=str(tmp_path))


def test_toml_example_parses(tmp_path):
    path = sweep_toml(
        tmp_path,
        base_url="http://127.0.0.1:9/v1",
        budget="[sweep.budget]\nmax_calls = 1000\nmax_usd = 2.0",
        strategies=("baseline", "reprompt", "icr", "rr"),
        params="{ r = 1000, k = 3 }",
        extra_model='api_key_env = "MY_KEY"\nrequests_per_minute = 600',
    )
    c = SweepConfig.from_toml(path)
    assert c.name == "demo" and c.lengths == (700, 1200) and c.max_calls == 1000 and c.max_usd == 2.0
    assert c.models[0].api_key_env == "MY_KEY" and c.models[0].requests_per_minute == 600
    assert c.params_for("baseline") == [{}] and c.params_for("rr") == [{"r": 1000, "k": 3}]
    assert c.tasks_path.exists()
    assert "MY_KEY" in str(c.to_dict()) and "base_dir" not in c.to_dict()


@pytest.mark.parametrize(
    "over, message",
    [
        ({"strategies": ["baseline", "nope"]}, "unknown strategy 'nope'"),
        ({"positions": [0.5, -1]}, "position must be 0 or more"),
        ({"lengths": []}, "lengths must be a non-empty list"),
        ({"lengths": [100, 0]}, "every length must be a positive whole number"),
        ({"params": {"k": 0}}, "params (icr): k must be a positive whole number, got 0"),
        ({"params": {"k": [2, 0]}}, "params (icr): k must be a positive whole number, got 0"),
        ({"params": {"k": [2, 2]}}, "params: k lists a value twice"),
        ({"params": {"k": []}}, "params: k is an empty list"),
        ({"params": {"k": 2.5}}, "k must be a positive whole number, got 2.5"),
        ({"strategies": ["kv"], "params": {"qac": 2}}, "params (kv): qac must be 0 or 1, got 2"),
        ({"strategies": ["kv"], "params": {"qac": -1}}, "params (kv): qac must be 0 or 1, got -1"),
        ({"documents": [10]}, "give either lengths and positions"),
        ({"lengths": None, "positions": None, "documents": [10]}, "gold_index must be a non-empty list"),
        (
            {"lengths": None, "positions": None, "documents": [0], "gold_index": [0]},
            "every number of documents must be a positive whole number",
        ),
        (
            {"lengths": None, "positions": None, "documents": [5], "gold_index": [1.5]},
            "a gold_index must be a whole",
        ),
        ({"params": {"kk": 1000}}, "no strategy takes kk"),
        ({"colour": "red"}, "unknown key(s) colour"),
        ({"models": [{"provider": "openai", "model": "gpt-4o", "api_key": "sk-x"}]}, "never put an API key"),
        ({"models": [{"provider": "openai-compatible", "model": "m"}]}, "needs base_url"),
        ({"models": [{"provider": "acme", "model": "m"}]}, "provider must be one of"),
        ({"models": []}, "at least one"),
        ({"concurrency": 0}, "concurrency must be a positive whole number"),
    ],
)
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


def test_estimate_tells_parameter_settings_apart(tmp_path):
    # reprompt every 100 tokens puts reminders in a 600-token document; every 100,000 tokens puts none
    def tokens(r):
        return estimate(
            cfg(tmp_path, lengths=[600], positions=[0.5], strategies=["reprompt"], params={"r": r})
        ).input_tokens

    both = estimate(
        cfg(tmp_path, lengths=[600], positions=[0.5], strategies=["reprompt"], params={"r": [100, 100000]})
    )
    assert tokens(100) > tokens(100000)
    assert both.input_tokens == tokens(100) + tokens(100000)


def test_estimate_counts_stages(tmp_path):
    c = cfg(tmp_path, lengths=[400, 600])  # room for the gold page and a distractor: k = 2 pages to retrieve
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


@pytest.mark.parametrize("qac", [0, 1, [0, 1]])
def test_param_bounds_are_the_params_own(tmp_path, qac):
    """kv's qac is a 0/1 switch: both ends are accepted (it was refused at 0 once)."""
    c = cfg(tmp_path, strategies=["kv"], params={"qac": qac})
    assert c.params_for("kv") == [{"qac": v} for v in (qac if isinstance(qac, list) else [qac])]


def test_a_list_sweeps_a_param_and_each_setting_is_an_arm(tmp_path):
    c = cfg(tmp_path, strategies=["baseline", "rr"], params={"r": [200, 400], "k": [1, 2]})
    assert c.params_for("rr") == [
        {"r": 200, "k": 1},
        {"r": 200, "k": 2},
        {"r": 400, "k": 1},
        {"r": 400, "k": 2},
    ]
    specs = plan(c)
    assert len(specs) == 3 * 4 * (1 + 4)  # tasks x cells x (baseline + 4 rr settings)
    assert len({s.key for s in specs}) == len(specs)
    assert {tuple(sorted(s.params.items())) for s in specs if s.strategy == "rr"} == {
        (("k", 1), ("r", 200)),
        (("k", 2), ("r", 200)),
        (("k", 1), ("r", 400)),
        (("k", 2), ("r", 400)),
    }


def test_documents_sweep_cells_and_order(tmp_path):
    from components.core.cells import Cell
    from components.run.plan import cells, left_out

    c = cfg(
        tmp_path,
        lengths=None,
        positions=None,
        documents=[3, 5],
        gold_index=[0, -1, 4],
        strategies=["litm"],
        params={},
    )
    assert cells(c) == [
        Cell(documents=3, gold_index=0),
        Cell(documents=3, gold_index=2),
        Cell(documents=5, gold_index=0),
        Cell(documents=5, gold_index=4),
    ]
    assert left_out(c) == [(3, 4)]
    specs = plan(c)
    assert len(specs) == 3 * 4 and {s.documents for s in specs} == {3, 5}
    assert all(s.length is None and s.position is None for s in specs)
    back = SweepConfig.from_stored(c.to_dict())
    assert back.documents == (3, 5) and back.gold_index == (0, -1, 4) and back.lengths == ()
    assert [s.key for s in plan(back)] == [s.key for s in specs]


def test_estimate_builds_each_document_once_however_few_are_kept(tmp_path, monkeypatch):
    from functools import partial

    import components.run.plan as plan_module

    built = []
    real = plan_module.trial_document
    monkeypatch.setattr(
        plan_module, "trial_document", lambda spec, *a: built.append(spec.document_key) or real(spec, *a)
    )
    monkeypatch.setattr(plan_module, "Documents", partial(plan_module.Documents, keep=2))
    c = cfg(
        tmp_path, strategies=["baseline", "reprompt"], params={"r": [200, 400]}
    )  # 12 cells, 3 settings each
    est = estimate(c)
    assert est.trials == 36 and len(built) == len(set(built)) == 12


def test_a_bundled_task_file_is_stored_by_its_bare_name_and_found_from_any_folder(tmp_path, monkeypatch):
    from components.core.resources import sample_path

    monkeypatch.chdir(tmp_path)
    c = SweepConfig.from_dict(
        {
            "sweep": {
                "name": "b",
                "tasks": "nq-open-30docs.jsonl.gz",
                "documents": [5],
                "gold_index": [0],
                "strategies": ["litm"],
                "models": [{"provider": "openai", "model": "gpt-4o-mini"}],
            }
        }
    )
    assert c.tasks_path == sample_path("tasks", "nq-open-30docs.jsonl.gz")
    assert c.to_dict()["tasks"] == "nq-open-30docs.jsonl.gz"  # no path of this machine in a stored sweep
    assert SweepConfig.from_stored(c.to_dict()).load_tasks() == c.load_tasks()
    own = tmp_path / "nq-open-30docs.jsonl.gz"  # a file of that name in the current folder comes first
    own.write_bytes(b"")
    assert c.tasks_path == own.relative_to(tmp_path) and c.to_dict()["tasks"] == str(own)
    mine = tmp_path / "mine.jsonl"
    mine.write_text('{"id": "q", "question": "who?", "answers": ["x"], "ctxs": []}\n')
    assert SweepConfig.from_dict({"sweep": {**c.to_dict(), "tasks": "mine.jsonl"}}).to_dict()["tasks"] == str(
        mine
    )
