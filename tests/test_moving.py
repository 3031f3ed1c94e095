"""Moving the answer (sweepdocs.cell_document, sweepdocs.move_gold, positions.spread_indices and first_pages): the gold page moved as a sweep moves it, the five positions, first pages."""

import pytest

from components.core.cells import Cell
from components.core.documents import make_document
from components.core.positions import first_pages, spread_indices
from components.tasks.importers import read_tasks
from components.tasks.sweepdocs import build_by_index, cell_document, move_gold


def doc_with_gold(gold: int):
    texts = [f"Page {i} talks about item {i} at some length, " * 5 for i in range(1, 11)]
    return make_document(texts, gold=[gold], name="d")


@pytest.mark.parametrize("x,page", [(0.0, 1), (1.0, 10)])
def test_move_gold_to_an_edge_keeps_every_page_in_order(x, page):
    doc = doc_with_gold(4)
    moved = move_gold(doc, x).document
    assert moved.gold == (page,)
    assert moved.page(page).text == doc.page(4).text
    others = [p.text for p in moved.pages if p.number != page]
    assert others == [p.text for p in doc.pages if p.number != 4]
    assert moved.tokens == doc.tokens


def test_move_gold_to_the_middle_lands_near_the_middle():
    doc = doc_with_gold(1)
    moved = move_gold(doc, 0.5).document
    start = moved.offsets[moved.gold[0] - 1]
    assert abs(start - doc.tokens / 2) <= max(p.tokens for p in doc.pages)


def test_move_gold_needs_a_gold_page():
    with pytest.raises(ValueError, match="gold page"):
        move_gold(make_document(["a", "b"], gold=[]), 0.5)


def test_cell_document_is_the_sweeps_by_index_document():
    tasks = read_tasks("sample_docs/tasks/nq-open-30docs.jsonl.gz").tasks[:3]
    built = cell_document(tasks[1], Cell(documents=20, gold_index=9), encoding="cl100k_base", tasks=tasks)
    direct = build_by_index(tasks[1], 20, 9)
    assert built.document.gold == (10,) == direct.document.gold
    assert [p.text for p in built.document.pages] == [p.text for p in direct.document.pages]


def test_spread_indices_and_first_pages():
    assert spread_indices(20) == [0, 4, 9, 14, 19]  # LITM's indices for 20 documents
    assert spread_indices(10) == [0, 2, 4, 6, 9]
    assert spread_indices(3) == [0, 1, 2]
    assert spread_indices(1) == [0]
    assert first_pages((1, 2, 3)) and first_pages([1, 2, 3, 4, 5], k=5)
    assert not first_pages((1, 3, 2)) and not first_pages((2, 3, 4)) and not first_pages((1,))
    assert not first_pages((1, 2, 3), k=5) and not first_pages(None)
