"""Render helpers: escaped highlighted prompts, short messages without secrets."""

import re

from components.core.documents import make_document
from components.strategies import get_strategy
from webapp.ui import render


def test_short_is_one_line_without_the_key():
    err = ValueError("401: bad key sk-abc-123456789\nTraceback (most recent call last): ...")
    msg = render.short(err, ("sk-abc-123456789",))
    assert msg == "401: bad key •••"
    assert render.short(RuntimeError()) == "RuntimeError"
    assert len(render.short("x" * 1000)) == render.MAX_MESSAGE


def test_prompt_html_escapes_and_highlights_every_span():
    doc = make_document(["Intro.", "<script>alert(1)</script> & friends", "End."], gold=(2,))
    prompt = get_strategy("reprompt").first_prompts(doc, "Which <b>page</b>?", {"r": 3})[0]
    out = render.prompt_html(prompt)
    assert "<script>" not in out and "&lt;script&gt;alert(1)&lt;/script&gt; &amp; friends" in out
    assert "<b>page</b>" not in out
    assert out.count("<span title=") == len(prompt.spans)
    assert out.count("<span") == out.count("</span>")
    assert 'title="gold page 2"' in out


def test_chunks_are_marked_with_badges():
    doc = make_document([f"Page {i} text " * 20 for i in range(1, 9)])
    prompts = get_strategy("chunked-icr").first_prompts(doc, "Which?", {"k": 1, "c": doc.tokens // 2})
    out = render.prompt_html(prompts[1])
    assert "chunk 2 starts" in out and "chunk 2 ends" in out


def test_pages_html_marks_hits_and_misses():
    out = render.pages_html((3, 5), (5, 9))
    assert "page 5 ✓ gold" in out and "page 3" in out and "missed gold: 9" in out


# remark-gfm's literal autolinks (mdast-util-gfm-autolink-literal): what Streamlit's markdown links.
GFM_URL = re.compile(r"(?i)(https?://|www(?=\.))[-.\w]+")
GFM_EMAIL = re.compile(r"[-.\w+]+@[-\w]+(?:\.[-\w]+)+")


def test_md_keeps_bare_urls_and_emails_from_becoming_links():
    text = "see http://evil.example/x, HTTPS://b.example, www.evil.example and bob@evil.example"
    out = render.md(text)
    unescaped = re.sub(r"\\(.)", r"\1", out)  # what markdown reads after the backslash escapes
    assert not GFM_URL.search(unescaped) and not GFM_EMAIL.search(unescaped)
    assert unescaped.replace(render.WORD_JOINER, "") == text  # shown as written
    assert render.md("a plain id: task-7") == "a plain id\\: task\\-7"  # nothing added where nothing links


def test_counts_read_in_the_right_number_and_parameters_in_plain_labels():
    """'1 page', '3 pages', never 'page(s)'; every strategy parameter's widget label reads as words,
    never 'chunk_tokens (tokens)'."""
    from components.strategies import STRATEGIES
    from webapp.services.names import count

    assert count(1, "page") == "1 page" and count(3, "page") == "3 pages" and count(0, "call") == "0 calls"
    assert count(1200, "trial") == "1,200 trials" and count(2, "reply", "replies") == "2 replies"
    titles = {p.title for s in STRATEGIES.values() for p in s.params}
    assert "chunk size (tokens)" in titles and "k (pages)" in titles
    assert not any("_" in t or "(tokens)" in t.split(" (", 1)[0] for t in titles), titles
