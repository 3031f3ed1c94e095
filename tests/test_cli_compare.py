"""`litm compare` on a real sweep against the loopback server (middle-loss mode), checked against the trials
`litm results` prints: McNemar p-values from scipy's binomtest on the discordant pairs, cost per 1,000
questions from the mean stored tokens and the price table."""

import csv
import io
import json

import pytest
from scipy.stats import binomtest

from components.cli import main
from tests.support import sweep_toml


@pytest.fixture
def swept(tmp_path, server, capsys):
    server.set(middle_loss=0.7)
    toml = sweep_toml(
        tmp_path,
        name="two",
        base_url=server.openai_url,
        n_tasks=4,
        lengths=(800, 1700),  # long enough in PAGE tags (R&R §4.1) for three distinct gold places
        positions=(0.0, 0.5, 1.0),
        strategies=("baseline", "reprompt"),
        params="{ r = 200 }",
    )
    db = tmp_path / "runs.sqlite"
    assert main(["sweep", str(toml), "--db", str(db), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["results", "--db", str(db), "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    return db, rows


def _json(capsys, *argv) -> dict:
    assert main(["compare", *argv, "--json"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1  # exactly one object
    return json.loads(out)


def test_compare_json_equals_recomputation_from_results(swept, capsys):
    db, rows = swept
    assert len(rows) == 2 * 4 * 2 * 3
    obj = _json(capsys, "--db", str(db), "--sweep", "two", "--model-price", "gpt-4o-mini")
    labels = {a["label"]: a for a in obj["arms"]}
    assert set(labels) == {"Baseline · loop-model", "Reprompt · r=200 · loop-model"}
    by_arm = {
        "Baseline · loop-model": [r for r in rows if r["strategy"] == "baseline"],
        "Reprompt · r=200 · loop-model": [r for r in rows if r["strategy"] == "reprompt"],
    }
    for label, arm_rows in by_arm.items():
        a = labels[label]
        ok = [float(r["score"]) > 0 for r in arm_rows if not r["error"]]
        assert a["n"] == len(ok) == 24 and a["accuracy"] == pytest.approx(sum(ok) / len(ok))
        assert a["ci"][0] <= a["accuracy"] <= a["ci"][1]
        tin = sum(int(r["input_tokens"]) for r in arm_rows) / len(arm_rows)
        tout = sum(int(r["output_tokens"]) for r in arm_rows) / len(arm_rows)
        assert a["cost_per_1000_usd"] == pytest.approx(1000 * (tin * 0.15 + tout * 0.60) / 1e6)  # gpt-4o-mini
    # the middle-loss server makes the two arms disagree somewhere, so the test has discordant pairs
    (pair,) = obj["pairs"]
    key = lambda r: (r["task"], r["length"], r["position"])  # noqa: E731
    a_ok = {key(r): float(r["score"]) > 0 for r in by_arm[pair["a"]]}
    b_ok = {key(r): float(r["score"]) > 0 for r in by_arm[pair["b"]]}
    b = sum(a_ok[k] and not b_ok[k] for k in a_ok)
    c = sum(b_ok[k] and not a_ok[k] for k in a_ok)
    assert b + c > 0 and pair["n_matched"] == 24 and pair["left_out"] == 0
    assert pair["p_value"] == pytest.approx(binomtest(b, b + c, 0.5).pvalue, rel=1e-12)
    assert pair["diff"] == pytest.approx((b - c) / 24)
    assert pair["ci"][0] <= pair["diff"] <= pair["ci"][1]
    assert isinstance(obj["recommendation"], str) and "loop-model" in obj["recommendation"]
    # the loopback model is self-hosted (no price): its own cost is 0; batch prices halve a listed model
    own = _json(capsys, "--db", str(db))
    assert all(a["cost_per_1000_usd"] == 0 for a in own["arms"])
    batch = _json(capsys, "--db", str(db), "--model-price", "gpt-4o-mini", "--batch")
    assert batch["arms"][0]["cost_per_1000_usd"] == pytest.approx(
        {a["label"]: a for a in obj["arms"]}[batch["arms"][0]["label"]]["cost_per_1000_usd"] / 2
    )


def test_compare_table_arms_length_and_errors(swept, capsys):
    db, _ = swept
    assert main(["compare", "--db", str(db), "--length", "800"]) == 0
    out = capsys.readouterr().out
    assert "Baseline · loop-model" in out and "matched" in out and "planner:" in out
    obj = _json(
        capsys,
        "--db",
        str(db),
        "--length",
        "800",
        "--arms",
        "Reprompt · r=200 · loop-model",
        "baseline · loop-model",  # an arm by its raw ids (older scripts) is found too
    )
    assert [a["label"] for a in obj["arms"]] == ["Reprompt · r=200 · loop-model", "Baseline · loop-model"]
    assert obj["arms"][0]["n"] == 12 and obj["pairs"][0]["n_matched"] == 12
    for argv, message in (
        (["--arms", "nope"], "no arm named 'nope'"),
        (["--length", "5"], "no trials of length 5"),
        (["--model-price", "no-such"], "no price for 'no-such'"),
        (["--sweep", "missing"], ""),
    ):
        assert main(["compare", "--db", str(db), *argv]) == 1
        err = capsys.readouterr().err
        assert err.startswith("litm: ") and err.count("\n") == 1 and message in err
    assert main(["compare", "--db", str(db.parent / "none.sqlite")]) == 1
    assert "no run store" in capsys.readouterr().err


def test_five_arms_on_the_loopback_server_holm_and_verdict(tmp_path, server, capsys):
    """Done-when of the evidence issue: five arms, middle loss; adjusted p-values equal statsmodels' Holm on
    the raw ones, and the verdict never calls an arm better on a raw p that Holm rejects."""
    from statsmodels.stats.multitest import multipletests

    server.set(middle_loss=0.9)
    toml = sweep_toml(
        tmp_path,
        name="five",
        base_url=server.openai_url,
        n_tasks=6,
        lengths=(900,),
        positions=(0.0, 0.25, 0.5, 0.75, 1.0),
        strategies=("baseline", "reprompt", "icr"),
        params="{ r = [150, 300, 600], k = 2 }",
    )
    db = tmp_path / "five.sqlite"
    assert main(["sweep", str(toml), "--db", str(db), "--quiet"]) == 0
    capsys.readouterr()
    obj = _json(
        capsys, "--db", str(db), "--model-price", "gpt-4o-mini", "--margin", "5", "--min-saving", "10"
    )
    assert len(obj["arms"]) == 5 and len(obj["pairs"]) == 10
    raw = [p["p_value"] for p in obj["pairs"]]
    assert [p["p_holm"] for p in obj["pairs"]] == pytest.approx(list(multipletests(raw, method="holm")[1]))
    assert all(p["p_holm"] >= p["p_value"] for p in obj["pairs"])
    v = obj["verdict"]
    assert (
        obj["margin"] == 0.05
        and obj["min_saving"] == 0.10
        and v["line"].split(" · ")[-1] in ("confident", "not yet")
    )
    assert obj["recommendation"].startswith(v["line"])
    if v["confidence"] == "confident" and v["recommend"] == v.get("versus"):
        raise AssertionError("an arm recommended against itself")
    if "significantly better" in v["reasons"]:  # then every pair with the winner survives Holm
        winner = v["recommend"]
        assert all(p["p_holm"] < 0.05 for p in obj["pairs"] if winner in (p["a"], p["b"]))
    # the one-line verdict leads the table too
    assert main(["compare", "--db", str(db), "--model-price", "gpt-4o-mini"]) == 0
    text = capsys.readouterr().out
    assert text.splitlines()[0] == v["line"] and "Holm" in text
