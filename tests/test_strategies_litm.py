import asyncio

import pytest

from components.core.completion import Completion
from components.core.documents import make_document
from components.core.metrics import score
from components.core.tokens import tokenizer
from components.strategies import ParamError, get_strategy
from components.strategies.litm import kv_key, kv_record

Q = "who wrote hamlet"


@pytest.fixture
def doc():
    return make_document(
        ["Macbeth is a tragedy.", "Hamlet was written by William Shakespeare.", "Othello is set in Venice."],
        titles=["Macbeth", "Hamlet", "Othello"],
        gold=[2],
    )


@pytest.fixture
def kv_doc():
    return make_document([kv_record("a1", "v1"), kv_record("b2", "v2"), kv_record("c3", "v3")], gold=[2])


INSTR = (
    "Write a high-quality answer for the given question using only the provided search results "
    "(some of which might be irrelevant)."
)
DOCS = (
    "Document [1](Title: Macbeth) Macbeth is a tragedy.\n"
    "Document [2](Title: Hamlet) Hamlet was written by William Shakespeare.\n"
    "Document [3](Title: Othello) Othello is set in Venice."
)


def text_of(name, doc, question=Q, params=None):
    prompts = get_strategy(name).first_prompts(doc, question, params)
    assert len(prompts) == 1
    return prompts[0].text


def test_qa_exact(doc):
    assert text_of("litm", doc) == INSTR + "\n\n" + DOCS + "\n\nQuestion: who wrote hamlet\nAnswer:"


def test_qa_query_aware_exact(doc):
    assert text_of("litm-qac", doc) == (
        INSTR + "\n\nQuestion: who wrote hamlet\n\n" + DOCS + "\n\nQuestion: who wrote hamlet\nAnswer:"
    )


def test_random_order_exact(doc):
    # the reference's tests/test_prompting.py (mention_random_ordering=True): the instruction gains one
    # sentence; the distractors are shuffled as its scripts shuffle them (random.seed(0), one shuffle per
    # example in file order): for two distractors the 1st and 2nd shuffles keep them, the 3rd swaps them
    random_head = INSTR + " The search results are ordered randomly.\n\n"
    tail = "\n\nQuestion: who wrote hamlet\nAnswer:"
    assert text_of("litm-random", doc) == random_head + DOCS + tail  # a document from no file: example 0
    doc.meta["file_index"] = 2
    assert (
        text_of("litm-random", doc)
        == random_head
        + (
            "Document [1](Title: Othello) Othello is set in Venice.\n"
            "Document [2](Title: Hamlet) Hamlet was written by William Shakespeare.\n"
            "Document [3](Title: Macbeth) Macbeth is a tragedy."
        )
        + tail
    )
    assert get_strategy("litm-random").metric == "subspan-em"


def test_closed_book_exact(doc):
    assert text_of("closed-book", doc) == "Question: who wrote hamlet\nAnswer:"


def test_oracle_exact_and_keeps_page_number(doc):
    p = get_strategy("oracle").first_prompts(doc, Q)[0]
    assert p.text == (
        INSTR + "\n\nDocument [1](Title: Hamlet) Hamlet was written by William Shakespeare."
        "\n\nQuestion: who wrote hamlet\nAnswer:"
    )
    assert [(s.kind, s.page) for s in p.spans if s.page] == [("gold", 2)]


def test_oracle_needs_gold(doc):
    with pytest.raises(ParamError, match="gold"):
        get_strategy("oracle").first_prompts(doc.with_gold([]), Q)


def test_kv_exact(kv_doc):
    assert text_of("kv", kv_doc, "b2") == (
        "Extract the value corresponding to the specified key in the JSON object below.\n\n"
        'JSON data:\n{"a1": "v1",\n "b2": "v2",\n "c3": "v3"}\n\n'
        'Key: "b2"\nCorresponding value:'
    )


def test_kv_query_aware_exact(kv_doc):
    assert text_of("kv", kv_doc, '"b2"', {"qac": 1}) == (
        "Extract the value corresponding to the specified key in the JSON object below.\n\n"
        'Key: "b2"\n\n'
        'JSON data:\n{"a1": "v1",\n "b2": "v2",\n "c3": "v3"}\n\n'
        'Key: "b2"\nCorresponding value:'
    )


def test_kv_single_record(kv_doc):
    one = make_document([kv_record("k", "v")])
    assert '\n{"k": "v"}\n' in text_of("kv", one, "k")


def test_kv_refuses_non_record_pages(doc):
    with pytest.raises(ParamError, match="page 1 is not"):
        get_strategy("kv").first_prompts(doc, "a1")


def test_kv_refuses_bad_flag(kv_doc):
    with pytest.raises(ParamError, match="qac must be 0 or 1"):
        get_strategy("kv").first_prompts(kv_doc, "a1", {"qac": 2})


def test_kv_key_strips_quotes():
    assert kv_key(' "abc" ') == "abc"
    assert kv_key("abc") == "abc"


@pytest.mark.parametrize("name", ["litm", "litm-qac", "litm-random", "oracle"])
def test_spans_are_exact_and_tokens_match(doc, name):
    p = get_strategy(name).first_prompts(doc, Q)[0]
    for s in p.spans:
        region = p.text[s.start_char : s.end_char]
        if s.kind in ("page", "gold"):
            page = doc.page(s.page)
            assert region.startswith("Document [") and region.endswith(page.text)
            assert f"(Title: {page.title})" in region
        elif s.kind == "question":
            assert region == Q
    assert p.tokens == len(tokenizer().encode(p.text))
    kinds = {s.kind for s in p.spans}
    assert {"instruction", "question", "gold"} <= kinds


def test_kv_spans_cover_records(kv_doc):
    p = get_strategy("kv").first_prompts(kv_doc, "b2", {"qac": 1})[0]
    pages = [(s.kind, s.page, p.text[s.start_char : s.end_char]) for s in p.spans if s.page]
    assert pages == [("page", 1, '"a1": "v1"'), ("gold", 2, '"b2": "v2"'), ("page", 3, '"c3": "v3"')]
    assert [p.text[s.start_char : s.end_char] for s in p.spans if s.kind == "question"] == ["b2", "b2"]


def test_metric_and_raw_answer(doc):
    strategy = get_strategy("litm")
    assert strategy.metric == "subspan-em"

    async def ask(prompt):
        return Completion("William Shakespeare wrote it.\nMore text", 10, 5, 0.1)

    out = asyncio.run(strategy.run(doc, Q, None, ask))
    assert out.answer == "William Shakespeare wrote it.\nMore text"  # raw: the metric cuts the line
    assert score(strategy.metric, out.answer, ["Shakespeare"]) == 1.0
    assert out.calls == 1
