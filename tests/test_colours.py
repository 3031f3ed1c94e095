"""The intended colours, by name: a strategy's and a model's colour is written beside its name
(components/report/colours.py), so adding a strategy or a model to a registry changes no other colour."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from components.report import colours
from components.strategies import STRATEGIES

ROOT = Path(__file__).resolve().parents[1]


def test_the_strategies_have_their_intended_colours():
    named = {s: colours.colour_word(c) for s, c in colours.STRATEGY_COLOURS.items()}
    assert {k: named[k] for k in ("baseline", "reprompt", "icr", "rr", "chunked-icr", "chunked-rr")} == {
        "baseline": "dark grey",
        "reprompt": "blue",
        "icr": "amber",
        "rr": "red-orange",
        "chunked-icr": "sky-blue",
        "chunked-rr": "pink",
    }
    assert (named["litm"], named["closed-book"], named["oracle"], named["kv"]) == (
        "indigo",
        "black",
        "dark yellow",
        "raspberry",
    )
    assert colours.colour_for("R&R") == colours.PALETTE["red-orange"]  # a paper's name: its strategy's
    assert colours.colour_for("Reprompt (r=10k)") == colours.PALETTE["blue"]


def test_every_registered_strategy_has_its_own_colour_written_beside_its_name():
    missing = sorted(set(STRATEGIES) - set(colours.STRATEGY_COLOURS))
    assert not missing, f"give {missing} a colour in STRATEGY_COLOURS (components/report/colours.py)"
    assert sorted(set(colours.STRATEGY_COLOURS) - set(STRATEGIES)) == []  # no colour of a strategy gone
    values = list(colours.STRATEGY_COLOURS.values())
    assert len(set(values)) == len(values)  # no two alike


def test_the_bundled_models_have_their_intended_colours():
    assert colours.model_colour("local:qwen2.5-coder-0.5b-instruct") == colours.PALETTE["blue"]
    assert colours.model_colour("Qwen2.5 Coder 0.5B") == colours.PALETTE["blue"]  # any of its names
    assert colours.model_colour("qwen2.5-coder-1.5b-instruct") == colours.PALETTE["red-orange"]
    assert colours.model_colour("openai:gpt-4o-mini") == colours.PALETTE["dark green"]
    assert colours.model_colour("GPT-3.5-Turbo") == colours.PALETTE["pink"]  # as a paper prints it
    assert colours.model_colour("no such model") is None  # not a model: a series colour of its own


def colours_in_a_process(prepare: str, env: dict | None = None) -> dict:
    """Every strategy's and known model's colour, in a fresh process after `prepare` ran."""
    code = (
        "import json\n"
        f"{prepare}\n"
        "from components.report import colours\n"
        "from components.strategies import STRATEGIES\n"
        "print(json.dumps({'strategies': {s: colours.colour_for(s) for s in STRATEGIES}, 'models': "
        "{m: colours.model_colour(m) for m in sorted(colours.KNOWN_MODELS)}}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120, env=env
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_adding_a_strategy_or_a_model_changes_no_other_colour(tmp_path):
    before = colours_in_a_process("")
    # a strategy registered first (where litm-random's insertion once moved 17 colours along) ...
    prepare = (
        "import copy, components.strategies as reg\n"
        "new = copy.copy(reg.STRATEGIES['baseline'])\n"
        "new.name = 'a-new-one'\n"
        "reg.STRATEGIES = {'a-new-one': new, **reg.STRATEGIES}"
    )
    # ... and a model priced first
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"models": {"openai": {"aaa-new-model": {"input": 1, "output": 2}}}}))
    after = colours_in_a_process(prepare, {**os.environ, "LITM_PRICES": str(prices)})
    assert "a-new-one" in after["strategies"] and "aaa new model" in after["models"]
    assert after["models"]["aaa new model"] in colours.SERIES  # a colour of its own name
    for kind in ("strategies", "models"):
        changed = {k: (v, after[kind][k]) for k, v in before[kind].items() if after[kind][k] != v}
        assert not changed, changed
