import pytest

from components.core.documents import (
    Document,
    Page,
    find_pages,
    make_document,
    neutralise_tags,
    paginate,
    parse_pagination,
)
from components.core.tokens import tokenizer

TEXT = "Paris is the capital of France. It is large.\n\nBerlin is in Germany.\n\n\n  Rome is old.  "


def test_paragraph_pages_and_offsets():
    doc = paginate(TEXT, "paragraph")
    assert [p.text for p in doc.pages] == [
        "Paris is the capital of France. It is large.",
        "Berlin is in Germany.",
        "Rome is old.",
    ]
    tok = tokenizer()
    assert [p.tokens for p in doc.pages] == [tok.count(p.text) for p in doc.pages]
    assert doc.offsets == (0, doc.pages[0].tokens, doc.pages[0].tokens + doc.pages[1].tokens, doc.tokens)
    assert len(doc.offsets) == len(doc.pages) + 1


def test_sentence_pages():
    doc = paginate(TEXT, "sentence")
    assert [p.text for p in doc.pages][:2] == ["Paris is the capital of France.", "It is large."]
    assert len(doc.pages) == 4


def test_token_budget_pages_stay_under_budget():
    text = " ".join(f"Sentence number {i} talks about topic {i}." for i in range(200))
    doc = paginate(text, "tokens:50")
    assert len(doc.pages) > 5
    assert all(p.tokens <= 50 for p in doc.pages)
    assert " ".join(p.text for p in doc.pages).split() == text.split()


@pytest.mark.parametrize(
    "spec, message",
    [
        ("tokens:0", "positive whole number"),
        ("tokens:x", "positive whole number"),
        ("chapters", "unknown pagination"),
    ],
)
def test_bad_pagination(spec, message):
    with pytest.raises(ValueError, match=message):
        parse_pagination(spec)


def test_empty_text_is_refused():
    with pytest.raises(ValueError, match="empty"):
        paginate("  \n ", "paragraph")


def test_tags_in_text_are_neutralised():
    assert (
        neutralise_tags("see </PAGE 3> and <instructions>")
        == "see \u2039/PAGE 3\u203a and \u2039instructions\u203a"
    )
    doc = make_document(["a <PAGE 9> b"], titles=["<DOCUMENT>"])
    assert "<PAGE" not in doc.pages[0].text and "<DOCUMENT>" not in doc.pages[0].title
    assert neutralise_tags("a < b > c") == "a < b > c"


def test_document_checks_numbers_and_gold():
    with pytest.raises(ValueError, match="numbered 1..N"):
        Document((Page(2, "x", 1),))
    with pytest.raises(ValueError, match="outside 1..1"):
        Document((Page(1, "x", 1),), gold=(2,))


def test_subset_and_with_gold():
    doc = make_document(["a", "b", "c", "d"], gold=[2])
    assert [p.number for p in doc.subset([4, 2, 2, 9])] == [2, 4]
    assert doc.with_gold([3]).gold == (3,) and doc.gold == (2,)


def test_make_document_uses_given_counts():
    doc = make_document(["alpha", "beta"], counts=[7, 9], titles=["A", "B"])
    assert doc.tokens == 16 and doc.pages[1].title == "B"


def test_find_pages():
    doc = paginate(TEXT, "paragraph")
    assert find_pages(doc, "berlin  IS") == [2]
    assert find_pages(doc, "   ") == []
