from hypothesis import given, settings
from hypothesis import strategies as st

from components.core.parsing import (
    first_line,
    parse_answer,
    parse_pages,
    parse_quotes_and_answer,
    parse_sentences,
)

PARSERS = [
    lambda t: parse_answer(t, 10),
    lambda t: parse_pages(t, 10, limit=3),
    parse_sentences,
    parse_quotes_and_answer,
    first_line,
]

model_like = st.one_of(
    st.text(),
    st.text(alphabet='{}[]":,0123456789 \n-*Answer:Pages`', max_size=80),
    st.builds(lambda a, p: f"Answer: {a}\nPage: {p}", st.text(max_size=20), st.text(max_size=10)),
)


@settings(max_examples=300, deadline=None)
@given(model_like)
def test_parsers_never_raise(text):
    for parse in PARSERS:
        parse(text)


def test_parse_answer_formats():
    got = parse_answer("Answer: William Shakespeare\nPage: 2", 5)
    assert got.ok and got.answer == "William Shakespeare" and got.pages == (2,)
    got = parse_answer('```json\n{"answer": "Paris", "page": 12}\n```', 5)
    assert got.answer == "Paris" and got.pages == () and got.dropped == (12,)
    assert parse_answer('**Answer:** "Paris"', 5).answer == "Paris"
    assert parse_answer("Just Paris.\nMore", 5).answer == "Just Paris."
    assert not parse_answer("   ", 5).ok
    assert not parse_answer(None, 5).ok  # type: ignore[arg-type]


def test_parse_pages_formats():
    assert parse_pages("Pages: 3, 7, 3", 10).pages == (3, 7)
    assert parse_pages("[4, 2]", 10).pages == (4, 2)
    assert parse_pages('{"pages": [5]}', 10).pages == (5,)
    assert parse_pages("pages 2-4", 10).pages == (2, 3, 4)
    assert parse_pages("page two and page 9", 10).pages == (2, 9)
    assert parse_pages("Pages: 1, 2, 3, 4", 10, limit=2).pages == (1, 2)
    got = parse_pages("Pages: 11, 40", 10)
    assert not got.ok and got.dropped == (11, 40) and "outside 1..10" in got.error


def test_parse_sentences_and_quotes():
    got = parse_sentences('Here:\n- "First one."\n* Second one.\n1. Third one.\nnot a bullet')
    assert got.sentences == ("First one.", "Second one.", "Third one.")
    assert not parse_sentences("no bullets here").ok
    got = parse_quotes_and_answer(
        'Relevant quotes:\n[1] "Revenue was $12 million."\n\nAnswer: $12 million [1].'
    )
    assert got.ok and got.answer == "$12 million" and got.sentences == ("Revenue was $12 million.",)
    assert not parse_quotes_and_answer('Relevant quotes: [1] "abc def"').ok


def test_first_line():
    assert first_line("\n  Paris  \nLyon") == "Paris"
    assert first_line("") == ""
