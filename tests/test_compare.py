"""components.report.compare against numbers worked out by hand or published.

- Wilson 7/10: (0.3968, 0.8922), worked below from the closed form.
- Newcombe's paired interval (method 10) on Cavo et al. 2012 (Fagerland, Lydersen & Laake, "Statistical
  Analysis of Contingency Tables", ch. 8; the `contingencytables` R package's test): table
  [[59, 6], [16, 80]] gives -0.0621 (95% CI -0.1186 to -0.0046).
- Exact McNemar for 6 against 16 discordant pairs: 2 * sum_{k<=6} C(22, k) / 2^22
  = 2 * 110056 / 4194304 = 0.0524787...
- Connor (1987) pairs for d = 0.05, psi = 0.2, alpha 0.05, power 0.8: 626 (worked below).
"""

from __future__ import annotations

import math

import pandas as pd
import pytest

from components.report import compare as cmp
from components.report import pairstats, planner, report_html, verdict

Z = 1.959963984540054  # the 97.5% normal quantile
ZB = 0.8416212335729143  # the 80% normal quantile


def test_wilson_interval_by_hand():
    n, k = 10, 7
    p = k / n
    centre = (k + Z * Z / 2) / (n + Z * Z)
    half = Z * math.sqrt(n * p * (1 - p) + Z * Z / 4) / (n + Z * Z)
    assert (round(centre - half, 4), round(centre + half, 4)) == (0.3968, 0.8922)
    df = _trials({"x": [1] * 7 + [0] * 3})
    row = cmp.arms(df).iloc[0]
    assert row["n"] == 10 and row["accuracy"] == 0.7
    assert row["lo"] == pytest.approx(centre - half, abs=1e-9) and row["hi"] == pytest.approx(
        centre + half, abs=1e-9
    )


def test_newcombe_paired_interval_matches_the_published_example():
    lo, hi = pairstats.newcombe_paired_ci(59, 6, 16, 80)
    assert (round(lo, 4), round(hi, 4)) == (-0.1186, -0.0046)
    # no discordance at all: a difference of 0 whose interval still has width
    lo, hi = pairstats.newcombe_paired_ci(5, 0, 0, 5)
    assert lo < 0 < hi
    assert all(math.isnan(x) for x in pairstats.newcombe_paired_ci(0, 0, 0, 0))  # no pairs, no interval


def test_exact_mcnemar_by_hand():
    below = sum(math.comb(22, k) for k in range(7))
    assert below == 110056
    assert pairstats.mcnemar_exact(6, 16) == pytest.approx(2 * below / 2**22, rel=1e-12)
    assert pairstats.mcnemar_exact(16, 6) == pytest.approx(0.0524787, abs=1e-7)
    assert pairstats.mcnemar_exact(0, 0) == 1.0
    assert pairstats.mcnemar_exact(4, 1) == pytest.approx(2 * (1 + 5) / 32)  # 2 * P(X <= 1), X ~ Bin(5, 1/2)


def test_planner_by_hand():
    need = (Z * math.sqrt(0.2) + ZB * math.sqrt(0.2 - 0.05**2)) ** 2 / 0.05**2
    assert math.ceil(need) == 626
    assert planner.pairs_needed(0.05, 0.2) == 626
    assert planner.pairs_needed(0.05) == 626  # the stated default discordance is 0.2
    assert planner.pairs_needed(0.10, 0.2) < 626  # a larger difference needs fewer
    assert planner.pairs_needed(0.3, 0.01) == planner.pairs_needed(
        0.3, 0.3
    )  # discordance is at least the difference
    with pytest.raises(ValueError, match="between 0 and 1"):
        planner.pairs_needed(5)


def _trials(
    arms: dict[str, list[int]], *, model: str = "openai:gpt-4o-mini", tokens=(1000, 10)
) -> pd.DataFrame:
    """One trial per task and arm (strategy = the arm's name), fuzzy scores as given."""
    rows = []
    for name, scores in arms.items():
        for i, s in enumerate(scores):
            rows.append(
                {
                    "task": f"t{i}",
                    "length": 1000,
                    "position": 0.5,
                    "strategy": name,
                    "params": "{}",
                    "model": model,
                    "metric": "fuzzy",
                    "score": s,
                    "error": None,
                    "calls": 1,
                    "input_tokens": tokens[0],
                    "output_tokens": tokens[1],
                    "latency_s": 0.5,
                }
            )
    return pd.DataFrame(rows)


@pytest.fixture
def two_arms() -> pd.DataFrame:
    # tasks t0..t9 matched: both right 3, only A 4, only B 1, neither 2; A has an 11th task (unmatched);
    # B failed on t10 with an error (not scored, never counted as wrong)
    a = [1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1]
    b = [1, 1, 1, 0, 0, 0, 0, 1, 0, 0]
    df = pd.concat([_trials({"A": a}), _trials({"B": b}, tokens=(3000, 20))], ignore_index=True)
    err = df.iloc[[-1]].copy()
    err["task"], err["error"], err["score"] = "t10", "rate limited", None
    return pd.concat([df, err], ignore_index=True)


def test_arms_accuracy_cost_and_pareto(two_arms):
    t = cmp.arms(two_arms).set_index("label")
    a, b = t.loc["A · gpt-4o-mini"], t.loc["B · gpt-4o-mini"]
    assert (a["n"], a["correct"], b["n"], b["correct"], b["errors"], b["trials"]) == (11, 8, 10, 4, 1, 11)
    # cost per 1,000 questions = mean tokens x list price (gpt-4o-mini: $0.15 in, $0.60 out per 1M)
    assert a["cost_per_1000_usd"] == pytest.approx(1000 * (1000 * 0.15 + 10 * 0.60) / 1e6)
    assert b["cost_per_1000_usd"] == pytest.approx(1000 * (3000 * 0.15 + 20 * 0.60) / 1e6)
    assert a["calls_per_question"] == 1 and a["latency_s_per_question"] == 0.5
    assert not a["dominated"] and b["dominated"]  # A is more accurate and cheaper
    batch = cmp.arms(two_arms, batch=True).set_index("label")
    assert batch.loc["A · gpt-4o-mini", "cost_per_1000_usd"] == pytest.approx(a["cost_per_1000_usd"] / 2)
    repriced = cmp.arms(two_arms, price_model="gpt-4o").set_index("label")  # $2.50 in, $10 out
    assert repriced.loc["A · gpt-4o-mini", "cost_per_1000_usd"] == pytest.approx(1000 * (2500 + 100) / 1e6)
    assert repriced.loc["A · gpt-4o-mini", "priced_as"] == "openai:gpt-4o"
    unknown = cmp.arms(two_arms, price_model="no-such-model")
    assert unknown["cost_per_1000_usd"].isna().all() and unknown["dominated"].all()


def test_pair_is_paired_and_counts_what_it_leaves_out(two_arms):
    p = cmp.compare_pair(cmp.prepare(two_arms), "A · gpt-4o-mini", "B · gpt-4o-mini")
    assert (p.n_matched, p.left_out_a, p.left_out_b) == (10, 1, 0)
    assert (p.both_correct, p.only_a, p.only_b, p.neither) == (3, 4, 1, 2)
    assert p.diff == pytest.approx(0.3) and p.p_value == pytest.approx(0.375)
    assert p.ci == pytest.approx(list(pairstats.newcombe_paired_ci(3, 4, 1, 2)))
    assert p.ci[0] < 0.3 < p.ci[1]


def test_fractional_scores_use_the_verdict_rule():
    df = _trials({"A": [0.5, 0.0, 1.0], "B": [0, 0, 1]})
    t = cmp.arms(df).set_index("label")
    assert t.loc["A · gpt-4o-mini", "correct"] == 2  # non-zero is correct (webapp/services/live.py's verdict)


def test_recommendation_is_computed(two_arms):
    out = cmp.compare(two_arms)
    v = out.verdict
    # A is the most accurate and the cheaper; B is not significantly worse: not yet
    assert v.line == (
        "Recommend A · gpt-4o-mini · saves $0.31 per 1,000 questions against B · gpt-4o-mini · not yet"
    )
    assert v.kind == "tie" and v.versus == "B · gpt-4o-mini"
    assert out.recommendation.startswith(v.line + ". A · gpt-4o-mini is the most accurate (73%, n = 11)")
    assert v.to_dict()["line"] == v.line
    assert "Holm-adjusted p = 0.38" in v.reasons
    need = math.ceil((Z * math.sqrt(0.5) + ZB * math.sqrt(0.5 - 0.09)) ** 2 / 0.09)
    assert f"about {need} matched trials" in v.reasons and need == 42 and v.confidence == "not yet"
    # a cheaper arm within 9 points at half the cost is not confidently recommended (its interval allows far
    # worse); the data cannot tell it from A, so as a tie it is the one recommended, "not yet"
    c = _trials({"C": [1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1]}, tokens=(500, 10))
    out = cmp.compare(pd.concat([two_arms, c], ignore_index=True))
    v = out.verdict
    assert v.recommend == "C · gpt-4o-mini" and v.versus == "A · gpt-4o-mini" and v.confidence == "not yet"
    assert "C · gpt-4o-mini would save 48%" in v.reasons and "not yet shown within 5 points" in v.reasons
    # a clear winner, after Holm
    win = _trials({"W": [1] * 20, "L": [0] * 20})
    v = cmp.compare(win).verdict
    assert (
        v.line
        == "Recommend W · gpt-4o-mini · saves $0 per 1,000 questions against L · gpt-4o-mini · confident"
    )
    assert v.kind == "winner"
    assert "significantly better than every other arm after Holm's correction" in v.reasons
    free = cmp.compare(_trials({"W": [1] * 20, "L": [0] * 20}, model="local:qwen2.5-coder-0.5b-instruct"))
    assert free.verdict.line == (
        "Recommend W · Qwen2.5 Coder 0.5B · saves $0 per 1,000 questions at "
        "gpt-4o-mini prices against L · Qwen2.5 Coder 0.5B (free here) · confident"
    )
    assert cmp.compare(_trials({"W": [1]})).recommendation.startswith("No recommendation")


def _same(n: int, tokens: tuple[int, int]) -> list[int]:
    return [1 if i % 3 else 0 for i in range(n)]


def test_cheaper_arm_is_recommended_only_when_non_inferior_and_saving_enough():
    base = _trials({"A": _same(300, (1000, 10))}, tokens=(1000, 10))
    cheap = _trials({"C": _same(300, (400, 10))}, tokens=(400, 10))
    v = cmp.compare(pd.concat([base, cheap], ignore_index=True)).verdict
    saving = 1000 * ((1000 - 400) * 0.15) / 1e6
    assert v.line == (
        f"Recommend C · gpt-4o-mini · saves {verdict.money(saving)} per 1,000 questions against "
        "A · gpt-4o-mini · confident"
    )
    assert v.recommend == "C · gpt-4o-mini" and v.saving_per_1000_usd == pytest.approx(saving)
    assert "non-inferior within the 5 points margin" in v.reasons
    # the same arm saving only 5% of the cost is below the 10% minimum: not confidently (as a tie, not yet)
    small = _trials({"C": _same(300, (950, 10))}, tokens=(950, 10))
    v = cmp.compare(pd.concat([base, small], ignore_index=True)).verdict
    assert v.kind == "tie" and v.confidence == "not yet"
    # a minimum the user lowers lets it through; a tighter margin than its interval stops it
    lowered = cmp.compare(pd.concat([base, small], ignore_index=True), min_saving=0.01).verdict
    assert (lowered.recommend, lowered.confidence) == ("C · gpt-4o-mini", "confident")
    assert (
        cmp.compare(pd.concat([base, cheap], ignore_index=True), margin=0.001).verdict.confidence == "not yet"
    )


def test_of_two_equally_cheap_non_inferior_arms_the_more_accurate_is_recommended():
    base = _trials({"A": _same(300, (1000, 10))}, tokens=(1000, 10))
    worse = [0 if i % 50 == 1 else x for i, x in enumerate(_same(300, (400, 10)))]  # 6 fewer right
    cheap = _trials({"B": worse, "C": _same(300, (400, 10))}, tokens=(400, 10))
    labels = [f"{a} · gpt-4o-mini" for a in "ABC"]  # the less accurate B listed before C
    v = cmp.compare(pd.concat([base, cheap], ignore_index=True), labels, margin=0.10).verdict
    assert v.recommend == "C · gpt-4o-mini" and v.confidence == "confident"


def test_a_tie_recommends_the_cheaper_arm_first():
    """Equal accuracy (or no significant difference): the cheaper arm is recommended, named first, with
    its saving in the second clause; never the dearer one first, never without "Recommend"."""
    dear = _trials({"A": [1, 0, 1, 0, 1, 1]}, tokens=(3000, 10))
    cheap = _trials({"B": [1, 0, 1, 0, 1, 1]}, tokens=(1000, 10))
    for order in (["A · gpt-4o-mini", "B · gpt-4o-mini"], ["B · gpt-4o-mini", "A · gpt-4o-mini"]):
        v = cmp.compare(pd.concat([dear, cheap], ignore_index=True), order).verdict
        saving = 1000 * 2000 * 0.15 / 1e6
        assert v.line == (
            f"Recommend B · gpt-4o-mini · saves {verdict.money(saving)} per 1,000 questions against "
            "A · gpt-4o-mini · not yet"
        )
        assert v.line.split()[0] == "Recommend" and v.recommend == "B · gpt-4o-mini" and v.kind == "tie"
        assert v.saving_per_1000_usd == pytest.approx(saving) and "a tie" in v.reasons
        assert v.reasons.startswith("B · gpt-4o-mini and A · gpt-4o-mini")  # the cheaper named first
    # not significantly different though A is more accurate: still the cheaper, not yet
    unsure = pd.concat([_trials({"A": [1, 1, 1, 0, 1, 1]}, tokens=(3000, 10)), cheap], ignore_index=True)
    v = cmp.compare(unsure).verdict
    assert v.recommend == "B · gpt-4o-mini" and v.versus == "A · gpt-4o-mini" and v.confidence == "not yet"
    assert v.line.startswith("Recommend B · gpt-4o-mini · saves $0.30 per 1,000 questions")


def test_a_clear_winner_is_confident_and_says_what_it_costs_more():
    win = pd.concat(
        [_trials({"W": [1] * 20}, tokens=(3000, 10)), _trials({"L": [0] * 20}, tokens=(1000, 10))],
        ignore_index=True,
    )
    v = cmp.compare(win).verdict
    assert v.kind == "winner" and v.confidence == "confident" and v.recommend == "W · gpt-4o-mini"
    assert (
        v.line
        == "Recommend W · gpt-4o-mini · costs $0.30 more per 1,000 questions than L · gpt-4o-mini · confident"
    )
    assert v.saving_per_1000_usd == pytest.approx(-0.3)


def test_all_free_arms_are_priced_at_a_reference_and_tied_arms_ranked_by_tokens():
    local = "local:qwen2.5-coder-0.5b-instruct"
    df = pd.concat(
        [
            _trials({"A": [1, 0, 1, 0, 1, 1]}, model=local, tokens=(3000, 10)),
            _trials({"B": [1, 0, 1, 0, 1, 1]}, model=local, tokens=(1000, 10)),
        ],
        ignore_index=True,
    )
    v = cmp.compare(df).verdict
    assert v.free and v.reference == cmp.REFERENCE_MODEL and v.saving_per_1000_usd == 0
    assert v.recommend == "B · Qwen2.5 Coder 0.5B" and v.tokens_saved_per_question == 2000
    assert v.reference_saving_per_1000_usd == pytest.approx(0.3)
    assert v.line == (
        "Recommend B · Qwen2.5 Coder 0.5B · saves $0.30 per 1,000 questions at gpt-4o-mini "
        "prices against A · Qwen2.5 Coder 0.5B (free here) · not yet"
    )
    none = cmp.compare(_trials({"W": [1]})).verdict
    assert none.line.startswith("No recommendation · ") and none.recommend is None


def test_money_reads_as_money():
    assert [verdict.money(x) for x in (3729.6633, 3.7296, 0.306, 0.0042, 0)] == [
        "$3,729.66",
        "$3.73",
        "$0.31",
        "$0.0042",
        "$0",
    ]


def test_holm_is_statsmodels_and_the_verdict_never_uses_a_raw_p_it_rejects():
    from statsmodels.stats.multitest import multipletests

    # five arms: W beats L at raw p = 0.031 (exact McNemar, 6 against 0 discordant pairs), which Holm's
    # correction over the 10 pairs does not keep
    w = [1] * 6 + [1, 0] * 10
    arms = {"W": w, "L": [0] * 6 + [1, 0] * 10, "M1": w, "M2": w, "M3": w}
    out = cmp.compare(_trials(arms), labels=[f"{a} · gpt-4o-mini" for a in ("W", "L", "M1", "M2", "M3")])
    raw = [p.p_value for p in out.pairs]
    assert [p.p_holm for p in out.pairs] == pytest.approx(list(multipletests(raw, method="holm")[1]))
    wl = next(p for p in out.pairs if {p.a, p.b} == {"W · gpt-4o-mini", "L · gpt-4o-mini"})
    assert wl.p_value < 0.05 <= wl.p_holm
    v = out.verdict
    assert v.confidence == "not yet" and "significantly" not in v.reasons


def test_by_position_and_failures():
    df = pd.concat([_trials({"A": [1, 0, 1, 1]}), _trials({"B": [0, 0, 1, 1]})], ignore_index=True)
    df.loc[df["task"].isin(["t2", "t3"]), "position"] = 1.0
    df["answer"] = [f"ans-{s}-{t}" for s, t in zip(df["strategy"], df["task"], strict=True)]
    assert cmp.cells_per_task(df, ["A · gpt-4o-mini", "B · gpt-4o-mini"]) == 2
    per = cmp.by_position(cmp.prepare(df), "A · gpt-4o-mini", "B · gpt-4o-mini").set_index("position")
    assert per.loc[0.5, "diff"] == 0.5 and per.loc[1.0, "diff"] == 0.0 and per.loc[0.5, "n_matched"] == 2
    bad = cmp.failures(cmp.prepare(df), "A · gpt-4o-mini", "B · gpt-4o-mini")
    assert list(bad["task"]) == ["t0", "t1"]
    assert list(bad["answer_a"]) == ["ans-A-t0", "ans-A-t1"] and list(bad["answer_b"]) == [
        "ans-B-t0",
        "ans-B-t1",
    ]


def test_choosing_arms_and_lengths(two_arms):
    with pytest.raises(LookupError, match="no arm named 'Z'"):
        cmp.compare(two_arms, ["Z"])
    out = cmp.compare(two_arms, ["B · gpt-4o-mini", "A · gpt-4o-mini"])
    assert list(out.arms["label"]) == ["B · gpt-4o-mini", "A · gpt-4o-mini"]
    assert out.pairs[0].a == "B · gpt-4o-mini" and out.pairs[0].diff == pytest.approx(-0.3)
    assert cmp.compare(two_arms, length=2000).arms.empty
    assert out.plan.discordance_source == "seen" and out.plan.discordance == 0.5


def test_arm_label_names_strategy_params_and_model():
    from components.report.sweeps import arm_label

    assert (
        arm_label({"strategy": "rr", "params": '{"k": 3, "r": 5000}', "model": "openai:gpt-4o-mini"})
        == "R&R · r=5,000, k=3 · gpt-4o-mini"
    )  # the registry's name, the parameters in its order and in full, the model's name
    assert (
        arm_label({"strategy": "icr", "params": {"k": 3}, "model": "local:qwen2.5-coder-0.5b-instruct"})
        == "ICR · k=3 · Qwen2.5 Coder 0.5B"
    )


def test_pareto_chart_greys_dominated_arms(two_arms):
    from components.report import charts

    fig = charts.pareto(cmp.arms(two_arms))
    points = {t.name: t for t in fig.data if t.name != "Pareto front"}
    assert points["2 B · gpt-4o-mini (dominated)"].marker.color == "#B0B0B0"
    assert points["1 A · gpt-4o-mini"].marker.color != "#B0B0B0" and points["1 A · gpt-4o-mini"].text == (
        "1",
    )
    assert points["1 A · gpt-4o-mini"].y == (8 / 11,)
    evil = two_arms.assign(model="openai:<b>gpt-4o-mini</b>")
    names = [t.name for t in charts.pareto(cmp.arms(evil, price_model="gpt-4o-mini")).data]
    assert all("<b>" not in n for n in names) and any("&lt;b&gt;" in n for n in names)


def test_default_arms_come_from_one_sweep_so_they_can_be_paired():
    import pandas as pd

    from components.report.compare import default_arms

    t = pd.DataFrame(
        {"sweep_key": ["a", "a", "b", "b", "b", "b"], "arm": ["oracle", "oracle", "base", "re", "rr", "base"]}
    )
    assert default_arms(t, ["oracle", "base", "re", "rr"]) == ["base", "re", "rr"]
    assert default_arms(t, ["oracle", "base", "re", "rr"], most=2) == ["base", "re"]
    single = pd.DataFrame({"sweep_key": ["a", "b"], "arm": ["x", "y"]})
    assert default_arms(single, ["x", "y"]) == ["x", "y"]  # no sweep has two arms: the best ones


def test_untimed_batch_answers_make_seconds_unknown_not_zero(two_arms):
    df = two_arms.copy()
    df.loc[df["strategy"] == "B", "latency_s"] = 0.0  # B answered by a batch API: no time per request
    df.loc[df.index[0], "latency_s"] = 0.0  # one untimed trial in A is left out of A's mean, not averaged in
    t = cmp.arms(df).set_index("label")
    assert t.loc["A · gpt-4o-mini", "latency_s_per_question"] == 0.5
    assert math.isnan(t.loc["B · gpt-4o-mini", "latency_s_per_question"])
    assert cmp.seconds_text(t.loc["B · gpt-4o-mini", "latency_s_per_question"]) == "unknown"
    assert cmp.seconds_text(0.5) == "0.50"
    html = report_html.arms_html(t.reset_index())
    assert "unknown" in html and "0.50" in html


def test_pareto_axes_start_at_zero_and_coinciding_arms_share_one_label(two_arms):
    from components.report import charts

    table = cmp.arms(two_arms)
    fig = charts.pareto(table)
    assert fig.layout.xaxis.range[0] == 0 and fig.layout.yaxis.range[0] == 0  # never negative dollars
    assert fig.layout.xaxis.range[1] > table["cost_per_1000_usd"].max()
    free = table.assign(cost_per_1000_usd=0.0, accuracy=0.5, dominated=False)  # two arms on one spot
    points = [t for t in charts.pareto(free, reference=None).data if t.name != "Pareto front"]
    assert [t.text for t in points] == [("1, 2",), ("",)]  # one label naming both, by their numbers
    assert "runs free" in charts.pareto(free, reference=None).layout.xaxis.title.text
    # free arms are drawn at the reference price from their tokens (the verdict's saving uses the same)
    ref = charts.pareto(free)
    xs = sorted(t.x[0] for t in ref.data if t.name != "Pareto front")
    assert xs == pytest.approx(
        sorted(
            cmp.cost_per_1000(i, o, cmp.REFERENCE_MODEL)
            for i, o in zip(
                table["input_tokens_per_question"], table["output_tokens_per_question"], strict=True
            )
        )
    )
    assert (
        "at gpt-4o-mini list prices, for reference (every arm runs free here)" in ref.layout.xaxis.title.text
    )
    assert charts.arm_numbers(table) == {"A · gpt-4o-mini": 1, "B · gpt-4o-mini": 2}


def test_point_labels_are_placed_apart():
    from components.report import labels

    xs, ys = [0.1, 0.12, 0.14, 0.5, 0.52], [0.50, 0.50, 0.52, 0.3, 0.31]
    texts = ["1", "2", "3", "4", "5"]
    places = labels.place_labels(xs, ys, texts, [0, 1], [0, 1])
    w, h = labels.LABEL_PLOT
    boxes = [labels.label_box(pl, x * w, y * h, t) for pl, x, y, t in zip(places, xs, ys, texts, strict=True)]
    for i, a in enumerate(boxes):
        assert a[0] >= 0 and a[2] <= w and a[1] >= 0 and a[3] <= h
        assert all(labels.overlap(a, b) == 0 for b in boxes[i + 1 :]), places
    # a point at the left edge never has its label to its left (cut at the axis)
    assert labels.place_labels([0.0], [0.5], ["1"], [0, 1], [0, 1]) == ["middle right"]
