import asyncio
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from components.core.completion import Completion
from components.core.documents import Page, make_document
from components.core.tagged import tagged_offsets
from components.core.tokens import tokenizer
from components.strategies import STRATEGIES, ParamError, get_strategy

Q = "Who wrote Hamlet?"
FMT_ANSWER = (
    "Respond in exactly this format and nothing else:\n"
    "Answer: <the answer, in as few words as possible>\n"
    "Page: <the number of the page that contains the answer>"
)
FMT_PAGES = (
    "Respond with the page numbers only, most relevant first, separated by commas, in exactly this "
    "format and nothing else:\nPages: <number>, <number>, ..."
)
HEAD = (
    "<INSTRUCTIONS>\nAnswer the following question based on the document provided and no additional "
    "extraneous information:\nWho wrote Hamlet?\n\n" + FMT_ANSWER + "\n</INSTRUCTIONS>"
)
TAIL = (
    "<INSTRUCTIONS>\nNow, answer the following question based on the above document and no additional "
    "extraneous information:\nWho wrote Hamlet?\n\n" + FMT_ANSWER + "\n</INSTRUCTIONS>"
)
REMINDER = (
    "<INSTRUCTIONS_REMINDER>\nRemember, your task is to answer the following question based on this "
    "document and no additional extraneous information:\nWho wrote Hamlet?\n\n"
    + FMT_ANSWER
    + "</INSTRUCTIONS_REMINDER>"
)
P1 = "<PAGE 1>\nMacbeth is a tragedy.\n</PAGE 1>"
P2 = "<PAGE 2>\nHamlet was written by William Shakespeare.\n</PAGE 2>"
P3 = "<PAGE 3>\nOthello is set in Venice.\n</PAGE 3>"


@pytest.fixture
def doc():
    # counts fixed at 10 tokens per page so reminder places are known: each page in its PAGE tags is 20
    # tokens (10 + the tags' 11, less the merge of its "." with the closing tag's newline; R&R §4.1 counts
    # the tags: core.tagged), so the document is 60 tokens and r = 10 -> before pages 2 and 3
    return make_document(
        ["Macbeth is a tragedy.", "Hamlet was written by William Shakespeare.", "Othello is set in Venice."],
        gold=[2],
        counts=[10, 10, 10],
    )


def one(name, doc, params=None, question=Q):
    prompts = get_strategy(name).first_prompts(doc, question, params)
    assert len(prompts) == 1
    return prompts[0].text


def wrap(*blocks, head=HEAD, tail=TAIL):
    return head + "\n\n<DOCUMENT>\n" + "\n\n".join(blocks) + "\n</DOCUMENT>\n\n" + tail


def test_baseline_exact(doc):
    assert one("baseline", doc) == wrap(P1, P2, P3)


def test_reprompt_exact(doc):
    assert one("reprompt", doc, {"r": 10}) == wrap(P1, REMINDER, P2, REMINDER, P3)


def test_the_document_counts_its_pages_in_their_tags(doc):
    assert tagged_offsets(doc.pages, doc.encoding) == (0, 20, 40, 60) and doc.offsets == (0, 10, 20, 30)


def test_reprompt_none_when_r_reaches_the_end(doc):
    assert one("reprompt", doc, {"r": 60}) == wrap(P1, P2, P3)  # R&R Table 1 omits r = d
    # on the pages' text alone (30 tokens) r = 30 would be d; in their tags the document is twice that
    assert one("reprompt", doc, {"r": 30}) == wrap(P1, REMINDER, P2, P3)


def test_reprompt_tags_only_exact(doc):
    tags = (
        "<INSTRUCTIONS_REMINDER>\nRemember, your task is to follow the instructions under the "
        '"<INSTRUCTIONS>"\n</INSTRUCTIONS_REMINDER>'
    )
    assert one("reprompt-tags-only", doc, {"r": 10}) == wrap(P1, tags, P2, tags, P3)


def test_reprompt_at_beginning_exact(doc):
    assert one("reprompt-at-beginning", doc, {"r": 10}) == wrap(REMINDER, REMINDER, P1, P2, P3)


def test_reprompt_before_gold_exact(doc):
    assert one("reprompt-before-gold", doc) == wrap(P1, REMINDER, P2, P3)
    with pytest.raises(ParamError, match="gold"):
        one("reprompt-before-gold", doc.with_gold([]))


RHEAD = (
    "<INSTRUCTIONS>\nBelow is a document that is separated into page numbers. Identify up to 2 page numbers "
    "in the document that are most relevant to the following question:\nWho wrote Hamlet?\n\n"
    + FMT_PAGES
    + "\n</INSTRUCTIONS>"
)
RTAIL = (
    "<INSTRUCTIONS>\nNow, identify up to 2 page numbers in the document that are most relevant to the "
    "following question.\nWho wrote Hamlet?\n\n" + FMT_PAGES + "\n</INSTRUCTIONS>"
)
RREMINDER = (
    "<INSTRUCTIONS_REMINDER>\nRemember, your task is to identify up to 2 page numbers in the document "
    "that are most relevant to the following question:\nWho wrote Hamlet?\n\n"
    + FMT_PAGES
    + "</INSTRUCTIONS_REMINDER>"
)


def test_icr_stage1_exact(doc):
    assert one("icr", doc, {"k": 2}) == wrap(P1, P2, P3, head=RHEAD, tail=RTAIL)


def test_rr_stage1_exact(doc):
    assert one("rr", doc, {"k": 2, "r": 10}) == wrap(P1, RREMINDER, P2, RREMINDER, P3, head=RHEAD, tail=RTAIL)


def test_icr_run_stage2_exact(doc):
    seen = []
    replies = ["Pages: 3, 2", "Answer: William Shakespeare\nPage: 2"]

    async def ask(prompt):
        seen.append(prompt)
        return Completion(replies.pop(0), prompt.tokens, 5, 0.1)

    out = asyncio.run(get_strategy("rr").run(doc, Q, {"k": 2, "r": 10}, ask))
    assert seen[1].text == wrap(P2, P3)  # retrieved pages in document order, original numbers
    assert out.retrieved_pages == (3, 2) and out.cited_pages == (2,) and out.answer == "William Shakespeare"


def test_chunked_icr_exact(doc):
    prompts = get_strategy("chunked-icr").first_prompts(doc, Q, {"k": 1, "c": 40})
    head, tail = RHEAD.replace("up to 2", "up to 1"), RTAIL.replace("up to 2", "up to 1")
    assert [p.text for p in prompts] == [wrap(P1, P2, head=head, tail=tail), wrap(P3, head=head, tail=tail)]
    assert [p.label for p in prompts] == ["retrieve (chunk 1 of 2)", "retrieve (chunk 2 of 2)"]


def test_chunked_rr_exact(doc):
    prompts = get_strategy("chunked-rr").first_prompts(doc, Q, {"k": 1, "c": 40, "r": 20})
    head, tail = RHEAD.replace("up to 2", "up to 1"), RTAIL.replace("up to 2", "up to 1")
    rem = RREMINDER.replace("up to 2", "up to 1")
    assert [p.text for p in prompts] == [
        wrap(P1, rem, P2, head=head, tail=tail),
        wrap(P3, head=head, tail=tail),
    ]


@pytest.mark.parametrize(
    "params, message",
    [
        ({"k": 0}, "k must be a positive whole number"),
        ({"k": 4}, "more than the document's 3 pages"),
        ({"k": 2, "r": -5}, "r must be a positive"),
        ({"k": 1, "zz": 3}, "takes no parameter zz"),
    ],
)
def test_rr_param_errors(doc, params, message):
    with pytest.raises(ParamError, match=message):
        get_strategy("rr").first_prompts(doc, Q, params)


def test_chunk_past_the_document_is_one_chunk(doc):
    """R&R Table 3: c = 80k on a document of about 80k tokens is m = 2 calls (one chunk, one answer),
    so c at or past the document's length is the whole document, not a refusal."""
    for c in (60, 61, 80_000):
        prompts = get_strategy("chunked-icr").first_prompts(doc, Q, {"k": 1, "c": c})
        assert [p.label for p in prompts] == ["retrieve (chunk 1 of 1)"]
        assert [p.page for p in prompts[0].spans_of("page") + prompts[0].spans_of("gold")] == [1, 3, 2]


def test_chunked_rr_reprompts_only_in_chunks_of_about_2r_or_more():
    """R&R Table 2 omits chunked R&R at c = r ("reprompting is not done" there): a chunk of about r
    tokens, a little over or under, gets no reminder; a chunk of about 2r gets one."""
    texts = [f"Page {i} says nothing." for i in range(40)]
    for counts in ([10] * 40, [10, 11] * 20, [9, 10] * 20):  # about 800 tokens in their PAGE tags
        doc = make_document(texts, gold=[7], counts=counts)
        d = tagged_offsets(doc.pages, doc.encoding)[-1]
        for c, want in ((200, 0), (400, 1), (800, 3)):
            prompts = get_strategy("chunked-rr").first_prompts(doc, Q, {"k": 1, "c": c, "r": 200})
            assert [len(p.spans_of("reminder")) for p in prompts] == [want] * round(d / c), (
                counts,
                c,
            )


# ---- properties -------------------------------------------------------------------------------


def synthetic(sizes, gold=()):
    pages = tuple(Page(i + 1, f"text of page {i + 1}.", n) for i, n in enumerate(sizes))
    from components.core.documents import Document

    return Document(pages, tuple(gold))


sizes_st = st.lists(st.integers(1, 400), min_size=2, max_size=60)


@settings(max_examples=60, deadline=None)
@given(sizes_st, st.integers(1, 3000), st.sampled_from(["reprompt", "rr"]))
def test_reminders_sit_between_pages_near_each_multiple(sizes, r, name):
    doc = synthetic(sizes)
    params = {"r": r, "k": 1} if name == "rr" else {"r": r}
    p = get_strategy(name).first_prompts(doc, Q, params)[0]
    reminders = p.spans_of("reminder")
    for s in reminders:
        before = p.text[: s.start_char]
        after = p.text[s.end_char :]
        closed = re.findall(r"</PAGE (\d+)>", before)
        opened = re.match(r"\s*<PAGE (\d+)>", after)
        assert closed and opened, "a reminder must follow a page and precede one"
        assert int(opened.group(1)) == int(closed[-1]) + 1
        assert before.count("<PAGE ") == before.count("</PAGE ")  # not inside a page
    # one reminder per distinct nearest boundary, each within one page of its multiple of r, on the count
    # of the document as the prompt holds it (PAGE tags included: R&R §4.1)
    offsets = tagged_offsets(doc.pages, doc.encoding)
    total = offsets[-1]
    places = []
    for s in reminders:
        page_after = int(re.match(r"\s*<PAGE (\d+)>", p.text[s.end_char :]).group(1))
        places.append(offsets[page_after - 1])
    m = 1
    biggest = max(b - a for a, b in zip(offsets, offsets[1:], strict=False))
    while m * r < total:
        if 2 * (total - m * r) >= r + 2 * biggest:  # clear of the last half step (core.positions.every)
            assert any(abs(x - m * r) <= biggest for x in places)
        m += 1
    assert all(2 * (total - x) >= r for x in places)  # none in the last half step
    assert all(any(abs(x - m * r) <= biggest for m in range(1, total // r + 2)) for x in places)


@settings(max_examples=60, deadline=None)
@given(sizes_st, st.integers(1, 3000))
def test_chunks_never_split_a_page_and_stay_near_c(sizes, c):
    doc = synthetic(sizes)
    offsets = tagged_offsets(doc.pages, doc.encoding)
    sizes = [
        b - a for a, b in zip(offsets, offsets[1:], strict=False)
    ]  # pages as the prompt holds them (R&R §4.1)
    if c > offsets[-1]:
        return
    prompts = get_strategy("chunked-icr").first_prompts(doc, Q, {"k": 1, "c": c})
    seen = []
    for p in prompts:
        pages = [s.page for s in p.spans if s.kind in ("page", "gold")]
        chunk = p.spans_of("chunk")
        assert len(chunk) == 1
        region = p.text[chunk[0].start_char : chunk[0].end_char]
        assert region.startswith("<PAGE ") and region.endswith(f"</PAGE {pages[-1]}>")
        assert region.count("<PAGE ") == region.count("</PAGE ") == len(pages)
        seen.extend(pages)
        size = sum(sizes[n - 1] for n in pages)
        # about c: off by at most a page at each end; the last may hold a tail under half a chunk too
        assert 2 * size <= 3 * c + 4 * max(sizes)
    assert seen == list(range(1, len(sizes) + 1))


def test_spans_index_the_text_for_every_strategy():
    doc = make_document(
        [f"Paragraph {i} says that item {i} costs {i * 3} coins." for i in range(1, 13)],
        titles=[f"T{i}" for i in range(1, 13)],
        gold=[5],
    )
    params = {
        "reprompt": {"r": 40},
        "reprompt-tags-only": {"r": 40},
        "reprompt-at-beginning": {"r": 40},
        "icr": {"k": 3},
        "rr": {"k": 3, "r": 40},
        "chunked-icr": {"k": 2, "c": 60},
        "chunked-rr": {"k": 2, "c": 60, "r": 30},
        "keyword": {"c": 60},
    }
    tok = tokenizer()
    for name, strategy in STRATEGIES.items():
        if name == "kv":
            continue  # pages are not key-value records; covered in test_strategies_litm
        for p in strategy.first_prompts(doc, "What does item 5 cost?", params.get(name)):
            assert p.tokens == len(tok.encode(p.text)), name
            for s in p.spans:
                region = p.text[s.start_char : s.end_char]
                assert 0 <= s.start_char < s.end_char <= len(p.text), name
                assert region == region.strip(), (name, s)
                assert s.start_token <= s.end_token <= p.tokens
                # the token offsets agree with encoding the text up to each span
                assert abs(len(tok.encode(p.text[: s.start_char])) - s.start_token) <= 1, (name, s)
                if s.kind in ("page", "gold"):
                    assert doc.page(s.page).text in region
                    assert (s.kind == "gold") == (s.page == 5)


def test_reorder_exact():
    """BM25 (Okapi, k1 = 1.5, b = 0.75) ranks the pages against the question; the best go to both
    edges (LITM §3.3 motivation), in the Baseline prompt (R&R App. A), pages keeping their numbers.
    Keywords of "Who wrote Hamlet in Denmark?": wrote, hamlet, denmark. Page 4 ("denmark", 2 words)
    outscores page 2 ("hamlet", 4 words): the same idf, a shorter page. Ranking 4, 2, 1, 3 (no match:
    document order), so the edges get 4 and 2 and the middle 1 and 3: 4, 1, 3, 2."""
    doc = make_document(
        [
            "Macbeth is a tragedy.",
            "Hamlet was written by William Shakespeare.",
            "Othello is set in Venice.",
            "Denmark is a kingdom.",
        ],
        gold=[2],
        counts=[10, 10, 10, 10],
    )
    q = "Who wrote Hamlet in Denmark?"
    head, tail = (x.replace("Who wrote Hamlet?", q) for x in (HEAD, TAIL))
    p4 = "<PAGE 4>\nDenmark is a kingdom.\n</PAGE 4>"
    assert one("reorder", doc, question=q) == wrap(p4, P1, P3, P2, head=head, tail=tail)


def test_keyword_exact():
    """Context Overloading §4.4: the question goes with the chunk (about c tokens, between pages) sharing most keywords."""
    doc = make_document(
        [
            "Macbeth is a tragedy.",
            "Othello is set in Venice.",
            "Hamlet was written by William Shakespeare.",
            "Lear has three daughters.",
        ],
        gold=[3],
        counts=[10, 10, 10, 10],
    )
    prompts = get_strategy("keyword").first_prompts(doc, Q, {"c": 20})
    assert len(prompts) == 1 and prompts[0].label == "answer (chunk 2 of 2)"
    assert prompts[0].text == wrap(
        "<PAGE 3>\nHamlet was written by William Shakespeare.\n</PAGE 3>",
        "<PAGE 4>\nLear has three daughters.\n</PAGE 4>",
    )
