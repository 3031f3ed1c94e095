"""The cached runs that ship in sample_docs/runs: complete, labelled, rerun from the cache with zero
calls, and (with the local model installed) reproduced by a fresh call with the cache cleared."""

import shutil
import tomllib
from pathlib import Path

import pytest

from components.run.config import SweepConfig
from components.run.plan import plan
from components.run.runner import run_sweep
from components.run.store import RunStore

RUNS = Path(__file__).resolve().parent.parent / "sample_docs" / "runs"
CONFIGS = sorted(RUNS.glob("*.toml"))


class NoCalls:
    """A provider that fails the test if anything reaches it."""

    def __init__(self, spec):
        self.spec = spec
        self.calls = 0

    async def complete(self, messages, settings):
        self.calls += 1
        raise AssertionError("a cached sweep sent a request")


def test_every_shipped_config_has_its_store():
    assert CONFIGS, "no shipped runs"
    for cfg in CONFIGS:
        assert cfg.with_suffix(".sqlite").is_file(), f"{cfg.name} has no run store"


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda p: p.stem)
def test_shipped_store_is_complete_and_labelled(cfg):
    config = SweepConfig.from_toml(cfg)
    store = RunStore(cfg.with_suffix(".sqlite"), readonly=True)
    try:
        trials = store.trials_frame()
        sweeps = store.sweeps_frame()
    finally:
        store.close()
    expected = len(plan(config))
    assert len(trials) == expected >= 100
    assert trials["error"].isna().all()
    assert set(trials["strategy"]) == set(config.strategies)
    assert set(sweeps["status"]) == {"done"}
    assert sweeps.iloc[0]["name"] == config.name


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda p: p.stem)
def test_shipped_sweep_reruns_from_the_cache_with_zero_calls(cfg, tmp_path):
    db = tmp_path / "copy.sqlite"
    shutil.copy(cfg.with_suffix(".sqlite"), db)
    config = SweepConfig.from_toml(cfg)
    store = RunStore(db)
    before = store.trials_frame().sort_values("trial_key").reset_index(drop=True)
    guards = {m.label: NoCalls(m) for m in config.models}
    # a new sweep name: every trial is planned again, and every call must come from the cache
    fresh = SweepConfig.from_dict({"sweep": {**tomllib.loads(cfg.read_text())["sweep"], "name": "again"}},
                                  base_dir=str(cfg.parent))
    run_sweep(fresh, store, providers=guards)
    again = store.trials_frame("again").sort_values("trial_key").reset_index(drop=True)
    store.close()
    assert sum(g.calls for g in guards.values()) == 0
    assert list(again["answer"]) == list(before["answer"])
    assert list(again["score"]) == list(before["score"])


@pytest.mark.local_model
def test_a_shipped_answer_reproduces_with_the_cache_cleared(tmp_path):
    """Greedy decoding, fixed seed: the same trial run fresh against the real model gives the same text."""
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed: pip install -e '.[local]'")
    from components.providers.localmodel import LocalModelError, find_model

    cfg = RUNS / "local-qwen-facts.toml"
    data = tomllib.loads(cfg.read_text())["sweep"]
    try:
        find_model(data["models"][0]["model"])
    except LocalModelError as exc:
        pytest.skip(f"the shipped run's model is not installed: {exc}")
    subset = {**data, "n_tasks": 1, "positions": [0.0], "strategies": ["baseline"]}
    config = SweepConfig.from_dict({"sweep": subset}, base_dir=str(cfg.parent))
    store = RunStore(tmp_path / "fresh.sqlite")  # an empty cache
    run_sweep(config, store)
    fresh = store.trials_frame()
    store.close()
    shipped = RunStore(cfg.with_suffix(".sqlite"), readonly=True)
    original = shipped.trials_frame()
    shipped.close()
    row = original[original["trial_key"] == fresh.loc[0, "trial_key"]]
    assert len(row) == 1
    assert fresh.loc[0, "raw_answer"] == row.iloc[0]["raw_answer"]
    assert fresh.loc[0, "input_tokens"] == row.iloc[0]["input_tokens"]
