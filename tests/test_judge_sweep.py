"""An LLM judge in a sweep (metric = "judge", [sweep.judge]) and repeated samples (samples = N), against
the real loopback server: one judge call per trial, verdicts stored, reruns send nothing, keys kept."""

import hashlib
import json
import re
from pathlib import Path

import pytest

from components.cli import main as litm
from components.providers.base import Settings
from components.run.config import SweepConfig
from components.run.estimate import estimate
from components.run.plan import plan
from components.run.runner import run_sweep
from components.run.store import RunStore
from tests.support import sweep_toml

JUDGE_MARK = "You are grading a model's answer"


def judged_config(tmp_path: Path, server, *, sweep: str = "", model: str = "", judge: str | None = None):
    """The test sweep (3 tasks x 2 lengths x 3 positions, baseline) with [sweep] keys, model keys and a
    [sweep.judge] table added."""
    path = sweep_toml(tmp_path, base_url=server.openai_url, strategies=("baseline",), extra_model=model)
    text = path.read_text().replace("concurrency = 4\n", f"concurrency = 4\n{sweep}\n", 1)
    if judge is not None:
        text += f"[sweep.judge]\n{judge}\n"
    path.write_text(text)
    return SweepConfig.from_toml(path)


def judge_requests(server) -> int:
    return sum(JUDGE_MARK in raw.decode() for raw in server.raw_bodies)


def loop_judge(server) -> str:
    return f'provider = "openai-compatible"\nmodel = "loop-judge"\nbase_url = "{server.openai_url}"'


def test_a_judged_sweep_sends_one_judge_call_per_trial_and_a_rerun_none(tmp_path, server):
    c = judged_config(tmp_path, server, sweep='metric = "judge"', judge=loop_judge(server))
    store = RunStore(tmp_path / "s.sqlite")
    first = run_sweep(c, store)
    assert first.status == "done" and first.total == 18
    f = store.trials_frame()
    # one judge call per trial; two trials with the same question and answer share one (the cache)
    distinct = len(set(zip(f["question"], f["raw_answer"], strict=True)))
    assert 1 < distinct < 18 and judge_requests(server) == distinct
    assert server.counts["total"] == 18 + distinct
    assert set(f["metric"]) == {"judge"} and set(f["judge"]) <= {0.0, 1.0} and f["judge"].notna().all()
    assert f["judge_reply"].isin(["CORRECT", "INCORRECT"]).all()
    assert (f["calls"] == 2).all()  # the answer and its judgement
    # the loopback judge says CORRECT exactly when the answer holds a reference: where subspan EM says 1
    assert (f["judge"] == f["subspan_em"]).all()
    sent = server.counts["total"]
    again = run_sweep(c, store)
    assert again.calls_sent == 0 and server.counts["total"] == sent
    bodies = [json.loads(r) for r in server.raw_bodies if JUDGE_MARK.encode() in r]
    assert {b["model"] for b in bodies} == {"loop-judge"} and {b["max_tokens"] for b in bodies} == {8}


def test_a_judged_sweep_resent_from_scratch_reads_its_verdicts_from_the_cache(tmp_path, server):
    c = judged_config(tmp_path, server, sweep='metric = "judge"', judge=loop_judge(server))
    store = RunStore(tmp_path / "s.sqlite")
    run_sweep(c, store)
    sent = server.counts["total"]
    other = SweepConfig.from_dict({**c.to_dict(), "name": "other"})
    summary = run_sweep(other, store)
    assert summary.ran == 18 and summary.calls_sent == 0 and server.counts["total"] == sent


def test_the_dry_run_prices_the_judges_calls(tmp_path, server):
    plain = judged_config(tmp_path, server)
    judged = judged_config(tmp_path, server, sweep='metric = "judge"', judge=loop_judge(server))
    a, b = estimate(plain), estimate(judged)
    assert b.calls == a.calls + 18 and b.input_tokens > a.input_tokens + 18 * 100
    assert b.output_tokens == a.output_tokens + 18 * 3


def test_the_judge_is_part_of_a_judged_trials_key_only(tmp_path, server):
    plain = plan(judged_config(tmp_path, server))
    judged = plan(judged_config(tmp_path, server, sweep='metric = "judge"', judge=loop_judge(server)))
    assert not {s.key for s in plain} & {s.key for s in judged}


@pytest.mark.parametrize(
    "sweep, judge, message",
    [
        ('metric = "judge"', None, 'metric = "judge" needs a [sweep.judge] table'),
        ("", 'provider = "openai"\nmodel = "gpt-4.1-mini"', 'metric = "judge" needs a [sweep.judge] table'),
        ('metric = "judge"', 'provider = "openai"\nmodel = "x"\napi_key = "sk-1"', "never put an API key"),
        ('metric = "judge"', 'provider = "nobody"\nmodel = "x"', "judge: provider must be one of"),
        ('metric = "fuzzy"', None, "metric must be one of judge"),
        ('metric = "judge"\nmeasure = "likelihood"', 'provider = "fake"\nmodel = "j"', "live sweep"),
    ],
)
def test_bad_judge_configs_are_one_line(tmp_path, server, sweep, judge, message):
    with pytest.raises(ValueError) as err:
        judged_config(tmp_path, server, sweep=sweep, judge=judge)
    assert message in str(err.value) and "\n" not in str(err.value)


# repeated samples ------------------------------------------------------------------------------------------

TEMPERATURE = "temperature = 0.7"


def sent_seeds(server) -> list:
    return [json.loads(r).get("seed") for r in server.raw_bodies]


def test_three_samples_are_three_trials_per_cell_and_question_and_a_rerun_sends_nothing(tmp_path, server):
    c = judged_config(tmp_path, server, sweep="samples = 3", model=TEMPERATURE)
    store = RunStore(tmp_path / "s.sqlite")
    first = run_sweep(c, store)
    assert first.status == "done" and first.total == 18 * 3 and server.counts["total"] == 54
    f = store.trials_frame()
    per = f.groupby(["task", "length", "position"])["sample"].apply(sorted)
    assert len(per) == 18 and all(v == [0, 1, 2] for v in per)
    assert sorted(set(sent_seeds(server))) == [0, 1, 2]  # sample i asks with the sweep's seed + i
    assert {json.loads(r)["temperature"] for r in server.raw_bodies} == {0.7}
    sent = server.counts["total"]
    again = run_sweep(c, store)
    assert again.calls_sent == 0 and again.skipped == 54 and server.counts["total"] == sent


def test_one_sample_keeps_every_trial_key_as_it_was(tmp_path):
    """The keys of the test sweep as the store had them before samples, judges and model temperatures (a
    rerun of an old sweep finds every trial): computed once, written here."""
    c = SweepConfig.from_toml(sweep_toml(tmp_path, base_url="http://127.0.0.1:9/v1"))
    keys = [s.key for s in plan(c)]
    assert (
        len(keys) == 36 and keys[0] == "397364ef75850dae513476ad" and keys[-1] == "49b900856430ea7b938d21bf"
    )
    digest = "63968b45c0597405a02a5b22ab237e98048a4e09033e6894c49fa80346d762ea"
    assert hashlib.sha256("".join(keys).encode()).hexdigest() == digest
    assert [s.sample for s in plan(c)] == [None] * 36
    assert c.settings(c.models[0], 64) == Settings(64, 0.0, 0)


def test_samples_sweep_results_json_counts_questions_not_samples(tmp_path, server, capsys):
    c = judged_config(tmp_path, server, sweep="samples = 3", model=TEMPERATURE)
    db = tmp_path / "s.sqlite"
    with RunStore(db) as store:
        run_sweep(c, store)
    assert litm(["results", "--db", str(db), "--json"]) == 0
    curves = json.loads(capsys.readouterr().out)["curves"]
    assert len(curves) == 2  # one per length
    for curve in curves:
        for point in curve["points"]:
            assert point["n"] == 3 and point["trials"] == 9 and point["samples"] == 3
            assert len(point["sample_means"]) == 3 and point["within_sd"] is not None
            assert point["lo"] <= point["mean"] <= point["hi"]


@pytest.mark.parametrize(
    "sweep, model, message",
    [
        ("samples = 3", "", "samples = 3 needs temperature above 0 on openai-compatible:loop-model"),
        ("samples = 0", TEMPERATURE, "samples must be a whole number from 1 to 100, got 0"),
        ("samples = 2", "temperature = 9", "models[0].temperature must be a number from 0 to 2"),
        ("samples = 2", 'temperature = 0.5\nseed = "x"', "models[0].seed must be a whole number"),
    ],
)
def test_bad_sample_configs_are_one_line(tmp_path, server, sweep, model, message):
    with pytest.raises(ValueError) as err:
        judged_config(tmp_path, server, sweep=sweep, model=model)
    assert message in str(err.value) and "\n" not in str(err.value)


# the judge's audit -------------------------------------------------------------------------------------------


def test_results_audit_the_judge_against_subspan_em_in_text_and_json(tmp_path, server, capsys):
    """The loopback judge agrees with best subspan EM everywhere; two trials EM scores right are then given
    the verdict INCORRECT in the store, as a stricter judge would: the audit finds exactly those two."""
    c = judged_config(tmp_path, server, sweep='metric = "judge"', judge=loop_judge(server))
    db = tmp_path / "s.sqlite"
    with RunStore(db) as store:
        run_sweep(c, store)
        f = store.trials_frame()
        right = f[f["subspan_em"] == 1.0]
        assert len(right) >= 2
        wrong_ids = [int(x) for x in right["trial_id"][:2]]
        store.db.execute(  # a person's check would find these: the judge said no where EM said yes
            f"UPDATE trials SET judge = 0.0, judge_reply = 'INCORRECT' WHERE id IN ({','.join(map(str, wrong_ids))})"
        )
    assert litm(["results", "--db", str(db), "--audit"]) == 0
    text = capsys.readouterr().out
    n = int(f["subspan_em"].notna().sum())
    agree = (n - 2) / n
    assert f"demo: judge vs best subspan EM: n = {n}, raw agreement {agree:.0%}" in text
    assert "2 disagreement(s)" in text
    assert f"  trial {wrong_ids[0]} (" in text and "judge says incorrect, subspan-em says correct" in text
    assert litm(["results", "--db", str(db), "--json"]) == 0
    audit = json.loads(capsys.readouterr().out)["judge_audit"]
    em = next(a for a in audit if a["against"] == "subspan-em")
    assert em["n"] == n and em["raw"] == pytest.approx(agree)
    assert sorted(d["trial_id"] for d in em["disagreements"]) == wrong_ids
    yes = int((f["subspan_em"] == 1.0).sum())  # by hand: judge yes = yes - 2, EM yes = yes
    chance = ((yes - 2) * yes + (n - yes + 2) * (n - yes)) / n**2
    assert em["kappa"] == pytest.approx((agree - chance) / (1 - chance))
    assert {a["against"] for a in audit} == {"subspan-em", "fuzzy"}


def test_results_audit_says_so_when_no_sweep_is_judged(tmp_path, server, capsys):
    db = tmp_path / "s.sqlite"
    with RunStore(db) as store:
        run_sweep(judged_config(tmp_path, server), store)
    assert litm(["results", "--db", str(db), "--audit"]) == 0
    assert "no sweep here has both" in capsys.readouterr().out
    assert litm(["results", "--db", str(db), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["judge_audit"] == []


def test_the_clustered_interval_against_a_hand_worked_example():
    """Three questions of three samples each: 2/3, 0 and 3/3 right. By hand: the mean 5/9; the question
    means' deviations 1/9, -5/9, 4/9, so var = (1 + 25 + 16)/81 / (3 - 1) / 3 = 7/81, se = sqrt(7)/9;
    the interval mean +- 1.96 se, cut to [0, 1]."""
    from components.core.stats import clustered_mean_ci

    values = [1, 1, 0, 0, 0, 0, 1, 1, 1]
    mean, se, low, high = clustered_mean_ci(values, ["q1"] * 3 + ["q2"] * 3 + ["q3"] * 3)
    assert mean == pytest.approx(5 / 9) and se == pytest.approx(7**0.5 / 9)
    assert (low, high) == (0.0, 1.0)  # 5/9 -+ 0.576 leaves [0, 1]
    # real values are not cut, and one question gives no interval
    m2, se2, lo2, hi2 = clustered_mean_ci([0.2, 0.4, 0.6, 0.8], ["a", "a", "b", "b"])
    assert se2 == pytest.approx(0.2) and lo2 == pytest.approx(0.5 - 1.959964 * 0.2)
    assert clustered_mean_ci([1, 0, 1], ["a"] * 3)[1] != clustered_mean_ci([1, 0, 1], ["a"] * 3)[1]  # NaN


def test_a_store_migrates_to_schema_11_with_the_judge_and_sample_columns(tmp_path):
    with RunStore(tmp_path / "s.sqlite") as store:
        assert store.schema_version == 11
        cols = {r[1] for r in store.db.execute("PRAGMA table_info(trials)")}
    assert {"judge", "judge_reply", "sample"} <= cols


def test_a_judge_that_fails_makes_the_trial_an_error_and_a_retry_asks_again(tmp_path, server):
    judge = loop_judge(server) + "\nmax_retries = 0"
    c = judged_config(tmp_path, server, sweep='metric = "judge"\nfail_fast = 0', judge=judge)
    store = RunStore(tmp_path / "s.sqlite")
    server.set(fail_match=JUDGE_MARK)
    first = run_sweep(c, store)
    assert first.status == "done" and first.errors == 18
    f = store.trials_frame()
    assert f["error"].str.startswith("judge: ").all() and f["judge"].isna().all()
    server.set(fail_match=None)
    again = run_sweep(c, store, retry_errors=True)
    assert again.errors == 0 and store.trials_frame()["judge"].notna().all()


def test_a_stored_judged_sampled_config_reads_back_the_same(tmp_path, server):
    c = judged_config(
        tmp_path,
        server,
        sweep='metric = "judge"\nsamples = 2',
        model="temperature = 0.5\nseed = 3",
        judge=loop_judge(server),
    )
    back = SweepConfig.from_stored(json.dumps(c.to_dict()))
    assert (back.judge, back.samples, back.metric, back.models) == (c.judge, 2, "judge", c.models)
    assert back.models[0].temperature == 0.5 and back.settings(back.models[0], 64, 1) == Settings(64, 0.5, 4)


def test_from_the_command_line_a_judged_sampled_sweep_reruns_sending_nothing(tmp_path, server, capsys):
    c = judged_config(
        tmp_path, server, sweep='metric = "judge"\nsamples = 3', model=TEMPERATURE, judge=loop_judge(server)
    )
    toml, db = tmp_path / "demo.toml", str(tmp_path / "s.sqlite")
    assert litm(["sweep", str(toml), "--db", db, "--dry-run"]) == 0
    dry = capsys.readouterr().out
    calls = int(re.search(r"calls:\s+([\d,]+) to send", dry).group(1).replace(",", ""))
    assert calls == 54 * 2 and server.counts["total"] == 0  # 54 answers and 54 judgements; nothing sent
    assert litm(["sweep", str(toml), "--db", db]) == 0
    sent = server.counts["total"]
    assert 54 < sent < 108  # a judgement shared by trials with the same question and answer is sent once
    assert litm(["sweep", str(toml), "--db", db]) == 0 and server.counts["total"] == sent
    capsys.readouterr()
    assert litm(["results", "--db", db, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["metric"] == "primary" and {p["n"] for cv in out["curves"] for p in cv["points"]} == {3}
    assert c.samples == 3
