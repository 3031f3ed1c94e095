"""The prompt map: regions along the token axis, distances to the nearest instruction, the figure."""

from components.core.documents import make_document
from components.core.prompts import Prompt, Span
from components.report import promptmap
from components.strategies import get_strategy


def doc_of(n: int = 12, words: int = 60, gold=(6,)):
    texts = [f"Page {i} " + " ".join(f"w{i}x{j}" for j in range(words)) for i in range(1, n + 1)]
    return make_document(texts, gold=gold)


def test_gap_between_spans():
    a = Span("instruction", 0, 10, 0, 10)
    b = Span("page", 12, 20, 15, 40, page=1)
    assert promptmap.gap(a, b) == 5
    assert promptmap.gap(b, a) == 5
    assert promptmap.gap(a, Span("page", 5, 8, 5, 8, page=2)) == 0


def test_distances_by_hand():
    spans = (
        Span("instruction", 0, 1, 0, 10),
        Span("page", 1, 2, 10, 50, page=1),
        Span("page", 2, 3, 50, 100, page=2),
        Span("reminder", 3, 4, 100, 110),
        Span("gold", 4, 5, 110, 200, page=3),
        Span("page", 5, 6, 200, 300, page=4),
        Span("instruction", 6, 7, 310, 320),
    )
    p = Prompt(1, "x" * 7, 320, spans)
    assert promptmap.page_distances(p) == {1: 0, 2: 0, 3: 0, 4: 10}
    spans2 = (
        Span("instruction", 0, 1, 0, 10),
        Span("page", 1, 2, 30, 60, page=1),
        Span("page", 2, 3, 60, 90, page=2),
    )
    assert promptmap.page_distances(Prompt(1, "xxx", 90, spans2)) == {1: 20, 2: 50}
    assert promptmap.page_distances(Prompt(1, "x", 5, (Span("page", 0, 1, 0, 5, page=1),))) == {}


def test_reminders_shorten_the_distance_of_middle_pages():
    doc = doc_of(20)
    q = "What is w6x3?"
    base = get_strategy("baseline").first_prompts(doc, q, {})[0]
    rep = get_strategy("reprompt").first_prompts(doc, q, {"r": doc.tokens // 4})[0]
    d_base, d_rep = promptmap.page_distances(base), promptmap.page_distances(rep)
    assert set(d_base) == set(range(1, 21))
    middle = 10
    assert d_rep[middle] < d_base[middle]
    assert max(d_rep.values()) < max(d_base.values())
    assert d_base[1] == min(d_base.values())  # next to the opening instructions


def test_regions_and_gold_places():
    doc = doc_of(12)
    prompts = get_strategy("reprompt").first_prompts(doc, "Which page?", {"r": 300})
    rows = promptmap.regions(prompts)
    assert len(rows) == len(prompts[0].spans)
    kinds = {r.kind for r in rows}
    assert {"instruction", "reminder", "page", "gold"} <= kinds
    assert all(r.distance is not None for r in rows if r.kind in ("page", "gold"))
    assert all(r.distance is None for r in rows if r.kind in ("instruction", "reminder"))
    places = promptmap.gold_places(prompts)
    assert [g.page for g in places] == [6]
    gold_span = prompts[0].spans_of("gold")[0]
    assert places[0].start == gold_span.start_token


def test_chunked_prompts_have_one_row_and_one_chunk_each():
    doc = doc_of(24)
    prompts = get_strategy("chunked-icr").first_prompts(doc, "Which page?", {"k": 2, "c": doc.tokens // 3})
    assert len(prompts) >= 3
    rows = promptmap.regions(prompts)
    chunks = [r for r in rows if r.kind == "chunk"]
    assert [c.chunk for c in chunks] == list(range(1, len(prompts) + 1))
    assert [c.prompt for c in chunks] == list(range(len(prompts)))
    labels = promptmap.row_labels(prompts)
    assert labels[0].startswith("1. retrieve (chunk 1 of")
    fig = promptmap.figure(prompts, doc)
    chunk_trace = next(t for t in fig.data if t.name == "chunk")
    assert len(chunk_trace.x) == len(prompts)


def test_figure_traces_follow_the_legend_and_colours():
    doc = doc_of(12)
    prompts = get_strategy("reprompt").first_prompts(doc, "Which page?", {"r": 300})
    fig = promptmap.figure(prompts, doc)
    bars = {t.name: t for t in fig.data if t.type == "bar"}
    assert set(bars) == {"page", "instruction", "reminder", "gold page"}
    assert bars["instruction"].marker.color == promptmap.COLORS["instruction"]
    assert bars["gold page"].marker.color == promptmap.COLORS["gold"]
    assert any(t.name == "distance to nearest instruction" for t in fig.data)
    gold_bar = bars["gold page"]
    assert "gold page 6" in gold_bar.hovertext[0]
    assert "tokens from the nearest instruction" in gold_bar.hovertext[0]


def test_hover_text_is_escaped():
    texts = ["A normal page.", "<script>alert('x')</script> and <b>bold</b> & more", "Last page."]
    doc = make_document(texts, gold=(2,))
    prompts = get_strategy("baseline").first_prompts(doc, "What <i>is</i> it?", {})
    fig = promptmap.figure(prompts, doc, title="<img src=x onerror=alert(1)>")
    hover = " ".join(h for t in fig.data for h in (t.hovertext or ()))
    assert "<script>" not in hover and "&lt;script&gt;" in hover
    assert "<b>bold</b>" not in hover and "&lt;b&gt;bold&lt;/b&gt; &amp; more" in hover
    assert "<img" not in fig.layout.title.text


def test_prompt_without_pages_draws():
    doc = doc_of(5, gold=(2,))
    prompts = get_strategy("closed-book").first_prompts(doc, "Who?", {})
    fig = promptmap.figure(prompts, doc)
    assert fig.layout.height > 0


def test_token_counts_read_as_english():
    from components.report.promptmap import n_tokens

    assert [n_tokens(0), n_tokens(1), n_tokens(1873)] == ["0 tokens", "1 token", "1,873 tokens"]
