import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from components.core.documents import make_document
from components.core.positions import chunk_ranges
from components.strategies import ParamError, get_strategy
from components.strategies.keywords import STOPWORDS, assign_questions, keywords
from components.strategies.reorder import bm25_ranking, edge_order, reorder_pages

TEXTS = [
    "The harbour of the old town holds fishing boats.",
    "Volcanoes erupt molten rock called lava.",
    "The castle was built in 1210 by the count of Flanders.",
    "Bees make honey from the nectar of flowers.",
    "Trains leave the central station every ten minutes.",
]


@pytest.fixture
def doc():
    return make_document(TEXTS, gold=[3])


def test_edge_order_puts_best_at_both_edges():
    assert edge_order([10, 11, 12, 13, 14]) == [10, 12, 14, 13, 11]
    assert edge_order([1, 2]) == [1, 2]
    assert edge_order([]) == []


@given(st.lists(st.integers(), unique=True, max_size=50))
def test_edge_order_is_a_permutation(items):
    out = edge_order(items)
    assert sorted(out) == sorted(items)
    if items:
        assert out[0] == items[0]
    if len(items) > 1:
        assert out[-1] == items[1]


def test_bm25_ranks_the_matching_page_first(doc):
    ranking = bm25_ranking(doc, "Who built the castle of Flanders?")
    assert ranking[0] == 2
    assert sorted(ranking) == list(range(len(TEXTS)))


def test_reorder_prompt_keeps_page_numbers(doc):
    p = get_strategy("reorder").first_prompts(doc, "When was the castle built by the count?")[0]
    order = [s.page for s in p.spans if s.kind in ("page", "gold")]
    assert order[0] == 3 and sorted(order) == [1, 2, 3, 4, 5]
    assert "<PAGE 3>\nThe castle was built in 1210 by the count of Flanders.\n</PAGE 3>" in p.text
    assert p.text.index("<PAGE 3>") < p.text.index("<PAGE 1>")


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.text(alphabet="abcdefgh ", min_size=1, max_size=40).filter(str.strip), min_size=1, max_size=20
    ),
    st.text(alphabet="abcdefgh ", min_size=1, max_size=30).filter(str.strip),
)
def test_reorder_is_a_permutation_of_pages(texts, question):
    doc = make_document(texts)
    pages = reorder_pages(doc, question)
    assert sorted(p.number for p in pages) == list(range(1, len(texts) + 1))


def test_keywords_drop_stopwords_and_case():
    assert keywords("What is THE capital of France?") == ["capital", "france"]
    assert "the" in STOPWORDS and "capital" not in STOPWORDS


def test_assign_questions_picks_most_matching_chunk():
    doc = make_document(TEXTS, counts=[10] * 5)  # chunks of c = 20: pages 1-2, 3-4, 5
    assert chunk_ranges(doc.offsets, 20) == [(0, 2), (2, 4), (4, 5)]
    qs = [
        "Which insects make honey from nectar?",
        "How often do trains leave the station?",
        "What do volcanoes erupt?",
        "Completely unrelated words",
    ]
    assert assign_questions(doc, qs, 20) == [1, 2, 0, 0]  # no match -> first chunk


def test_keyword_strategy_sends_only_the_chosen_chunk():
    doc = make_document(TEXTS, counts=[10] * 5, gold=[4])
    p = get_strategy("keyword").first_prompts(doc, "Which insects make honey?", {"c": 20})[0]
    assert [s.page for s in p.spans if s.kind in ("page", "gold")] == [3, 4]
    assert p.label == "answer (chunk 2 of 3)"
    (chunk,) = p.spans_of("chunk")
    assert chunk.chunk == 2
    assert p.text[chunk.start_char : chunk.end_char].startswith("<PAGE 3>")


def test_keyword_param_errors():
    doc = make_document(TEXTS, counts=[10] * 5)
    with pytest.raises(ParamError, match="more than the document's 50 tokens"):
        get_strategy("keyword").first_prompts(doc, "honey?", {"c": 51})
    with pytest.raises(ParamError, match="c must be a positive"):
        get_strategy("keyword").first_prompts(doc, "honey?", {"c": 0})
    with pytest.raises(ParamError, match="question is empty"):
        get_strategy("keyword").first_prompts(doc, "  ", {"c": 10})
