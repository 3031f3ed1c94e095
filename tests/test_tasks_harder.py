"""The harder task families (components/tasks/harder.py): latent, spaced and near-miss, each with its
literal control built from the same facts. Exact items for a seed; the properties each family promises;
the same seed giving the same bytes through `litm tasks generate`."""

from __future__ import annotations

import re

import pytest

from components.cli import main
from components.core.resources import package_path
from components.core.tokens import DEFAULT_ENCODING, tokenizer
from components.tasks.generators import KINDS, generate
from components.tasks.harder import GENERATORS, bank, content_words, names


def gold(task) -> str:
    (i,) = task.gold_indices
    return task.passages[i].text


def stopwords() -> set[str]:
    """The list the project ships (NLTK's English stopwords), read here on its own."""
    lines = package_path("data", "stopwords_en.txt").read_text(encoding="utf-8").splitlines()
    return {w.strip() for w in lines if w.strip() and not w.startswith("#")}


def words(text: str) -> set[str]:
    """Content words, by a second reading: runs of letters, lower-cased, "'s" dropped, stopwords out."""
    found = {w.lower().removesuffix("'s") for w in re.findall(r"[A-Za-zÀ-ÿ]+(?:'s)?", text)}
    return found - stopwords()


def test_the_three_kinds_are_offered():
    assert set(GENERATORS) == {"latent", "spaced", "near-miss"} and set(GENERATORS) <= set(KINDS)


def test_latent_items_exactly():
    (one,) = generate("latent", 1, 0)
    assert one.id == "latent-h1-0-0000"
    assert one.question == "Which character knows the cuisine of Greece?"
    assert one.answers == ("Kalinda",)
    assert gold(one) == "On Sundays Kalinda makes a tray of moussaka for the whole family."
    assert one.meta["link"] == ["a tray of moussaka", "Greece"] and one.meta["hops"] == 1
    (two,) = generate("latent", 1, 0, hops=2)
    assert two.question == "Which character knows the cuisine of the Balkans?"
    assert gold(two) == gold(one) and two.meta["link"] == ["a tray of moussaka", "Greece", "the Balkans"]
    (lit,) = generate("latent", 1, 0, literal=1)
    assert lit.id == "latent-literal-h1-0-0000" and lit.meta["control"] == "literal"
    assert lit.question == one.question and lit.answers == one.answers
    assert gold(lit) == "Kalinda knows the cuisine of Greece."
    # the same haystack around it: only the needle differs
    assert [p.text for p in lit.passages if not p.gold] == [p.text for p in one.passages if not p.gold]


@pytest.mark.parametrize("hops", [1, 2])
def test_no_latent_question_shares_a_content_word_with_its_needle(hops):
    tasks = [t for seed in range(6) for t in generate("latent", 40, seed, hops=hops)]
    for t in tasks:
        assert not words(t.question) & words(gold(t)), (t.question, gold(t))
        assert not content_words(t.question) & content_words(gold(t)), (t.question, gold(t))
    # every needle of every bank item was drawn (3 per item) and none of the literal controls holds
    b = bank("latent")
    assert {gold(t).replace(t.answers[0], "{name}") for t in tasks} >= {
        n.format(name="{name}", clue=i["clue"])
        for i in b["items"][:5]
        for n in b["templates"][i["kind"]]["needles"]
    }
    for t in generate("latent", 40, 0, hops=hops, literal=1):
        assert words(t.question) & words(gold(t)), (t.question, gold(t))  # the control matches literally


def test_the_checker_would_see_a_shared_word():
    assert words("Which character has been to Dresden?") & words("Dalia lives in Dresden.") == {"dresden"}
    assert content_words("Dalia's flat") == {"dalia", "flat"}


def test_spaced_items_exactly():
    (near,) = generate("spaced", 1, 0, distance=0)
    assert near.question == "Who leads the choir that Dalia sings in?" and near.answers == ("Imogen Tallis",)
    assert gold(near) == (
        "Dalia sings in the choir of the Saltmarsh Tea Company. "
        "The choir of the Saltmarsh Tea Company is led by Imogen Tallis."
    )
    (lit,) = generate("spaced", 1, 0, distance=0, literal=1)
    assert (
        gold(lit) == "Dalia sings in the choir of the Saltmarsh Tea Company, which is led by Imogen Tallis."
    )
    (far,) = generate("spaced", 1, 0, distance=100)
    text = gold(far)
    assert text.startswith(
        "Dalia sings in the choir of the Saltmarsh Tea Company. Railways of a smaller kind "
    )
    assert text.endswith(
        " old steam and diesel trains running on lines that were once closed. The choir of the "
        "Saltmarsh Tea Company is led by Imogen Tallis."
    )
    assert far.meta["distance"] == 100 and far.meta["distance_tokens"] == 103


@pytest.mark.parametrize("distance", [50, 400, 1500])
def test_spaced_facts_sit_the_asked_distance_apart(distance):
    count = tokenizer(DEFAULT_ENCODING).count
    for t in generate("spaced", 8, 4, distance=distance):
        first, second = t.gold_sentences
        text = gold(t)
        assert text.startswith(first + " ") and text.endswith(" " + second)
        between = text[len(first) + 1 : -len(second) - 1]
        assert count(between) == t.meta["distance_tokens"]
        assert distance <= t.meta["distance_tokens"] < distance + 120  # whole sentences: at most one more
        lit = generate("spaced", 8, 4, distance=distance, literal=1)[int(t.id[-4:])]
        assert lit.question == t.question and lit.answers == t.answers
        assert gold(lit).endswith(between) and t.answers[0] in gold(lit).split(". ")[0]


def test_near_miss_items_exactly():
    (one,) = generate("near-miss", 1, 0, near_misses=2)
    assert one.question == "In which bay did Gustav park the silver van?" and one.answers == ("944",)
    assert gold(one) == "Gustav parked the silver van in bay 944."
    short = [p.text for p in one.passages if not p.gold and len(p.text) < 150]
    assert short == ["Gustav parked the red van in bay 946.", "Gustav parked the yellow van in bay 400."]
    (lit,) = generate("near-miss", 1, 0, near_misses=2, literal=1)
    assert gold(lit) == gold(one) and lit.question == one.question
    assert [p.text for p in lit.passages if not p.gold and len(p.text) < 150] == [
        "The craft room that Ysolde booked for Friday is number 589.",
        "The meeting room that Nikolai booked for Friday is number 895.",
    ]


@pytest.mark.parametrize("k", [0, 1, 5, 12])
def test_near_misses_change_one_detail_each(k):
    frames = bank("near_miss")["frames"]
    people = set(names())
    for t in generate("near-miss", 10, 2, near_misses=k):
        needle = gold(t)
        (frame,) = [f for f in frames if re.fullmatch(pattern(f["fact"]), needle)]
        found = re.fullmatch(pattern(frame["fact"]), needle)
        n_name, n_detail = found["name"], found["detail"]
        misses = [p.text for p in t.passages if not p.gold and re.fullmatch(pattern(frame["fact"]), p.text)]
        assert len(misses) == k
        for m in misses:
            got = re.fullmatch(pattern(frame["fact"]), m)
            name, detail, value = got["name"], got["detail"], got["value"]
            assert (name != n_name) + (detail != n_detail) == 1 and value != t.answers[0]
            assert name in people and detail in frame["details"]


def pattern(fact: str) -> str:
    return (
        re.escape(fact)
        .replace(r"\{name\}", "(?P<name>.+?)")
        .replace(r"\{detail\}", "(?P<detail>.+?)")
        .replace(r"\{value\}", "(?P<value>\\d+)")
    )


@pytest.mark.parametrize("kind", sorted(GENERATORS))
def test_the_answer_is_only_in_the_gold_page(kind):
    for t in generate(kind, 12, 5):
        hits = [
            i
            for i, p in enumerate(t.passages)
            if re.search(rf"(?<!\w){re.escape(t.answers[0])}(?!\w)", p.text)
        ]
        assert hits == list(t.gold_indices), (t.id, hits)


@pytest.mark.parametrize(
    "kind,params",
    [("latent", ["hops=2"]), ("spaced", ["distance=300"]), ("near-miss", ["near_misses=6"])],
)
def test_same_seed_same_bytes_through_the_cli(tmp_path, capsys, kind, params):
    def run(name, seed):
        out, control = tmp_path / f"{name}.jsonl", tmp_path / f"{name}-literal.jsonl"
        argv = ["tasks", "generate", kind, "--n", "6", "--seed", str(seed), "--out", str(out)]
        argv += [a for p in params for a in ("--param", p)] + ["--control", str(control)]
        assert main(argv) == 0
        return out.read_bytes(), control.read_bytes()

    a, b, c = run("a", 9), run("b", 9), run("c", 10)
    assert a == b and a != c and a[0] != a[1]
    assert f"wrote 6 {kind} tasks" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv,message",
    [
        (["latent", "--param", "hops=3"], "hops must be 1 or 2, got 3"),
        (["spaced", "--param", "distance=-5"], "distance must be 0 or more tokens"),
        (["near-miss", "--param", "near_misses=500"], "at most 44 near-miss distractors, got 500"),
        (["facts", "--control", "x.jsonl"], "facts has no literal control"),
    ],
)
def test_bad_parameters_say_so_in_one_line(tmp_path, capsys, argv, message):
    out = tmp_path / "t.jsonl"
    assert main(["tasks", "generate", *argv, "--out", str(out)]) != 0
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not out.exists()
