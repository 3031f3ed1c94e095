"""The attention measure without a model (components/providers/attention.py, localattention.py's checks,
run/measure.py): a hand-checked tiny case, the refusal for every other provider (the CLI's and a sweep's,
before any call), the trial columns and store migration 10."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from components.providers.attention import (
    ATTENTION_PROVIDERS,
    Attention,
    NoAttention,
    attention_key,
    check_provider,
    regions_of,
    span_masses,
    token_spans,
)
from components.providers.base import PROVIDERS, ModelSpec, ProviderError
from components.providers.localattention import check_rows, layer_of, tensor_rows

ROOT = Path(__file__).resolve().parents[1]

# a hand-checked case: 2 layers, 2 heads, 6 prompt tokens; page 1 is tokens 1-2, page 2 tokens 3-4
ROWS = np.array(
    [
        [[0.5, 0.1, 0.1, 0.1, 0.1, 0.1], [0.3, 0.3, 0.0, 0.2, 0.2, 0.0]],
        [[0.2, 0.0, 0.4, 0.0, 0.4, 0.0], [0.0, 0.5, 0.5, 0.0, 0.0, 0.0]],
    ]
)
SPANS = [(1, 3), (3, 5)]


def test_rows_sum_to_one_and_span_sums_are_the_page_masses_by_hand():
    assert np.allclose(ROWS.sum(axis=-1), 1.0)
    by_layer, other = span_masses(ROWS, SPANS)
    # layer 0: heads' mean row = [0.4, 0.2, 0.05, 0.15, 0.15, 0.05]: page 1 = 0.25, page 2 = 0.30, rest 0.45
    # layer 1: mean row = [0.1, 0.25, 0.45, 0.0, 0.2, 0.0]: page 1 = 0.70, page 2 = 0.20, rest 0.10
    assert np.allclose(by_layer, [[0.25, 0.30], [0.70, 0.20]])
    assert other == pytest.approx([0.45, 0.10])
    a = Attention((1, 2), tuple(map(tuple, by_layer)), tuple(other), (2, 2), 6, model="m")
    assert a.masses == pytest.approx((0.475, 0.25)) and a.other_mass == pytest.approx(0.275)
    assert a.late == pytest.approx((0.70, 0.20))  # the last half of 2 layers: layer 1
    s = a.summary()
    assert sum(p["mass"] for p in s["pages"]) + s["other"] == pytest.approx(1.0)
    assert [p["page"] for p in s["pages"]] == [1, 2] and s["model"] == "m"


def test_an_attention_call_round_trips_through_its_stored_form():
    by_layer, other = span_masses(ROWS, SPANS)
    a = Attention((1, 2), tuple(map(tuple, by_layer)), tuple(other), (2, 2), 6, 1.5, "m")
    back = Attention.from_completion(a.completion())
    assert back.masses == a.masses and back.layers == a.layers and back.prompt_tokens == 6
    assert Attention.from_dict(a.reply()) == a
    assert a.completion().finish_reason == "attention"


def test_token_spans_place_each_page_by_its_first_byte():
    # tokens start at bytes 0, 3, 5, 9, 12; the content starts at byte 3; a region of chars 0-6 holds tokens 1-2
    offsets = [0, 3, 5, 9, 12]
    assert token_spans(offsets, [(1, 0, 6), (2, 6, 9)], 3) == [(1, 3), (3, 4)]


def test_the_layout_check_refuses_rows_that_do_not_sum_to_one_or_see_the_future():
    good = np.array([[[0.5, 0.5, 0.0], [0.2, 0.3, 0.5]]], dtype=np.float32)  # 1 head, 2 query rows, 3 cells
    check_rows(good, 1, 2)
    with pytest.raises(ProviderError, match="not laid out"):
        check_rows(np.array([[[0.5, 0.4, 0.0], [0.2, 0.3, 0.5]]]), 1, 2)
    with pytest.raises(ProviderError, match="not laid out"):
        check_rows(np.array([[[0.5, 0.3, 0.2], [0.2, 0.3, 0.5]]]), 1, 2)  # row 0 sees position 2
    # a tensor of another shape (a changed llama.cpp) is refused, never read
    with pytest.raises(ProviderError, match="shape"):
        tensor_rows(good.ravel(), (3, 2, 1, 2), 1, 2)
    assert tensor_rows(np.concatenate([good.ravel()]), (3, 2, 1, 1), 1, 2).shape == (1, 2, 3)
    assert (
        layer_of(b"kq_soft_max-12") == 12 and layer_of(b"kq_soft_max") is None and layer_of(b"kq-3") is None
    )


@pytest.mark.parametrize("provider", [p for p in PROVIDERS if p not in ATTENTION_PROVIDERS])
def test_every_other_provider_is_refused_in_one_line(provider):
    with pytest.raises(NoAttention) as info:
        check_provider(provider)
    line = str(info.value)
    assert line.startswith(f"attention is not available with {provider}: providers do not return it")
    assert "\n" not in line


def test_a_caller_refuses_a_provider_without_attention_before_any_call():
    from components.providers.fake import FakeProvider
    from components.run.caller import Caller

    provider = FakeProvider(ModelSpec("fake", "echo"))
    caller = Caller(provider)
    with pytest.raises(NoAttention, match="attention is not available with fake"):
        asyncio.run(caller.attention([{"role": "user", "content": "x"}], [(1, 0, 1)]))
    assert caller.attempts == 0


def test_the_key_of_an_attention_call_is_its_own():
    spec = ModelSpec("local", "m")
    messages = [{"role": "user", "content": "abc"}]
    from components.providers.base import Settings, cache_key
    from components.providers.likelihood import score_key

    keys = {
        attention_key(spec, messages, [(1, 0, 2)]),
        cache_key(spec, messages, Settings()),
        score_key(spec, messages, "a"),
    }
    assert len(keys) == 3
    assert attention_key(spec, messages, [(1, 0, 2)]) != attention_key(spec, messages, [(1, 0, 3)])


def test_the_regions_are_the_prompt_maps_pages_in_prompt_order():
    from components.core.cells import Cell
    from components.core.resources import sample_path
    from components.strategies import get_strategy
    from components.tasks.importers import read_tasks
    from components.tasks.sweepdocs import cell_document

    ts = read_tasks(str(sample_path("tasks", "nq-open-30docs.jsonl.gz")))
    built = cell_document(ts.tasks[0], Cell(documents=5, gold_index=2), tasks=ts.tasks)
    prompt = get_strategy("litm").first_prompts(built.document, ts.tasks[0].question, {})[0]
    regions = regions_of(prompt)
    assert [r[0] for r in regions] == [1, 2, 3, 4, 5]
    assert all(a < b <= c for (_, a, b), (_, c, _) in zip(regions, regions[1:], strict=False))
    gold = next(s for s in prompt.spans if s.kind == "gold")
    assert (gold.page, gold.start_char, gold.end_char) in regions


def run_cli(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess:
    env = {
        "PYTHONPATH": str(ROOT),
        "LITM_DB": str(tmp_path / "x.sqlite"),
        "HOME": str(tmp_path),
        "PATH": "/usr/bin:/bin",
    }
    return subprocess.run(
        [sys.executable, "-m", "components.cli", *args], capture_output=True, text=True, env=env, cwd=tmp_path
    )


def test_the_cli_refuses_attention_with_an_api_model_in_one_line(tmp_path):
    done = run_cli(
        [
            "prompt",
            "--task",
            "nq-open-30docs.jsonl.gz",
            "--documents",
            "10",
            "--by-index",
            "--position",
            "4",
            "--strategy",
            "litm",
            "--attention",
            "--json",
            "--model",
            "openai:gpt-4o-mini",
        ],
        tmp_path,
    )
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        "litm: attention is not available with openai: providers do not return it; use the bundled local "
        'model (provider = "local")'
    ]
    assert not (tmp_path / "x.sqlite").exists()


def test_an_attention_sweep_with_an_api_model_is_refused_before_any_call(tmp_path):
    from tests.support.llm_server import LLMServer

    with LLMServer() as server:
        config = tmp_path / "a.toml"
        config.write_text(
            '[sweep]\nname = "a"\ntasks = "nq-open-30docs.jsonl.gz"\nn_tasks = 1\ndocuments = [5]\n'
            'gold_index = [0]\nstrategies = ["litm"]\nmeasure = "attention"\n\n[[sweep.models]]\n'
            f'provider = "openai-compatible"\nmodel = "m"\nbase_url = "{server.url}/v1"\n'
        )
        done = run_cli(["sweep", str(config), "--db", str(tmp_path / "s.sqlite")], tmp_path)
        assert sum(server.counts.values()) == 0 and server.bodies == []
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "attention is not available with openai-compatible" in lines[0]


def test_migration_10_adds_the_attention_columns_and_completes_a_half_done_one(tmp_path):
    from components.run.schema import STORED
    from components.run.store import MIGRATIONS, RunStore

    assert len(MIGRATIONS) >= 10
    path = tmp_path / "s.sqlite"
    with RunStore(path) as store:
        store.migrate()
    conn = sqlite3.connect(path)
    columns = {r[1] for r in conn.execute("PRAGMA table_info(trials)")}
    assert {"attention_gold", "attention_gold_late", "attention_other", "attention_pages"} <= columns
    assert set(STORED) <= columns
    # a store left at 9 with one of 10's columns already there (added by hand, or a stopped migration)
    conn.execute("DELETE FROM schema_version WHERE version >= 10")
    conn.execute("ALTER TABLE trials DROP COLUMN attention_pages")
    conn.commit()
    conn.close()
    with RunStore(path) as store:
        assert store.schema_version == len(MIGRATIONS)
        sid = store.open_sweep("s", {})
        store.put_trial(sid, {"trial_key": "k", "attention_gold": 0.25, "attention_pages": [0.25, 0.5]})
        row = store.trials_frame().iloc[0]
    assert row["attention_gold"] == 0.25 and list(row["attention_pages"]) == [0.25, 0.5]


def test_an_attention_trial_keeps_the_gold_pages_mass_and_every_pages():
    from components.core.documents import Document, Page
    from components.run.measure import attend_trial
    from components.run.schema import Trial

    doc = Document(name="d", pages=(Page(1, "alpha beta", 2), Page(2, "gamma delta", 2)), gold=(2,))

    class FakeCaller:
        async def attention(self, messages, regions):
            assert [r[0] for r in regions] == [1, 2]
            found = Attention((1, 2), ((0.1, 0.3), (0.2, 0.5)), (0.6, 0.3), (3, 3), 40, 2.0, "m")
            return found, "key"

    trial = Trial()
    keys = asyncio.run(attend_trial(trial, doc, "q?", "litm", {}, FakeCaller()))
    assert keys == ["key"] and trial.error is None
    assert trial.attention_gold == pytest.approx(0.4) and trial.attention_gold_late == pytest.approx(0.5)
    assert trial.attention_pages == pytest.approx([0.15, 0.4]) and trial.attention_other == pytest.approx(
        0.45
    )
    assert trial.calls == 1 and trial.input_tokens == 40


def test_results_json_gives_the_attention_curve_with_n_and_an_interval(tmp_path):
    from components.run.store import RunStore

    path = tmp_path / "r.sqlite"
    with RunStore(path) as store:
        store.migrate()
        sid = store.open_sweep("att", {})
        for q in range(3):
            for gi, mass in ((0, 0.30), (2, 0.10), (4, 0.20)):
                store.put_trial(
                    sid,
                    {
                        "trial_key": f"{q}-{gi}",
                        "task": f"t{q}",
                        "strategy": "litm",
                        "model": "local:m",
                        "params": "{}",
                        "documents": 5,
                        "gold_index": gi,
                        "metric": "subspan-em",
                        "attention_gold": mass + 0.01 * q,
                    },
                )
    done = run_cli(["results", "--db", str(path), "--json", "--metric", "attention"], tmp_path)
    assert done.returncode == 0, done.stderr
    (curve,) = json.loads(done.stdout)["curves"]
    points = {p["gold_index"]: p for p in curve["points"]}
    assert points[0]["n"] == 3 and points[0]["mean"] == pytest.approx(0.31)
    assert points[2]["lo"] < points[2]["mean"] < points[2]["hi"]
