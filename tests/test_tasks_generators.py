import re

import pytest

from components.tasks.generators import KINDS, generate
from components.tasks.importers import task_record


def _has(text, s):
    return re.search(r"(?<!\w)" + re.escape(s) + r"(?!\w)", text, re.IGNORECASE) is not None


@pytest.mark.parametrize("kind", KINDS)
def test_deterministic_for_a_seed(kind):
    a = [task_record(t) for t in generate(kind, 3, 11)]
    b = [task_record(t) for t in generate(kind, 3, 11)]
    c = [task_record(t) for t in generate(kind, 3, 12)]
    assert a == b
    assert a != c


@pytest.mark.parametrize("kind", [k for k in KINDS if k != "passkey-concat"])
def test_answers_only_in_gold_pages(kind):
    for task in generate(kind, 12, 3):
        assert task.gold_indices, task.id
        for ans in task.answers:
            hits = {i for i, p in enumerate(task.passages) if _has(p.text, ans)}
            assert hits, (task.id, ans)
            assert hits <= set(task.gold_indices), (task.id, ans, hits)
        # every gold page holds an answer, except the intermediate links of a chain
        if kind not in ("passkey-multihop", "facts-multihop"):
            for i in task.gold_indices:
                assert any(_has(task.passages[i].text, a) for a in task.answers)


def test_passkey_concat_parts_in_their_gold_pages():
    for task in generate("passkey-concat", 10, 2):
        parts = task.meta["parts"]
        assert task.answers == ("".join(parts),)
        for part in parts:
            hits = [i for i, p in enumerate(task.passages) if part in p.text]
            assert len(hits) == 1 and task.passages[hits[0]].gold


def test_kv_is_litm_style():
    task = generate("kv", 1, 0, pairs=140)[0]
    assert len(task.passages) == 140 and len(task.gold_indices) == 1
    gold = task.passages[task.gold_indices[0]].text
    assert gold == f'"{task.question}": "{task.answers[0]}"'
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", task.question)


def test_niah_needles_and_variants():
    single = generate("niah", 1, 0)[0]
    (g,) = single.gold_indices
    assert re.fullmatch(
        r"One of the special magic numbers for [a-z]+-[a-z]+ is: \d{7}\.", single.passages[g].text
    )
    mk = generate("niah-multikey", 1, 0)[0]
    needles = [p for p in mk.passages if p.text.startswith("One of the special magic numbers")]
    assert len(needles) == 4 and sum(p.gold for p in needles) == 1
    mv = generate("niah-multivalue", 1, 0)[0]
    assert len(mv.answers) == 4 and len(mv.gold_indices) == 4 and mv.meta["answer_mode"] == "all"
    hop = generate("passkey-multihop", 1, 0)[0]
    assert len(hop.gold_indices) == 2 and hop.question.startswith("What is the pass key of")
    assert any("is the pass key of" in hop.passages[i].text for i in hop.gold_indices)


def test_multi_query_niah_is_rulers_fourth_variant():
    """RULER's niah_multiquery (ALR2 App. B.1, MQ-NIAH): four keys of one value each, all asked in one
    question, every value required; the bundled set is `litm tasks generate niah-multiquery --n 20 --seed 0
    --param paragraphs=12`."""
    from pathlib import Path

    from components.tasks.importers import read_tasks

    mq = generate("niah-multiquery", 20, 0, paragraphs=12)
    first = mq[0]
    assert first.question == (
        "What are all the special magic numbers for wild-anchor, sunny-shovel, upbeat-valley, and "
        "early-garden mentioned in the provided text?"
    )
    assert first.answers == ("4827919", "5774737", "2213459", "2251172")
    assert first.gold_indices == (3, 8, 13, 14) and len(first.passages) == 16
    assert first.meta["answer_mode"] == "all" and first.metric == "ruler-all"
    assert sorted(first.passages[i].text for i in first.gold_indices) == sorted(
        f"One of the special magic numbers for {k} is: {v}."
        for k, v in zip(first.meta["keys"], first.answers, strict=True)
    )
    tasks = Path(__file__).resolve().parent.parent / "sample_docs" / "tasks"
    assert [task_record(t) for t in read_tasks(tasks / "niah-multiquery.jsonl").tasks] == [
        task_record(t) for t in mq
    ]
    with pytest.raises(ValueError, match="at least 2 queries"):
        generate("niah-multiquery", 1, 0, queries=1)


def test_the_ruler_set_takes_the_four_variants_in_turn():
    """niah-ruler: S, MK, MV, MQ in turn, each task as its own kind's generator makes it, so the bundled
    80-task set is the four bundled sets of 20 interleaved."""
    from pathlib import Path

    from components.tasks.importers import read_tasks

    got = generate("niah-ruler", 6, 0, paragraphs=12)
    assert [t.id for t in got] == [
        "niah-0-0000",
        "niah-multikey-0-0000",
        "niah-multivalue-0-0000",
        "niah-multiquery-0-0000",
        "niah-0-0001",
        "niah-multikey-0-0001",
    ]
    tasks = Path(__file__).resolve().parent.parent / "sample_docs" / "tasks"
    ruler = read_tasks(tasks / "niah-ruler.jsonl").tasks
    kinds = ("niah", "niah-multikey", "niah-multivalue", "niah-multiquery")
    own = {k: read_tasks(tasks / f"{k}.jsonl").tasks for k in kinds}
    assert len(ruler) == 80
    assert [task_record(t) for t in ruler] == [task_record(own[kinds[i % 4]][i // 4]) for i in range(80)]


def test_facts_many_distinct_tasks_and_multihop_needs_both():
    tasks = generate("facts", 150, 0)
    assert len({t.question for t in tasks}) == 150
    for t in generate("facts-multihop", 20, 0):
        assert len(t.gold_indices) == 2
        first, second = (t.passages[i] for i in t.gold_indices)
        # exactly one of the two gold passages states the answer; the other is the bridge
        assert sum(_has(p.text, t.answers[0]) for p in (first, second)) == 1


def test_bad_kind_and_n():
    with pytest.raises(ValueError, match="unknown task kind"):
        generate("nope", 1, 0)
    with pytest.raises(ValueError):
        generate("kv", 0, 0)
    with pytest.raises(ValueError):
        generate("kv", 1, 0, bogus=3)
