import pytest

from components.core.documents import Page
from components.core.tagged import tagged_length, tagged_offsets
from components.tasks.generators import generate
from components.tasks.model import Passage, Task
from components.tasks.sweepdocs import (
    TooFewPassages,
    build_by_index,
    build_document,
    shared_pool,
    task_document,
)


@pytest.fixture(scope="module")
def facts():
    return generate("facts", 6, 5)


@pytest.mark.parametrize("length", [2000, 5000, 9000])
@pytest.mark.parametrize("position", [0, 0.25, 0.5, 0.75, 1.0, 1500])
def test_length_and_position_within_one_page(facts, length, position):
    """d and x count the document as R&R's prompt holds it: its pages in their PAGE tags (core.tagged)."""
    pool = shared_pool(facts)
    for task in facts[:3]:
        b = build_document(task, length, position, pool=pool)
        offsets = tagged_offsets(b.document.pages, b.document.encoding)
        sizes = [b - a for a, b in zip(offsets, offsets[1:], strict=False)]
        largest = max(sizes)
        want = position * length if position <= 1 else position
        assert b.requested_length == length and b.requested_position == round(want)
        assert length - largest <= b.actual_length <= length  # about d tokens, never past d (R&R Tables 1-3)
        gold = sum(sizes[g - 1] for g in b.gold_pages)
        # within one page of x; at the end (x = d) the gold page itself ends the document
        assert abs(b.actual_position - min(want, length - gold)) <= largest
        assert b.actual_length == offsets[-1] == b.length_tokens > b.document.tokens
        assert b.actual_position == offsets[b.gold_pages[0] - 1] == b.position_tokens
        gold_texts = [b.document.page(g).text for g in b.gold_pages]
        assert gold_texts == [p.text for p in task.passages if p.gold]
        # distractors never answer the question
        for p in b.document.pages:
            if p.number not in b.gold_pages:
                assert task.answers[0].lower() not in p.text.lower()


def test_distractors_keep_their_order(facts):
    task = facts[0]
    b = build_document(task, 800, 0.5)
    own = [p.text for p in task.passages if not p.gold]
    got = [p.text for p in b.document.pages if p.number not in b.gold_pages]
    assert got == own[: len(got)]


def test_multi_gold_regular_intervals():
    task = generate("niah-multivalue", 1, 1)[0]
    b = build_document(task, 12000, None)
    positions = [b.offsets[g - 1] for g in b.gold_pages]
    largest = max(y - x for x, y in zip(b.offsets, b.offsets[1:], strict=False))
    for i, pos in enumerate(positions):
        assert abs(pos - (i + 1) * 12000 / 5) <= largest + 4 * 20
    b2 = build_document(task, 12000, 0.2)
    assert abs(b2.actual_position - 2400) <= largest


def test_niah_reaches_long_lengths_from_builtin_haystack():
    task = generate("niah", 1, 4)[0]
    b = build_document(task, 64000, 0.5)
    assert abs(b.actual_length - 64000) < 200 and abs(b.actual_position - 32000) < 200


def test_too_short_without_pool(facts):
    with pytest.raises(TooFewPassages, match="too few for a 50,000-token document: choose a shorter length"):
        build_document(facts[0], 50000, 0.5)


def test_pool_filters_answer_and_own_gold():
    gold = Passage("The answer is Zubrovka.", gold=True)
    task = Task("t", "What is it?", ("Zubrovka",), (gold, Passage("filler one two three")))
    pool = [
        Passage("Zubrovka is mentioned here."),
        Passage("The answer is Zubrovka."),
        Passage("plain text " * 20),
    ]
    b = build_document(task, 60, 1.0, pool=pool)
    texts = [p.text for p in b.document.pages]
    assert texts.count("The answer is Zubrovka.") == 1
    assert "Zubrovka is mentioned here." not in texts


def test_pool_distractors_follow_the_own_ones_by_relevance_to_the_question():
    """R&R §4.1: "the distracter passages in the constructed document are still sorted by relevance".
    The task's own distractors first, in their order; then the pool's, most BM25-relevant to the
    question first (those sharing no word with it last, in pool order)."""
    gold = Passage("The lighthouse keeper of Farsund was Ole Brekke.", "Farsund lighthouse", gold=True)
    own = Passage("Farsund is a town on the south coast of Norway.", "Farsund")
    task = Task("t", "who was the lighthouse keeper of farsund", ("Ole Brekke",), (gold, own))
    pool = [
        Passage("Bread is baked from flour, water and yeast.", "Bread"),
        Passage("A lighthouse keeper tends the lamp of a lighthouse.", "Lighthouse keeper"),
        Passage("The Farsund lighthouse stands on a rocky islet.", "Farsund lighthouse (building)"),
        Passage("Tides rise and fall twice a day.", "Tides"),
        Passage("Ole Brekke kept the Farsund lighthouse.", "Keeper"),  # holds the answer: left out
        Passage("Keepers of lighthouses often lived alone.", "Lighthouse"),
    ]
    from components.tasks.sweepdocs import count_passages

    kept = [gold, own, *pool[:4], pool[5]]
    pages = [
        Page(i + 1, p.text, n)
        for i, (p, n) in enumerate(zip(kept, count_passages([p.text for p in kept]), strict=True))
    ]
    b = build_document(task, tagged_length(pages, "cl100k_base"), 0.0, pool=pool)  # all of them
    titles = [p.title for p in b.document.pages]
    assert titles[:2] == ["Farsund lighthouse", "Farsund"]
    assert sorted(titles[2:5]) == ["Farsund lighthouse (building)", "Lighthouse", "Lighthouse keeper"]
    assert titles[5:] == ["Bread", "Tides"]  # nothing in common with the question: pool order
    from components.tasks.distractors import Relevance

    # in BM25's order (rank_bm25 over title and text, the question's keywords)
    related = [pool[1], pool[2], pool[5]]
    ranked = Relevance(pool).ranked(task.question)
    assert titles[2:5] == [pool[i].title for i in ranked if pool[i] in related]


def test_by_index_litm_style():
    task = generate("kv", 1, 0, pairs=30)[0]
    for i in (0, 9, 19):
        b = build_by_index(task, 20, i)
        assert b.unit == "documents" and len(b.document.pages) == 20
        assert b.gold_pages == (i + 1,) and b.actual_position == i
        assert b.document.page(i + 1).text == task.passages[task.gold_indices[0]].text
    with pytest.raises(ValueError):
        build_by_index(task, 20, 20)
    with pytest.raises(TooFewPassages, match="39 are needed for 40 documents: choose fewer documents"):
        build_by_index(task, 40, 0)


def test_task_document_and_titles(facts):
    task = facts[0]
    doc = task_document(task)
    assert len(doc.pages) == len(task.passages) and doc.gold == task.gold_pages
    assert all(p.title for p in doc.pages)


def test_counts_match_tokenizer(facts):
    from components.core.tokens import tokenizer

    b = build_document(facts[1], 1500, 0.3)
    assert [p.tokens for p in b.document.pages] == tokenizer().count_many([p.text for p in b.document.pages])


def test_pool_filter_keeps_exactly_what_one_regex_per_passage_keeps():
    """The pool filter looks for answers with a case-folded str.find before running the answer regex
    (components.tasks.sweepdocs._Candidates): it must drop exactly the passages that a regex search of
    every passage drops, whatever the case, Unicode look-alikes re folds (Kelvin sign, long s, dotted
    and dotless i), word edges and non-ASCII answers."""
    import re

    from components.tasks.sweepdocs import _clean, _pool_for

    texts = [
        "The Kremlin",
        "the KREMLIN wall",
        "Kremlinology",
        "\u212aremlin by the Kelvin sign",
        "Mo\u017fcow (long s)",
        "MOSCOW",
        "moscowite",
        "\u0130stanbul",
        "istanbul",
        "\u0131stanbul",
        "Ærøskøbing",
        "ærøskøbing harbour",
        "ÆRØSKØBING",
        "Straße",
        "STRASSE",
        "New  York",
        "New York",
        "new york city",
        "York",
        "3 x 4",
        "plain text",
        "Zürich",
        "ZÜRICH",
        "zurich",
    ]
    pool = [Passage(t) for t in texts]

    def reference(answers):  # the filter as it was: one regex search per passage, one pattern per answer
        words = [" ".join(a.split()) for a in answers]
        pats = [r"(?<!\w)" + re.escape(w) + r"(?!\w)" for w in words if len(w) >= 3]
        rx = re.compile("|".join(f"(?:{p})" for p in pats), re.IGNORECASE) if pats else None
        return [t for t in dict.fromkeys(_clean(x) for x in texts) if not (rx and rx.search(t))]

    for answers in [
        ("Kremlin",),
        ("moscow",),
        ("Istanbul",),
        ("ærøskøbing",),
        ("strasse",),
        ("New York",),
        ("Zürich", "3 x 4"),
        ("no",),
        ("York", "kremlin"),
        ("Kremlin", "Kremlinology"),
        ("York City", "New York"),
    ]:
        task = Task("t", "Where?", answers, (Passage("gold text here", gold=True),))
        assert [p.text for p in _pool_for(task, pool)] == reference(answers), answers


def test_counting_only_the_pool_prefix_a_document_uses_builds_the_same_documents(monkeypatch):
    """build_document counts distractors only until their total passes its target (sweepdocs._counts_until);
    the documents (pages, gold pages, positions) and the TooFewPassages refusals must be exactly those of
    counting every distractor, including pools that run out and passages of very different sizes."""
    import random
    from itertools import accumulate

    from components.tasks import sweepdocs
    from components.tasks.sweepdocs import TooFewPassages, build_document

    rng = random.Random(7)
    words = ["alpha", "beta", "gamma", "delta", "river", "stone", "  ", "\n", "x" * 40]
    pool = [
        Passage(" ".join(rng.choice(words) for _ in range(rng.choice([1, 3, 20, 150, 600]))))
        for _ in range(400)
    ]
    tasks = [
        Task(
            f"t{i}",
            "Where is it?",
            ("Quuxville",),
            (
                Passage(f"It is in Quuxville, case {i}.", gold=True),
                *[Passage(f"Own passage {i}.{j}.") for j in range(i % 3)],
            ),
        )
        for i in range(6)
    ]

    def outcome(task, length, position):
        try:
            b = build_document(task, length, position, pool=pool)
        except TooFewPassages as exc:
            return ("too few", str(exc))
        except ValueError as exc:  # a position past the end
            return ("refused", str(exc))
        return ([p.text for p in b.document.pages], b.gold_pages, b.actual_position, b.length_tokens)

    def count_all(passages, reach, encoding):  # the old way: every distractor counted
        return sweepdocs.count_passages([sweepdocs._clean(p.text) for p in passages], encoding)

    cases = [
        (t, n, x)
        for t in tasks
        for n in (5, 40, 300, 2_000, 20_000, 60_000, 10**7)
        for x in (0.0, 0.37, 1.0, None, 17, 1_900)
    ]
    # positions in tokens exactly at a prefix sum of the distractors, in documents that end there:
    # where "passes the target" must mean "more than", not "as much as"
    for t in tasks:
        golds, distractors = sweepdocs._split(t, pool)
        sums = list(accumulate(count_all(distractors, 0, "cl100k_base")))
        cases += [(t, s, s) for s in sums[1:60:3] if s > 1]
    fast = [outcome(*c) for c in cases]
    monkeypatch.setattr(sweepdocs, "_counts_until", count_all)
    slow = [outcome(*c) for c in cases]
    assert fast == slow
    kinds = {o[0] == "too few" for o in slow}
    assert kinds == {True, False}  # both paths were exercised
