"""A sweep config is read by a table of rules, one per key (components.run.config.RULES and MODEL_RULES): the
table covers every key and field, each rule's default is what a config without the key gets, and each bad
value gets its rule's one line, word for word."""

from dataclasses import fields

import pytest

from components.providers.base import ModelSpec
from components.run.config import (
    MODEL_KEYS,
    MODEL_RULES,
    RULE,
    RULES,
    SWEEP_KEYS,
    ModelConfig,
    SweepConfig,
)

BASE = {
    "name": "t",
    "tasks": "tasks.jsonl",
    "lengths": [1000, 2000],
    "positions": [0.0, 0.5, 1.0],
    "strategies": ["baseline"],
    "models": [{"provider": "fake", "model": "m"}],
}
DESIGN_KEYS = {
    "contexts",
    "questions_per_context",
    "n",
}  # read by run.multiq.check_design, the design rule's check


def message(d: dict) -> str:
    with pytest.raises(ValueError) as info:
        SweepConfig.from_dict(d)
    return str(info.value)


def test_every_key_has_a_rule_and_every_field_comes_from_one():
    keys = {rule.key.split(".")[0] for rule in RULES}
    assert keys | DESIGN_KEYS == SWEEP_KEYS
    assert {rule.key for rule in MODEL_RULES} == MODEL_KEYS
    filled = {rule.field for rule in RULES if rule.field} | {"design", *DESIGN_KEYS, "base_dir"}
    assert filled == {f.name for f in fields(SweepConfig)}


def test_a_config_without_a_key_gets_its_rules_default():
    cfg = SweepConfig.from_dict(BASE)
    for rule in RULES:
        if rule.key in BASE or rule.field is None or rule.key in ("documents", "gold_index"):
            continue
        assert getattr(cfg, rule.field) == rule.keep(rule.default), rule.key
    assert cfg.max_retry_after == 60.0 and isinstance(cfg.max_retry_after, float)
    assert (cfg.concurrency, cfg.fail_fast, cfg.seed, cfg.encoding) == (8, 5, 0, "cl100k_base")
    assert (cfg.mode, cfg.measure, cfg.order, cfg.documents, cfg.gold_index) == (
        "live",
        "answer",
        "auto",
        (),
        (),
    )


def test_a_config_round_trips_through_its_rules():
    d = BASE | {
        "n_tasks": 3,
        "concurrency": 2,
        "budget": {"max_usd": 1.5, "max_calls": 10},
        "seed": 7,
        "max_retry_after": 5,
        "fail_fast": 0,
        "max_tokens": 64,
        "order": "plan",
        "name": " spaced ",
    }
    cfg = SweepConfig.from_dict(d)
    assert (cfg.name, cfg.max_usd, cfg.max_calls, cfg.seed, cfg.max_retry_after) == (
        "spaced",
        1.5,
        10,
        7,
        5.0,
    )
    assert SweepConfig.from_dict({"seed": None} | BASE).seed is None
    assert SweepConfig.from_stored(cfg.to_dict()).to_dict() == cfg.to_dict()


P = "sweep config: "


@pytest.mark.parametrize(
    "change, expected",
    [
        ({"name": " "}, "name is missing"),
        ({"tasks": 5}, "tasks (a task file path) is missing"),
        ({"lengths": None}, "lengths must be a non-empty list of token counts, e.g. [2000, 4000]"),
        ({"lengths": [100, 0]}, "every length must be a positive whole number, got 0"),
        ({"positions": "x"}, "positions must be a non-empty list, e.g. [0.0, 0.5, 1.0]"),
        (
            {"lengths": [100], "positions": [5.5]},
            "position 5.5 counts tokens (it is above 1), so it must be a whole number "
            "no larger than the shortest length (100); for a fraction give 0 to 1",
        ),
        (
            {"documents": [10]},
            "give either lengths and positions (tokens, R&R §4.1) or documents and gold_index "
            "(Lost in the Middle §3.1), not both",
        ),
        (
            {"lengths": None, "positions": None, "documents": [10], "gold_index": [True]},
            "a gold_index must be a whole number (0 is the first document, -1 the last), got True",
        ),
        ({"strategies": ["nope"]}, "unknown strategy 'nope'; choose from baseline, ..."),
        ({"strategies": [["baseline"]]}, "unknown strategy ['baseline']; choose from baseline, ..."),
        ({"models": []}, "at least one [[sweep.models]] table is needed"),
        ({"params": [1]}, "params must be a table, e.g. { r = 1000, k = 3 }, got [1]"),
        ({"params": 0}, "params must be a table, e.g. { r = 1000, k = 3 }, got 0"),  # falsy is no table
        ({"params": False}, "params must be a table, e.g. { r = 1000, k = 3 }, got False"),
        ({"params": ""}, "params must be a table, e.g. { r = 1000, k = 3 }, got ''"),
        ({"params": []}, "params must be a table, e.g. { r = 1000, k = 3 }, got []"),
        ({"budget": 0}, "[sweep.budget] must be a table, e.g. { max_usd = 5.0, max_calls = 1000 }"),
        ({"budget": 5}, "[sweep.budget] must be a table, e.g. { max_usd = 5.0, max_calls = 1000 }"),
        ({"budget": {"max_usd": -1}}, "budget.max_usd must be a number of dollars, got -1"),
        ({"budget": {"max_usd": float("nan")}}, "budget.max_usd must be a number of dollars, got nan"),
        ({"budget": {"max_calls": 0}}, "budget.max_calls must be a positive whole number, got 0"),
        ({"encoding": "gpt2"}, "encoding must be one of cl100k_base, o200k_base"),
        ({"seed": 1.5}, "seed must be a whole number, got 1.5"),
        (
            {"max_retry_after": 86401},
            "max_retry_after must be a number of seconds from 0 to 86400, got 86401",
        ),
        (
            {"max_retry_after": 10**400},
            "max_retry_after must be a number of seconds from 0 to 86400, got " + str(10**400),
        ),
        ({"fail_fast": True}, "fail_fast must be a whole number of trials (0: never stop early), got True"),
        ({"n_tasks": 0}, "n_tasks must be a positive whole number, got 0"),
        ({"concurrency": "8"}, "concurrency must be a positive whole number, got '8'"),
        ({"max_tokens": -1}, "max_tokens must be a positive whole number, got -1"),
        ({"mode": "fast"}, "mode must be one of live, batch, got 'fast'"),
        (
            {"measure": ["answer"]},
            "measure must be one of answer, likelihood, both, attention, got ['answer']",
        ),
        ({"order": None}, "order must be one of auto, prefix, plan, got None"),
    ],
)
def test_each_sweep_key_fails_with_its_rules_line(change, expected):
    same(message(BASE | change), expected)


def same(got: str, expected: str) -> None:
    """The message word for word ("..." at the end: it starts so)."""
    assert "\n" not in got
    if expected.endswith("..."):
        assert got.startswith(P + expected[:-3])
    else:
        assert got == P + expected


@pytest.mark.parametrize(
    "change, expected",
    [
        ({"provider": "acme"}, "models[0]: provider must be one of ..."),
        ({"model": ""}, "models[0]: model name is missing"),
        (
            {"provider": "openai-compatible"},
            "models[0]: an openai-compatible model needs base_url (e.g. http://127.0.0.1:8000/v1)",
        ),
        ({"context_window": 0}, "models[0].context_window must be a positive whole number, got 0"),
        (
            {"timeout": "abc"},
            "models[0].timeout must be a number from 0.001 to 86,400 (seconds for one whole answer), "
            "got 'abc'",
        ),
        (
            {"requests_per_minute": 1e-300},
            "models[0].requests_per_minute must be a number from 0.01 to 1,000,000 "
            "(requests per minute), got 1e-300",
        ),
        (
            {"max_retries": 11},
            "models[0].max_retries must be a whole number from 0 to 10 (the retries of one call), got 11",
        ),
        ({"cache_prefix": "yes"}, "models[0].cache_prefix must be true or false, got 'yes'"),
        (
            {"cache_prefix": True},
            "models[0].cache_prefix marks a prefix for Anthropic's prompt caching; OpenAI caches "
            "prompts of 1,024+ tokens by itself (leave it out)",
        ),
        (
            {"api_key_env": "sk-" + "abcdefghijklmnopqrstuvwxyz" + "123456"},  # key-shaped, made here
            "models[0].api_key_env holds what looks like an API key "
            "itself ('sk-a…' (35 characters)); put the key ...",
        ),
    ],
)
def test_each_model_key_fails_with_its_rules_line(change, expected):
    got = message(BASE | {"models": [{"provider": "fake", "model": "m"} | change]})
    same(got, expected)
    assert "abcdefghij" not in got  # a key is never shown past its first 4 characters


def test_the_first_bad_key_in_table_order_is_the_one_reported():
    assert message(BASE | {"concurrency": 0, "seed": "x"}) == P + "seed must be a whole number, got 'x'"
    assert RULE["seed"] in RULES[: RULES.index(RULE["concurrency"])]


def test_model_spec_is_built_field_by_field():
    m = ModelConfig.from_dict(
        {
            "provider": "anthropic",
            "model": "c",
            "base_url": "http://127.0.0.1:9/v1",
            "api_key_env": "K",
            "context_window": 100,
            "timeout": 5.0,
            "max_retries": 2,
            "cache_prefix": True,
            "max_tokens": 7,
            "requests_per_minute": 60.0,
        },
        0,
    )
    spec = m.spec
    assert spec == ModelSpec("anthropic", "c", "http://127.0.0.1:9/v1", "K", 100, 5.0, 2, True)
    assert all(getattr(spec, f.name) == getattr(m, f.name) for f in fields(ModelSpec))


R_AND_R = {**BASE, "lengths": [10_000, 20_000, 40_000], "positions_tokens": "every 10000"}
R_AND_R.pop("positions")


def test_token_positions_per_length_make_rrs_grid_one_sweep():
    """R&R §4.1: x from 0 to d in steps of 10k at every d: lengths 10k/20k/40k take 2 + 3 + 5 positions."""
    from components.run.config import count_cells, count_trials
    from components.run.plan import cells

    cfg = SweepConfig.from_dict(R_AND_R)
    assert cfg.positions == () and cfg.positions_tokens == "every 10000"
    assert [(c.length, c.position) for c in cells(cfg)] == [
        (10_000, 0),
        (10_000, 10_000),
        (20_000, 0),
        (20_000, 10_000),
        (20_000, 20_000),
        (40_000, 0),
        (40_000, 10_000),
        (40_000, 20_000),
        (40_000, 30_000),
        (40_000, 40_000),
    ]
    assert count_cells(cfg) == 10 and count_trials(cfg, 3) == 30
    assert cfg.positions_for(80_000) == (0, 10_000, 20_000, 30_000, 40_000, 50_000, 60_000, 70_000, 80_000)
    listed = SweepConfig.from_dict(
        {**R_AND_R, "lengths": [20_000, 40_000], "positions_tokens": [0, 15_000, 30_000]}
    )
    assert [len(listed.positions_for(n)) for n in listed.lengths] == [2, 3]
    assert listed.positions_tokens == (0, 15_000, 30_000)
    again = SweepConfig.from_stored(cfg.to_dict())
    assert again.positions_tokens == "every 10000" and cells(again) == cells(cfg)


def test_a_planned_token_position_grid_has_each_cell_once(tmp_path):
    """The plan of one config with lengths [10000, 20000, 40000] and 10k steps: 2 + 3 + 5 positions per
    strategy and task."""
    from components.run.plan import plan
    from components.tasks.generators import generate
    from components.tasks.importers import write_tasks

    write_tasks(generate("niah", 2, 0, paragraphs=4), tmp_path / "t.jsonl")
    cfg = SweepConfig.from_dict(
        {**R_AND_R, "tasks": "t.jsonl", "strategies": ["baseline", "reprompt"]}, base_dir=str(tmp_path)
    )
    specs = plan(cfg)
    assert len(specs) == 2 * 2 * (2 + 3 + 5) == len({s.key for s in specs})
    per = {}
    for s in specs:
        per.setdefault((s.task.id, s.strategy, s.length), []).append(s.position)
    assert {k[2]: v for k, v in per.items()} == {
        10_000: [0, 10_000],
        20_000: [0, 10_000, 20_000],
        40_000: [0, 10_000, 20_000, 30_000, 40_000],
    }


@pytest.mark.parametrize(
    "change, expected",
    [
        (
            {"positions": [0.0]},
            "give either positions (fractions, or tokens inside every length) or positions_tokens, not both",
        ),
        (
            {"positions_tokens": "every 1"},
            'positions_tokens must be "every N" (N a whole number of tokens, at least 2) or a list of token '
            "counts, got 'every 1'",
        ),
        (
            {"positions_tokens": "each 10k"},
            'positions_tokens must be "every N" (N a whole number of tokens, at least 2) or a list of token '
            "counts, got 'each 10k'",
        ),
        (
            {"positions_tokens": [0, 1]},
            "every position of positions_tokens must be a whole number of tokens, 0 or from 2, got 1",
        ),
        (
            {"positions_tokens": [0, 2.5]},
            "every position of positions_tokens must be a whole number of tokens, 0 or from 2, got 2.5",
        ),
        ({"positions_tokens": [0, 0]}, "positions_tokens lists a position twice"),
        (
            {"positions_tokens": [15_000]},
            "length 10,000 takes no position of positions_tokens (each length takes those up to itself)",
        ),
        (
            {"positions_tokens": []},
            'positions_tokens must be a non-empty list of token counts, e.g. [0, 10000, 20000], or "every 10000"',
        ),
        (
            {"documents": [10], "gold_index": [0]},
            "give either lengths and positions (tokens, R&R §4.1) or documents and gold_index (Lost in the "
            "Middle §3.1), not both",
        ),
    ],
)
def test_token_positions_fail_with_one_line(change, expected):
    assert message({**R_AND_R, **change}) == "sweep config: " + expected


def _toml(tmp_path, text: str):
    path = tmp_path / "c.toml"
    path.write_text(
        '[sweep]\nname = "t"\ntasks = "facts.jsonl"\nlengths = [500]\npositions = [0.5]\n'
        'strategies = ["baseline"]\n[[sweep.models]]\nprovider = "fake"\nmodel = "m"\n' + text
    )
    return path


@pytest.mark.parametrize("extra", ["[sweeps]\nx = 1\n", "[budget]\nmax_usd = 1\n"])
def test_a_table_beside_sweep_is_refused_with_its_name(tmp_path, extra):
    assert SweepConfig.from_toml(_toml(tmp_path, "")).name == "t"
    name = extra.split("]")[0].strip("[")
    with pytest.raises(ValueError) as info:
        SweepConfig.from_toml(_toml(tmp_path, extra))
    assert str(info.value) == (
        f"sweep config c.toml: unknown top-level key(s) {name!r}; every setting goes in the [sweep] table "
        "(and [[sweep.models]])"
    )


def test_a_missing_task_file_lists_the_sets_named_by_name_too(tmp_path):
    cfg = SweepConfig.from_dict(BASE | {"tasks": "nope.jsonl"}, base_dir=str(tmp_path))
    with pytest.raises(ValueError) as info:
        cfg.all_tasks()
    text = str(info.value)
    assert text.startswith("no such file: nope.jsonl; bundled task sets: ") and "\n" not in text
    assert "rr-squad, " in text and "squad-dev" in text and "nq-open-30docs.jsonl.gz, " in text
